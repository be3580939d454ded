//! `cargo xtask tidy` (and the first step of `cargo xtask test`): the checks of the code's
//! shape that the compiler and clippy do not make.
//!
//! - **Size**: a source file of the product (the host, the command policy, tool-api, the
//!   plugins, xtask) stays within [`MAX_LINES`] lines, except the tables listed in
//!   [`LISTED_TABLES`].
//! - **The host names no tool**: no string literal in `host/src` outside `known_tools.rs` (and
//!   outside test modules) is a tool name; what the host must know of a tool its spec declares.
//! - **Capabilities by constant**: a capability string appears as a literal only where
//!   `tool_api::model` defines its constant.
//! - **One ABI adapter**: only `tool-api` and the host's `plugins/abi/` mention abi_stable.
//! - **No two sibling modules import each other** in a crate of the product (a parent and its
//!   child may).
//! - **ARCHITECTURE.md is true**: every path it names exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::util::workspace_root;

/// The line budget of one source file.
const MAX_LINES: usize = 500;

/// Files over the budget because they are tables, with what they hold.
const LISTED_TABLES: [(&str, &str); 2] = [
    (
        "host/command-policy/src/risky.rs",
        "the table of options that run code or write files, one entry per program",
    ),
    (
        "host/command-policy/src/wrappers.rs",
        "the table of commands that run commands, and how each reads its arguments",
    ),
];

/// The tool names of the bundled plugins (the host may name none of them).
const TOOL_NAMES: [&str; 27] = [
    "ask_followup_question",
    "attempt_completion",
    "execute_command",
    "replace_in_file",
    "read_file",
    "write_to_file",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "load_mcp_documentation",
    "new_task",
    "plan_mode_respond",
    "act_mode_respond",
    "focus_chain",
    "web_fetch",
    "web_search",
    "condense",
    "summarize_task",
    "report_bug",
    "new_rule",
    "apply_patch",
    "generate_explanation",
    "use_skill",
    "use_subagents",
];

/// The capability strings and the file that defines their constants.
const CAPABILITIES: [&str; 3] = ["dynamic_tools", "specs_from_environment", "mcp_servers"];
const CAPABILITY_HOME: &str = "tool-api/src/model.rs";

/// Runs every check; the error lists every problem found.
pub fn run() -> Result<(), String> {
    let root = workspace_root();
    let mut problems = Vec::new();
    let product = product_files(&root);
    problems.extend(sizes(&root, &product));
    problems.extend(tool_names(&root));
    problems.extend(capabilities(&root, &product));
    problems.extend(abi_adapter(&root, &product));
    for src in crate_sources(&root) {
        problems.extend(sibling_imports(&root, &src));
    }
    problems.extend(architecture_paths(&root));
    if problems.is_empty() {
        println!("tidy: ok ({} source files)", product.len());
        Ok(())
    } else {
        Err(format!("tidy found problems:\n  {}", problems.join("\n  ")))
    }
}

/// The product's Rust sources, relative to the root.
fn product_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["host", "tool-api/src", "plugins", "xtask/src"] {
        collect_rs(&root.join(dir), &mut files);
    }
    files
        .into_iter()
        .filter_map(|f| f.strip_prefix(root).ok().map(Path::to_path_buf))
        .filter(|f| !f.components().any(|c| c.as_os_str() == "target"))
        .collect()
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn read(root: &Path, file: &Path) -> String {
    std::fs::read_to_string(root.join(file)).unwrap_or_default()
}

/// The lines of a file before its test module, without comments.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .map(|(i, line)| (i + 1, line))
}

/// The string literals of a line (simple double-quoted ones).
fn literals(line: &str) -> Vec<&str> {
    line.split('"').skip(1).step_by(2).collect()
}

fn sizes(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let listed: BTreeMap<&str, &str> = LISTED_TABLES.into_iter().collect();
    files
        .iter()
        .filter_map(|file| {
            let lines = read(root, file).lines().count();
            let name = file.to_string_lossy();
            (lines > MAX_LINES && !listed.contains_key(name.as_ref())).then(|| {
                format!("{name}: {lines} lines, over the budget of {MAX_LINES} (split it, or list it as a table)")
            })
        })
        .collect()
}

fn tool_names(root: &Path) -> Vec<String> {
    let mut host_files = Vec::new();
    collect_rs(&root.join("host/src"), &mut host_files);
    let mut problems = Vec::new();
    for file in host_files {
        let relative = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        let name = relative.to_string_lossy();
        if name.ends_with("known_tools.rs") || name.ends_with("tests.rs") {
            continue;
        }
        let text = read(root, &relative);
        for (number, line) in code_lines(&text) {
            for literal in literals(line) {
                if TOOL_NAMES.contains(&literal) {
                    problems.push(format!(
                        "{name}:{number}: names the tool \"{literal}\" (the host names no tool: declare it in the tool's spec)"
                    ));
                }
            }
        }
    }
    problems
}

fn capabilities(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut problems = Vec::new();
    for file in files {
        let name = file.to_string_lossy();
        if name == CAPABILITY_HOME || name == "xtask/src/tidy.rs" {
            continue;
        }
        let text = read(root, file);
        for (number, line) in code_lines(&text) {
            for literal in literals(line) {
                if CAPABILITIES.contains(&literal) {
                    problems.push(format!(
                        "{name}:{number}: the capability \"{literal}\" as a literal (use its constant in tool_api::model)"
                    ));
                }
            }
        }
    }
    problems
}

fn abi_adapter(root: &Path, files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter(|file| {
            let name = file.to_string_lossy();
            name.starts_with("host/") && !name.starts_with("host/src/plugins/abi/")
        })
        .filter(|file| read(root, file).contains("abi_stable"))
        .map(|file| {
            format!(
                "{}: mentions abi_stable (only the ABI adapter, host/src/plugins/abi/, may)",
                file.display()
            )
        })
        .collect()
}

/// The module path of a source file below `src` (`call/mod.rs` → `call`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" && stem != "main" {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// The modules a file imports with `use crate::…` or `use super::…`, as module paths (the
/// longest prefix of each path that is a module of the crate).
fn imports(
    modules: &BTreeSet<Vec<String>>,
    module: &[String],
    text: &str,
) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    for line in text.lines().take_while(|l| l.trim() != "#[cfg(test)]") {
        let line = line.trim_start();
        let Some(path) = line
            .strip_prefix("use ")
            .or_else(|| line.strip_prefix("pub use "))
            .or_else(|| line.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let segments: Vec<&str> = path
            .split(['{', ';', ' ', ','])
            .next()
            .unwrap_or("")
            .split("::")
            .filter(|s| !s.is_empty())
            .collect();
        let mut absolute: Vec<String> = match segments.first() {
            Some(&"crate") => Vec::new(),
            Some(&"super") => {
                let mut parent = module.to_vec();
                parent.pop();
                parent
            }
            _ => continue,
        };
        for segment in &segments[1..] {
            absolute.push((*segment).to_string());
        }
        while !absolute.is_empty() && !modules.contains(&absolute) {
            absolute.pop();
        }
        if !absolute.is_empty() && absolute != module {
            found.insert(absolute);
        }
    }
    found
}

/// The `src` directories of the host, the command policy, tool-api and every plugin.
fn crate_sources(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![
        root.join("host/src"),
        root.join("host/command-policy/src"),
        root.join("tool-api/src"),
    ];
    if let Ok(entries) = std::fs::read_dir(root.join("plugins")) {
        let mut plugins: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path().join("src"))
            .filter(|p| p.is_dir())
            .collect();
        plugins.sort();
        dirs.extend(plugins);
    }
    dirs
}

fn sibling_imports(root: &Path, src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let names: BTreeSet<Vec<String>> = modules.keys().cloned().collect();
    let edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = modules
        .iter()
        .map(|(module, file)| {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            (module.clone(), imports(&names, module, &text))
        })
        .collect();
    let mut problems = Vec::new();
    for (a, targets) in &edges {
        for b in targets {
            let related = a.starts_with(b) || b.starts_with(a);
            if a < b && !related && edges.get(b).is_some_and(|t| t.contains(a)) {
                problems.push(format!(
                    "{}: `{}` and `{}` import each other",
                    src.strip_prefix(root).unwrap_or(src).display(),
                    a.join("::"),
                    b.join("::")
                ));
            }
        }
    }
    problems
}

fn architecture_paths(root: &Path) -> Vec<String> {
    let text = read(root, Path::new("ARCHITECTURE.md"));
    let mut problems = Vec::new();
    for token in text.split('`').skip(1).step_by(2) {
        let in_repository = ["host/", "tool-api/", "plugins/", "tests/", "xtask/"]
            .iter()
            .any(|top| token.starts_with(top));
        let looks_like_path = in_repository && !token.contains([' ', '<', '*']);
        if looks_like_path && !root.join(token).exists() {
            problems.push(format!(
                "ARCHITECTURE.md names `{token}`, which does not exist"
            ));
        }
    }
    problems
}
