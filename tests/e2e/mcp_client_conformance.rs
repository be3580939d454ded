//! The official MCP conformance suite's client scenarios against toolhost's MCP client (the
//! use_mcp_tool plugin): the suite starts each scenario's server and runs
//! `tests/conformance/mcp-client-runner`, which drives toolhost against it as a user would
//! (`toolhost schema` to connect and list, `toolhost serve --ask` to call, its user answering
//! the server's forms). No expected failures.

use std::process::Command;

use toolhost_tests::{toolhost_bin, workdir, workspace_root, PluginDir};

/// The client scenarios toolhost's client passes.
const SCENARIOS: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
];

#[test]
fn the_official_client_scenarios_pass_against_toolhosts_mcp_client() {
    let (node, entry) = crate::mcp_conformance::suite();
    let plugins = PluginDir::empty();
    plugins.add_library("use_mcp_tool");
    let dir = workdir();
    let runner = workspace_root().join("tests/conformance/mcp-client-runner");
    let mut failed = Vec::new();
    for scenario in SCENARIOS {
        let run = Command::new(&node)
            .arg(&entry)
            .args(["client", "--scenario", scenario, "--command"])
            .arg(&runner)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("TOOLHOST_BIN", toolhost_bin())
            .env("TOOLHOST_PLUGINS", plugins.path())
            .env("TOOLHOST_ISOLATION", "in-process")
            .output()
            .unwrap();
        if !run.status.success() {
            failed.push(format!(
                "{scenario}:\n{}{}",
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
