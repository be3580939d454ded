//! The official MCP conformance suite's client scenarios against toolhost's MCP client (the
//! use_mcp_tool plugin): the suite starts each scenario's server and runs
//! `tests/conformance/mcp-client-runner`, which drives toolhost against it as a user would
//! (`toolhost schema` to connect and list, `toolhost serve --ask` to call, its user answering
//! the server's forms, `toolhost mcp-servers login` to sign in, the runner being the browser).
//! Every `auth/*` scenario of 2025-11-25 and 2026-07-28 (and the 2025-03-26 fallbacks) runs. No
//! expected failures.

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

/// The `auth/*` scenarios outside the suite `auth` of both versions: those of 2026-07-28 alone
/// and the 2025-03-26 fallbacks.
const AUTH_SCENARIOS: &[&str] = &[
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
];

#[test]
fn the_official_client_scenarios_pass_against_toolhosts_mcp_client() {
    let runs = SCENARIOS
        .iter()
        .chain(AUTH_SCENARIOS)
        .map(|scenario| vec!["--scenario", scenario]);
    let suites = ["2025-11-25", "2026-07-28"]
        .into_iter()
        .map(|version| vec!["--suite", "auth", "--spec-version", version]);
    run_all(runs.chain(suites));
}

/// Runs the suite's client command with each of `runs`' arguments; fails naming those that
/// failed, with their output.
fn run_all<'a>(runs: impl Iterator<Item = Vec<&'a str>>) {
    let (node, entry) = crate::mcp_conformance::suite();
    let plugins = PluginDir::empty();
    plugins.add_library("use_mcp_tool");
    let dir = workdir();
    let runner = workspace_root().join("tests/conformance/mcp-client-runner");
    let mut failed = Vec::new();
    for args in runs {
        let run = Command::new(&node)
            .arg(&entry)
            .arg("client")
            .args(&args)
            .arg("--command")
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
                "{}:\n{}{}",
                args.join(" "),
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
