//! The rule "capabilities by constant": a capability string appears as a literal only where
//! `tool_api::model` defines its constant (outside test code).

use super::crates::Crate;

/// The capability strings.
const CAPABILITIES: [&str; 3] = ["dynamic_tools", "specs_from_environment", "mcp_servers"];

/// The files that may write them: their constants, and this rule.
const HOMES: [&str; 2] = [
    "tool-api/src/model/capabilities.rs",
    "xtask/src/tidy/capabilities.rs",
];

/// Every literal of the product's crates that is a capability string.
pub fn check(crates: &[Crate]) -> Vec<String> {
    let mut problems = Vec::new();
    for file in crates.iter().flat_map(|c| &c.files) {
        if HOMES.iter().any(|home| file.path.as_os_str() == *home) {
            continue;
        }
        for (literal, line) in &file.facts.literals {
            if CAPABILITIES.contains(&literal.as_str()) {
                problems.push(format!(
                    "{}:{line}: the capability \"{literal}\" as a literal (use its constant in tool_api::model)",
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

    #[test]
    fn a_capability_literal_outside_its_constant_fails() {
        let tree = Tree::of(&[
            (
                "tool-api/src/lib.rs",
                r#"pub mod model;
#[cfg(test)]
mod tests { const C: &str = "mcp_servers"; }"#,
            ),
            (
                "tool-api/src/model/capabilities.rs",
                r#"pub const DYNAMIC_TOOLS: &str = "dynamic_tools";"#,
            ),
            (
                "plugins/use_mcp_tool/src/lib.rs",
                r#"fn declare() -> Vec<String> {
    vec!["mcp_servers".into(), format!("{}", "dynamic_tools")]
}"#,
            ),
        ]);
        let crates: Vec<Crate> = ["tool-api/src/lib.rs", "plugins/use_mcp_tool/src/lib.rs"]
            .iter()
            .map(|root| Crate::load(&tree, Path::new(root)))
            .collect();
        assert_eq!(
            check(&crates),
            [
                "plugins/use_mcp_tool/src/lib.rs:2: the capability \"mcp_servers\" as a literal (use its constant in tool_api::model)",
                "plugins/use_mcp_tool/src/lib.rs:2: the capability \"dynamic_tools\" as a literal (use its constant in tool_api::model)",
            ]
        );
    }
}
