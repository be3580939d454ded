//! The tools a subagent may call, as the model sees them, and the one-line preview of a call.
//!
//! The definitions are written here rather than taken from the host's `tools.list` (the served
//! tools' full specs, which spawn_agent offers): a research subagent gets a fixed read-only set,
//! whatever the host serves, with only the parameters it needs.

use agent_support::conversation::ToolDef;
use agent_support::cut;
use serde_json::{json, Map, Value};

/// The name that ends a subagent's run.
pub const ATTEMPT_COMPLETION: &str = "attempt_completion";

/// The default tool set of a subagent (Cline's), in the order it is offered.
pub const DEFAULT_TOOLS: [&str; 7] = [
    "read_file",
    "list_files",
    "search_files",
    "list_code_definition_names",
    "execute_command",
    "use_skill",
    ATTEMPT_COMPLETION,
];

/// Whether `name` is among the tools offered (and so may be called).
pub fn is_offered(tools: &[ToolDef], name: &str) -> bool {
    tools.iter().any(|tool| tool.name == name)
}

/// The definitions of [`DEFAULT_TOOLS`].
pub fn definitions() -> Vec<ToolDef> {
    DEFAULT_TOOLS.iter().map(|name| definition(name)).collect()
}

/// The definitions of a named agent's tools: the default set restricted to `agent_tools` (all of
/// it when empty), in the default order; attempt_completion is always offered.
pub fn definitions_for(agent_tools: &[String]) -> Vec<ToolDef> {
    DEFAULT_TOOLS
        .iter()
        .filter(|name| {
            agent_tools.is_empty()
                || **name == ATTEMPT_COMPLETION
                || agent_tools.iter().any(|t| t == *name)
        })
        .map(|name| definition(name))
        .collect()
}

fn definition(name: &'static str) -> ToolDef {
    let (description, params): (&str, &[(&str, &str, bool)]) = match name {
        "read_file" => (
            "Read a file's text, with line numbers. At most 1000 lines per call.",
            &[
                ("path", "The file, relative to the workspace.", true),
                ("start_line", "First line to read, 1-based.", false),
                ("end_line", "Last line to read, inclusive.", false),
            ],
        ),
        "list_files" => (
            "List the files and directories in a directory.",
            &[
                ("path", "The directory, relative to the workspace.", true),
                ("recursive", "\"true\" to list the whole tree below it.", false),
            ],
        ),
        "search_files" => (
            "Search files below a directory for a regular expression; matches come with context.",
            &[
                ("path", "The directory to search, relative to the workspace.", true),
                ("regex", "The regular expression (Rust syntax).", true),
                ("file_pattern", "A glob the files must match, e.g. *.rs.", false),
            ],
        ),
        "list_code_definition_names" => (
            "List the top-level definitions (functions, types, ...) of the source files in a directory.",
            &[("path", "The directory, relative to the workspace.", true)],
        ),
        "execute_command" => (
            "Run a shell command in the workspace. Use only commands that read, never ones that change anything.",
            &[
                ("command", "The command line.", true),
                ("requires_approval", "\"true\" if the command could change anything, else \"false\".", true),
            ],
        ),
        "use_skill" => (
            "Load the instructions of a named skill.",
            &[("skill_name", "The skill's name.", true)],
        ),
        _ => (
            "Finish: hand your findings to the main agent. This ends your run.",
            &[("result", "Your findings, ending with a \"Relevant file paths\" section.", true)],
        ),
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (param, about, is_required) in params {
        properties.insert(
            (*param).to_string(),
            json!({"type": "string", "description": about}),
        );
        if *is_required {
            required.push(json!(param));
        }
    }
    ToolDef {
        name: name.to_string(),
        description: description.to_string(),
        schema: json!({"type": "object", "properties": properties, "required": required}),
    }
}

/// Values longer than this are cut in a preview.
const PREVIEW_VALUE_CHARS: usize = 48;

/// Parameters shown in a preview; the rest are counted.
const PREVIEW_PARAMS: usize = 3;

/// Cline's `latestToolCall` preview: `tool(k=v, k=v, k=v, ...+n)`, each value with its
/// whitespace collapsed and cut at 48 characters with `...`.
pub fn preview(name: &str, args: &Map<String, Value>) -> String {
    let mut parts: Vec<String> = args
        .iter()
        .take(PREVIEW_PARAMS)
        .map(|(key, value)| {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("{key}={}", cut(&collapsed, PREVIEW_VALUE_CHARS))
        })
        .collect();
    if args.len() > PREVIEW_PARAMS {
        parts.push(format!("...+{}", args.len() - PREVIEW_PARAMS));
    }
    format!("{name}({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_default_set_is_allowed() {
        let tools = definitions();
        assert!(is_offered(&tools, "read_file"));
        assert!(is_offered(&tools, "attempt_completion"));
        assert!(!is_offered(&tools, "write_to_file"));
        assert!(!is_offered(&tools, "use_subagents"));
        let names: Vec<&str> = tools.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, DEFAULT_TOOLS.to_vec());
    }

    #[test]
    fn an_agent_gets_the_default_set_cut_to_its_list() {
        let names = |list: &[&str]| -> Vec<String> {
            let list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
            definitions_for(&list).into_iter().map(|d| d.name).collect()
        };
        assert_eq!(names(&[]), DEFAULT_TOOLS.to_vec());
        assert_eq!(
            names(&["write_to_file", "search_files", "read_file"]),
            ["read_file", "search_files", "attempt_completion"]
        );
    }

    #[test]
    fn definitions_list_required_parameters() {
        let search = definition("search_files");
        assert_eq!(search.schema["required"], json!(["path", "regex"]));
    }

    #[test]
    fn previews_show_three_parameters_and_count_the_rest() {
        let args = json!({"a": "one\n  two", "b": 7, "c": "x".repeat(60), "d": "", "e": ""});
        let Value::Object(args) = args else {
            unreachable!()
        };
        assert_eq!(
            preview("t", &args),
            format!("t(a=one two, b=7, c={}..., ...+2)", "x".repeat(48))
        );
        assert_eq!(preview("t", &Map::new()), "t()");
    }
}
