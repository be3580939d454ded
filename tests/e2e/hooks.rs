//! PreToolUse and PostToolUse hooks over a real plugin: a cancel denies the call (and the host
//! goes on), context is added around the result, the PostToolUse input carries the result.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;
use tool_api::texts::TOOL_DENIED;
use toolhost_tests::{workdir, PluginDir};

use crate::in_process;

fn install_hook(ws: &Path, name: &str, script: &str) {
    let dir = ws.join(".clinerules/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn workspace() -> (tempfile::TempDir, PluginDir) {
    let ws = workdir();
    std::fs::write(ws.path().join("ok.txt"), "fine\n").unwrap();
    std::fs::write(ws.path().join("blocked.txt"), "hidden\n").unwrap();
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    (ws, plugins)
}

#[test]
fn a_pre_tool_use_cancel_denies_the_call_and_context_is_added() {
    let (ws, plugins) = workspace();
    install_hook(
        ws.path(),
        "PreToolUse",
        r#"#!/bin/sh
input=$(cat)
case "$input" in
  *'"path":"blocked.txt"'*) echo 'checking...'; echo '{"cancel": true, "errorMessage": "blocked by hook"}' ;;
  *) echo '{"contextModification": "WORKSPACE_RULES: prefer tabs"}' ;;
esac
"#,
    );
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    let blocked = host.call("read_file", r#"{"path":"blocked.txt"}"#);
    assert_eq!(blocked.model_text(), TOOL_DENIED);
    let allowed = host.call("read_file", r#"{"path":"ok.txt"}"#);
    assert_eq!(
        allowed.model_text(),
        "<hook_context source=\"PreToolUse\" type=\"workspace_rules\">\nprefer tabs\n</hook_context>\n\n1 | fine\n\n(File has 1 lines total.)"
    );
}

#[test]
fn a_cancel_is_honoured_even_from_a_failing_script() {
    let (ws, plugins) = workspace();
    install_hook(
        ws.path(),
        "PreToolUse",
        "#!/bin/sh\necho '{\"cancel\": true}'\nexit 3\n",
    );
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    assert_eq!(
        host.call("read_file", r#"{"path":"ok.txt"}"#).model_text(),
        TOOL_DENIED
    );
}

#[test]
fn a_failing_script_without_an_answer_lets_the_call_through() {
    let (ws, plugins) = workspace();
    install_hook(
        ws.path(),
        "PreToolUse",
        "#!/bin/sh\necho oops >&2\nexit 1\n",
    );
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    assert_eq!(
        host.call("read_file", r#"{"path":"ok.txt"}"#).model_text(),
        "1 | fine\n\n(File has 1 lines total.)"
    );
}

#[test]
fn post_tool_use_sees_the_result() {
    let (ws, plugins) = workspace();
    let log = ws.path().join("post.json");
    install_hook(
        ws.path(),
        "PostToolUse",
        &format!(
            "#!/bin/sh\ncat > '{}'\necho '{{\"contextModification\": \"noted\"}}'\n",
            log.display()
        ),
    );
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    let outcome = host.call("read_file", r#"{"path":"ok.txt"}"#);
    assert_eq!(
        outcome.model_text(),
        "1 | fine\n\n(File has 1 lines total.)\n\n<hook_context source=\"PostToolUse\" type=\"general\">\nnoted\n</hook_context>"
    );
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(input["hookName"], "PostToolUse");
    assert_eq!(input["postToolUse"]["toolName"], "read_file");
    assert_eq!(input["postToolUse"]["parameters"]["path"], "ok.txt");
    assert_eq!(
        input["postToolUse"]["result"],
        "1 | fine\n\n(File has 1 lines total.)"
    );
    assert_eq!(input["postToolUse"]["success"], true);
    assert!(input["postToolUse"]["executionTimeMs"].is_u64());
}
