//! list_files through the real plugin and the host's policies: every conformance case.

use serde_json::json;
use toolhost_tests::{cases, make_fixture, workdir, PluginDir};

use crate::in_process;

#[test]
fn conformance_cases() {
    let plugins = PluginDir::empty();
    plugins.add_library("list_files");
    let root = workdir();
    let mut fixtures = std::collections::HashMap::new();
    for case in cases("list_files") {
        let fixture = case.input["fixture"].as_str().unwrap().to_string();
        let cwd = fixtures
            .entry(fixture.clone())
            .or_insert_with(|| make_fixture(&fixture, root.path()))
            .clone();
        let mut params = json!({"path": case.input["path"]});
        if let Some(recursive) = case.input.get("recursive") {
            params["recursive"] = recursive.clone();
        }
        let (host, _ui) = in_process::host(plugins.path(), &cwd);
        let text = host.call("list_files", &params.to_string()).model_text();
        match case.expect["output"].as_str() {
            Some(expected) => assert_eq!(text, expected, "case {}", case.id),
            None => {
                // The entries shown depend on the order the file system returns them.
                let suffix = case.expect["output_suffix"].as_str().unwrap_or("");
                assert!(text.ends_with(suffix), "case {}: {text}", case.id);
                let body = &text[..text.len() - suffix.len()];
                assert_eq!(
                    body.lines().count() as u64,
                    case.expect["entries_shown"].as_u64().unwrap(),
                    "case {}",
                    case.id
                );
                assert_eq!(
                    text.contains("(File list truncated."),
                    case.expect["truncated"] == true,
                    "case {}",
                    case.id
                );
            }
        }
    }
}
