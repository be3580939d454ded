//! The rule "one ABI adapter": in the host, only `host/src/plugins/abi/` mentions abi_stable
//! (tool-api is the crate of the boundary; everything else in the host speaks Rust types), and
//! the ABI's own types (`tool_api::abi`, its `ToolError`) appear only there and in the worker
//! protocol, which carries the ABI's error numbers on a worker's channel.

use super::tree::Tree;

/// The files besides the adapter that may name the ABI's types.
const ABI_TYPES_ALSO_IN: &[&str] = &["host/src/plugins/worker/protocol.rs"];

/// Every file of the host outside the adapter that mentions abi_stable or the ABI's types.
pub fn check(tree: &Tree) -> Vec<String> {
    let mut problems = Vec::new();
    for (file, text) in tree.files() {
        let name = file.to_string_lossy();
        if !name.starts_with("host/") || name.starts_with("host/src/plugins/abi/") {
            continue;
        }
        if text.contains("abi_stable") {
            problems.push(format!(
                "{name}: mentions abi_stable (only the ABI adapter, host/src/plugins/abi/, may)"
            ));
        }
        let abi_types = ["tool_api::abi", "ToolError"];
        if !ABI_TYPES_ALSO_IN.contains(&name.as_ref())
            && abi_types.iter().any(|abi_type| text.contains(abi_type))
        {
            problems.push(format!(
                "{name}: names the ABI's types (the host speaks CallError; only host/src/plugins/abi/ and the worker protocol convert)"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_adapter_and_tool_api_mention_abi_stable() {
        let tree = Tree::of(&[
            (
                "host/src/call/run.rs",
                "use abi_stable::std_types::RString;",
            ),
            (
                "host/sandbox/src/lib.rs",
                "// abi_stable is not for the sandbox",
            ),
            (
                "host/src/plugins/abi/library.rs",
                "use abi_stable::library;",
            ),
            ("tool-api/src/abi/mod.rs", "use abi_stable::StableAbi;"),
            ("host/src/plugins/handler.rs", "use crate::plugins::abi;"),
            (
                "host/src/call/outcome.rs",
                "use tool_api::abi::{ToolError, ToolErrorKind};",
            ),
            ("host/src/call/flow.rs", "fn f() -> ToolError { todo!() }"),
            (
                "host/src/plugins/worker/protocol.rs",
                "use tool_api::abi::ToolErrorKind;",
            ),
            (
                "host/src/plugins/abi/error.rs",
                "impl From<ToolError> for CallError {}",
            ),
        ]);
        assert_eq!(
            check(&tree),
            [
                "host/sandbox/src/lib.rs: mentions abi_stable (only the ABI adapter, host/src/plugins/abi/, may)",
                "host/src/call/flow.rs: names the ABI's types (the host speaks CallError; only host/src/plugins/abi/ and the worker protocol convert)",
                "host/src/call/outcome.rs: names the ABI's types (the host speaks CallError; only host/src/plugins/abi/ and the worker protocol convert)",
                "host/src/call/run.rs: mentions abi_stable (only the ABI adapter, host/src/plugins/abi/, may)",
            ]
        );
    }
}
