//! ABI compatibility: a plugin built against the frozen copy of the first released tool-api
//! (tests/abi/tool-api-1.0.0) loads and runs in the current host.

use std::process::Command;

use toolhost_tests::{run, target_dir, toolhost, workdir, workspace_root};

#[test]
fn a_plugin_built_against_tool_api_1_0_0_loads_in_this_host() {
    let probe = workspace_root().join("tests/abi/probe");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let built = Command::new(cargo)
        .arg("build")
        .arg("--manifest-path")
        .arg(probe.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir().parent().unwrap())
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "building the probe failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let plugins = workdir();
    std::fs::copy(
        target_dir().join("libabi_probe_v1_0_0.so"),
        plugins.path().join("libabi_probe_v1_0_0.so"),
    )
    .unwrap();
    let ws = workdir();
    let call = run(toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["call", "abi_probe", r#"{"text":"hello"}"#, "--cwd"])
        .arg(ws.path()));
    assert_eq!(
        (call.code, call.stdout.as_str()),
        (0, "built against tool-api 1.0.0: hello"),
        "{}",
        call.stderr
    );
    let listing = run(toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["tools", "--json"]))
    .json();
    assert_eq!(listing["tools"][0]["abi_version"], "1.0.0");
    assert_eq!(listing["warnings"], serde_json::json!([]));
}
