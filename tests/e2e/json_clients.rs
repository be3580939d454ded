//! Texts for clients whose model calls tools with JSON arguments (`serve`, `mcp`; `mcp` is in
//! `mcp_server.rs`, subagents in `subagents.rs`): reminders leave out the block that teaches
//! Cline's XML tool-call format; `call` and the XML sessions keep Cline's text.

use std::io::Write;
use std::process::Stdio;

use serde_json::{json, Value};
use tool_api::texts::{missing_param_error, missing_param_error_native, tool_error};
use toolhost_tests::{call_json, toolhost, workdir, PluginDir};

/// The answers of `toolhost serve` to `requests`, one line each.
fn serve(plugins: &PluginDir, cwd: &std::path::Path, requests: &[Value]) -> Vec<Value> {
    let mut child = toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["serve", "--cwd"])
        .arg(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolhost serve");
    let mut stdin = child.stdin.take().unwrap();
    for request in requests {
        writeln!(stdin, "{request}").unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn serve_leaves_the_xml_reminder_out_and_call_keeps_it() {
    let plugins = PluginDir::empty();
    plugins
        .add_library("read_file")
        .add_library("browser_action");
    let ws = workdir();
    let answers = serve(
        &plugins,
        ws.path(),
        &[
            // Missing before the plugin runs (the host's check) and inside it (browser_action's
            // own check of a parameter its schema cannot mark required: `url` for a launch).
            json!({"id": 1, "tool": "read_file", "params": {}}),
            json!({"id": 2, "tool": "browser_action", "params": {"action": "launch"}}),
        ],
    );
    assert_eq!(answers.len(), 2);
    assert_eq!(
        answers[0]["text"],
        tool_error(&missing_param_error_native("path"))
    );
    assert_eq!(
        answers[1]["text"],
        tool_error(&missing_param_error_native("url"))
    );
    for answer in &answers {
        assert_eq!(answer["is_error"], true);
        assert_eq!(answer["error_kind"], "invalid_params");
        assert!(!answer["text"].as_str().unwrap().contains("<tool_name>"));
    }
    // `call` prints what Cline's model reads, reminder included.
    let (_, called) = call_json(plugins.path(), ws.path(), "read_file", &json!({}), &[]);
    assert_eq!(called["text"], tool_error(&missing_param_error("path")));
    assert!(called["text"]
        .as_str()
        .unwrap()
        .contains("# Reminder: Instructions for Tool Use"));
}
