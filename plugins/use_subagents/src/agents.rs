//! Named subagents from agent config files, each offered as its own `use_subagent_<name>` tool.
//!
//! The files live in `~/Documents/Cline/Agents/` (overridden by the environment variable
//! [`AGENTS_DIR_ENV`], since a plugin's specs are built before any settings can be read). They
//! are read once, when the plugin is loaded at host start; a changed file takes effect at the
//! next start (Cline watches the directory and reloads, this port does not).
//!
//! A file (`*.yaml` / `*.yml`, any case) is YAML front matter between `---` lines, then the
//! agent's system prompt:
//!
//! ```text
//! ---
//! name: DB Explorer
//! description: Maps database schema and migrations
//! tools: read_file, search_files, list_files
//! modelId: some-fast-model
//! ---
//! You investigate persistence layers.
//! ```
//!
//! `name`, `description` and a non-empty body are required; `tools` and `skills` are a comma
//! list or a YAML list; a tool id Cline does not know rejects the file. A file that cannot be
//! read or parsed is skipped.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use yaml_rust2::{Yaml, YamlLoader};

/// The environment variable naming the agent directory (instead of `~/Documents/Cline/Agents`).
pub const AGENTS_DIR_ENV: &str = "TOOLHOST_AGENTS_DIR";

/// The prefix of every named subagent tool.
pub const TOOL_PREFIX: &str = "use_subagent_";

/// The longest tool name (providers' limit).
pub const MAX_TOOL_NAME: usize = 64;

/// Cline's built-in tool ids: the ones an agent's `tools` list may name.
const KNOWN_TOOLS: [&str; 27] = [
    "ask_followup_question",
    "attempt_completion",
    "execute_command",
    "replace_in_file",
    "list_files",
    "list_code_definition_names",
    "read_file",
    "write_to_file",
    "plan_mode_respond",
    "act_mode_respond",
    "search_files",
    "new_task",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "load_mcp_documentation",
    "condense",
    "summarize_task",
    "report_bug",
    "new_rule",
    "web_fetch",
    "web_search",
    "apply_patch",
    "generate_explanation",
    "focus_chain",
    "use_skill",
    "use_subagents",
];

/// One agent config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// Its name as written (trimmed).
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The model id that replaces `llm.model` for its runs.
    pub model_id: Option<String>,
    /// The tool ids it may use; empty for the default set.
    pub tools: Vec<String>,
    /// The skills it names (kept for completeness: this port's subagent prompt lists no skills,
    /// so there is nothing to filter).
    pub skills: Vec<String>,
    /// Its system prompt: the file's body, trimmed.
    pub system_prompt: String,
}

/// An agent with the tool name it is offered under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedAgent {
    /// `use_subagent_<sanitised name>`, unique, at most [`MAX_TOOL_NAME`] characters.
    pub tool_name: String,
    /// The config.
    pub agent: Agent,
}

/// The agent directory: [`AGENTS_DIR_ENV`] when set, else `~/Documents/Cline/Agents`; `None`
/// when neither is known.
pub fn agents_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(AGENTS_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join("Documents/Cline/Agents"))
}

/// Every valid agent in `dir` with its tool name; a missing directory has none. Files are read
/// in name order; of two agents with the same name (ignoring case) the later file wins.
pub fn load(dir: &Path) -> Vec<NamedAgent> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && is_agent_file(p))
        .collect();
    files.sort();
    let mut agents = BTreeMap::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if let Ok(agent) = parse(&text) {
            agents.insert(agent.name.to_lowercase(), agent);
        }
    }
    name_tools(agents.into_values().collect())
}

fn is_agent_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

fn front_matter_pattern() -> Option<&'static Regex> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    PATTERN
        .get_or_init(|| Regex::new(r"^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$").ok())
        .as_ref()
}

/// One agent file's content; the error says why it is rejected.
pub fn parse(text: &str) -> Result<Agent, String> {
    let captures = front_matter_pattern()
        .and_then(|p| p.captures(text))
        .ok_or("no front matter")?;
    let (Some(yaml), Some(body)) = (captures.get(1), captures.get(2)) else {
        return Err("no front matter".to_string());
    };
    let docs = YamlLoader::load_from_str(yaml.as_str()).map_err(|e| e.to_string())?;
    let front = docs.into_iter().next().unwrap_or(Yaml::Null);
    let name = required_string(&front, "name")?;
    let description = required_string(&front, "description")?;
    let model_id = match &front["modelId"] {
        Yaml::BadValue | Yaml::Null => None,
        Yaml::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        _ => return Err("modelId is not a string".to_string()),
    };
    let tools = list(&front, "tools")?;
    if let Some(unknown) = tools.iter().find(|t| !KNOWN_TOOLS.contains(&t.as_str())) {
        return Err(format!("unknown tool '{unknown}'"));
    }
    let skills = list(&front, "skills")?;
    let system_prompt = body.as_str().trim().to_string();
    if system_prompt.is_empty() {
        return Err("the system prompt (the body) is empty".to_string());
    }
    Ok(Agent {
        name,
        description,
        model_id,
        tools,
        skills,
        system_prompt,
    })
}

fn required_string(front: &Yaml, key: &str) -> Result<String, String> {
    front[key]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| format!("{key} is missing"))
}

/// A comma string or a list of strings; absent is empty.
fn list(front: &Yaml, key: &str) -> Result<Vec<String>, String> {
    let items: Vec<String> = match &front[key] {
        Yaml::BadValue | Yaml::Null => Vec::new(),
        Yaml::String(s) => s.split(',').map(str::to_string).collect(),
        Yaml::Array(items) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("{key} holds a non-string"))?,
        _ => return Err(format!("{key} is not a list")),
    };
    Ok(items
        .into_iter()
        .map(|item| item.trim().to_string())
        .filter(|item| !item.is_empty())
        .collect())
}

/// The tool name of one agent name, before collisions: `use_subagent_<sanitised>`, cut to 64
/// characters with a hash suffix when longer (Cline's derivation).
pub fn tool_name(agent_name: &str) -> String {
    let sanitized = sanitize(agent_name);
    let base = format!("{TOOL_PREFIX}{sanitized}");
    if base.len() <= MAX_TOOL_NAME {
        return base;
    }
    let hash: String = fnv1a_base36(agent_name).chars().take(6).collect();
    let body_len = (MAX_TOOL_NAME - TOOL_PREFIX.len() - hash.len() - 1).max(1);
    // The sanitised name is ASCII, so byte positions are character positions.
    let body = &sanitized[..body_len.min(sanitized.len())];
    let mut name = format!("{TOOL_PREFIX}{body}_{hash}");
    name.truncate(MAX_TOOL_NAME);
    name
}

/// Lower-case; runs of anything but `[a-z0-9_]` become one `_`; `_` runs collapse; no `_` at
/// either end; `agent` when nothing is left.
fn sanitize(name: &str) -> String {
    static PATTERNS: OnceLock<Option<(Regex, Regex)>> = OnceLock::new();
    let lowered = name.trim().to_lowercase();
    let Some((other, underscores)) = PATTERNS
        .get_or_init(|| Some((Regex::new("[^a-z0-9_]+").ok()?, Regex::new("_+").ok()?)))
        .as_ref()
    else {
        return "agent".to_string();
    };
    let replaced = other.replace_all(&lowered, "_");
    let collapsed = underscores.replace_all(&replaced, "_");
    let trimmed = collapsed.trim_matches('_');
    if trimmed.is_empty() {
        "agent".to_string()
    } else {
        trimmed.to_string()
    }
}

/// FNV-1a (32 bit) over the UTF-16 code units of `value` (JavaScript's `charCodeAt`), in base 36.
/// Written out because the hash must match Cline's bit for bit, and it is five lines.
pub fn fnv1a_base36(value: &str) -> String {
    let mut hash: u32 = 2_166_136_261;
    for unit in value.encode_utf16() {
        hash ^= u32::from(unit);
        hash = hash.wrapping_mul(16_777_619);
    }
    if hash == 0 {
        return "0".to_string();
    }
    let mut digits = Vec::new();
    while hash > 0 {
        let digit = (hash % 36) as u8;
        digits.push(if digit < 10 {
            b'0' + digit
        } else {
            b'a' + digit - 10
        });
        hash /= 36;
    }
    digits.iter().rev().map(|&d| char::from(d)).collect()
}

/// Tool names for `agents` in their order; a name already taken gets `_2`, `_3`, ... (its base
/// cut so that the whole stays within 64 characters).
pub fn name_tools(agents: Vec<Agent>) -> Vec<NamedAgent> {
    let mut taken = HashSet::new();
    agents
        .into_iter()
        .map(|agent| {
            let base = tool_name(&agent.name);
            let mut name = base.clone();
            let mut n = 2;
            while taken.contains(&name) {
                let suffix = format!("_{n}");
                let keep = base.len().min(MAX_TOOL_NAME - suffix.len());
                name = format!("{}{suffix}", &base[..keep]);
                n += 1;
            }
            taken.insert(name.clone());
            NamedAgent {
                tool_name: name,
                agent,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn agent(name: &str) -> Agent {
        Agent {
            name: name.to_string(),
            description: "d".to_string(),
            model_id: None,
            tools: Vec::new(),
            skills: Vec::new(),
            system_prompt: "p".to_string(),
        }
    }

    #[test]
    fn the_example_file_parses() {
        let text = "---\nname: DB Explorer\ndescription: Maps database schema and migrations\n\
                    tools: read_file, search_files, list_files\nmodelId: some-fast-model\n---\n\
                    You investigate persistence layers.\n";
        assert_eq!(
            parse(text),
            Ok(Agent {
                name: "DB Explorer".to_string(),
                description: "Maps database schema and migrations".to_string(),
                model_id: Some("some-fast-model".to_string()),
                tools: vec![
                    "read_file".to_string(),
                    "search_files".to_string(),
                    "list_files".to_string()
                ],
                skills: Vec::new(),
                system_prompt: "You investigate persistence layers.".to_string(),
            })
        );
        assert_eq!(tool_name("DB Explorer"), "use_subagent_db_explorer");
    }

    #[test]
    fn lists_may_be_yaml_lists() {
        let text =
            "---\nname: a\ndescription: b\ntools: [read_file]\nskills:\n  - x\n  - y\n---\nbody";
        let parsed = parse(text).unwrap();
        assert_eq!(
            (parsed.tools, parsed.skills),
            (
                vec!["read_file".to_string()],
                vec!["x".to_string(), "y".to_string()]
            )
        );
    }

    #[test]
    fn bad_files_are_rejected() {
        assert_eq!(parse("no front matter"), Err("no front matter".to_string()));
        assert_eq!(
            parse("---\ndescription: b\n---\nbody"),
            Err("name is missing".to_string())
        );
        assert_eq!(
            parse("---\nname: a\ndescription: b\n---\n  \n"),
            Err("the system prompt (the body) is empty".to_string())
        );
        assert_eq!(
            parse("---\nname: a\ndescription: b\ntools: read_file, teleport\n---\nbody"),
            Err("unknown tool 'teleport'".to_string())
        );
    }

    #[test]
    fn names_are_sanitised_hashed_and_deduplicated() {
        assert_eq!(tool_name("  My -- Agent!! v2 "), "use_subagent_my_agent_v2");
        assert_eq!(tool_name("__"), "use_subagent_agent");
        let long = "x".repeat(70);
        let hash: String = fnv1a_base36(&long).chars().take(6).collect();
        let expected = format!(
            "use_subagent_{}_{hash}",
            "x".repeat(64 - 13 - 1 - hash.len())
        );
        assert_eq!(tool_name(&long), expected);
        assert_eq!(expected.len(), 64);
        let named: Vec<String> = name_tools(vec![agent("a b"), agent("a-b"), agent("A.B")])
            .into_iter()
            .map(|n| n.tool_name)
            .collect();
        assert_eq!(
            named,
            [
                "use_subagent_a_b",
                "use_subagent_a_b_2",
                "use_subagent_a_b_3"
            ]
        );
    }

    #[test]
    fn the_hash_is_fnv1a_in_base_36() {
        // Expected values computed independently (Python over UTF-16-LE code units).
        assert_eq!(fnv1a_base36(""), "ztntfp");
        assert_eq!(fnv1a_base36("a"), "1r9wi7g");
        // A surrogate pair hashes as two code units, as JavaScript's charCodeAt sees it.
        assert_eq!(fnv1a_base36("\u{e9}\u{1f600}"), "j37d7l");
    }
}
