//! The rule "the host names no tool": no string literal of the host's code (`host/src`,
//! outside test code) is a tool name, except in `known_tools.rs`, the table of Cline's names.
//! What the host must know of a tool the tool's spec or manifest declares.

use super::crates::Crate;

/// The table of names, the one file of the host that may list them.
const KNOWN_TOOLS: &str = "host/src/known_tools.rs";

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

/// Every literal of the host's crates that is a tool name.
pub fn check(crates: &[Crate]) -> Vec<String> {
    let mut problems = Vec::new();
    let host = crates.iter().filter(|c| c.root.starts_with("host/src"));
    for file in host.flat_map(|c| &c.files) {
        if file.path.as_os_str() == KNOWN_TOOLS {
            continue;
        }
        for (literal, line) in &file.facts.literals {
            if TOOL_NAMES.contains(&literal.as_str()) {
                problems.push(format!(
                    "{}:{line}: names the tool \"{literal}\" (the host names no tool: declare it in the tool's spec)",
                    file.path.display()
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::tidy::tree::Tree;

    fn problems(files: &[(&str, &str)]) -> Vec<String> {
        let tree = Tree::of(files);
        check(&[Crate::load(&tree, Path::new("host/src/lib.rs"))])
    }

    #[test]
    fn a_tool_name_anywhere_in_the_hosts_code_fails() {
        let lib = r#"
mod known_tools;
mod call;
#[cfg(test)]
use std::fmt;
pub fn main() {
    let name = "read_file";
    println!("{}", "execute_command");
}
"#;
        let call = r##"
#[cfg(test)]
fn only_in_tests() -> &'static str { "new_task" }
pub const SKIP: &[&str] = &[r#"use_mcp_tool"#];
#[derive(Debug)]
#[serde(rename = "web_fetch")]
pub struct Call;
"##;
        assert_eq!(
            problems(&[
                ("host/src/lib.rs", lib),
                ("host/src/known_tools.rs", r#"pub const NAMES: &[&str] = &["read_file"];"#),
                ("host/src/call.rs", call),
            ]),
            [
                "host/src/call.rs:4: names the tool \"use_mcp_tool\" (the host names no tool: declare it in the tool's spec)",
                "host/src/call.rs:6: names the tool \"web_fetch\" (the host names no tool: declare it in the tool's spec)",
                "host/src/lib.rs:7: names the tool \"read_file\" (the host names no tool: declare it in the tool's spec)",
                "host/src/lib.rs:8: names the tool \"execute_command\" (the host names no tool: declare it in the tool's spec)",
            ]
        );
    }

    #[test]
    fn the_table_tests_docs_and_longer_strings_pass() {
        let lib = r#"
//! read_file
mod known_tools;
#[cfg(test)]
mod tests;
/// "read_file"
pub fn main() {
    let not_a_name = "read_file_twice";
    let said = "calls read_file";
}
#[cfg(test)]
fn helper() -> &'static str { "read_file" }
#[test]
fn t() { let _ = "write_to_file"; }
"#;
        assert!(problems(&[
            ("host/src/lib.rs", lib),
            (
                "host/src/known_tools.rs",
                r#"pub const NAMES: &[&str] = &["read_file"];"#
            ),
            ("host/src/tests.rs", r#"const T: &str = "read_file";"#),
        ])
        .is_empty());
    }
}
