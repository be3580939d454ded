//! The rule "one ABI adapter": in the host, only `host/src/plugins/abi/` mentions abi_stable
//! (tool-api is the crate of the boundary; everything else in the host speaks Rust types).

use super::tree::Tree;

/// Every file of the host outside the adapter that mentions abi_stable.
pub fn check(tree: &Tree) -> Vec<String> {
    tree.files()
        .filter(|(file, _)| {
            let name = file.to_string_lossy();
            name.starts_with("host/") && !name.starts_with("host/src/plugins/abi/")
        })
        .filter(|(_, text)| text.contains("abi_stable"))
        .map(|(file, _)| {
            format!(
                "{}: mentions abi_stable (only the ABI adapter, host/src/plugins/abi/, may)",
                file.display()
            )
        })
        .collect()
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
        ]);
        assert_eq!(
            check(&tree),
            [
                "host/sandbox/src/lib.rs: mentions abi_stable (only the ABI adapter, host/src/plugins/abi/, may)",
                "host/src/call/run.rs: mentions abi_stable (only the ABI adapter, host/src/plugins/abi/, may)",
            ]
        );
    }
}
