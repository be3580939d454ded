//! Plugin discovery and loading: every kind of bad library costs one warning and nothing else.

use serde_json::{json, Value};
use toolhost::ErrorKind;
use toolhost_tests::{call_json, run, toolhost, tools_json, PluginDir};

use crate::in_process;

/// A directory with one library for each load failure, plus a corrupt file and a non-library.
fn bad_plugins() -> PluginDir {
    let dir = PluginDir::empty();
    for name in [
        "fixture_not_a_plugin",
        "fixture_wrong_layout",
        "fixture_wrong_abi_version",
        "fixture_faulty",
        "fixture_duplicate",
        "fixture_needs_newer_host",
    ] {
        dir.add_library(name);
    }
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    dir.add_file("libcorrupt.so", &garbage);
    dir.add_file("README.txt", b"not a library, not even named like one");
    dir
}

#[test]
fn each_bad_library_costs_one_warning_and_the_rest_still_work() {
    let real = PluginDir::real();
    let bad = bad_plugins();
    let listing = run(toolhost()
        .arg("--plugins")
        .arg(real.path())
        .arg("--plugins")
        .arg(bad.path())
        .args(["tools", "--json"]));
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    let json = listing.json();

    let mut warnings: Vec<(String, String)> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let file = w["file"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string();
            (file, w["message"].as_str().unwrap().to_string())
        })
        .collect();
    warnings.sort();
    let expected = [
        ("libcorrupt.so", "not a loadable library: "),
        ("libfixture_duplicate.so", "tool 'read_file' is already provided by plugin 'read_file'"),
        (
            "libfixture_needs_newer_host.so",
            "needs a newer host: it needs teleportation of its host, which this toolhost",
        ),
        ("libfixture_not_a_plugin.so", "not a toolhost plugin (it exports no tool-api root module)"),
        (
            "libfixture_wrong_abi_version.so",
            "incompatible ABI version: built against tool-api 2.0.0, this host uses tool-api 1.0.0",
        ),
        (
            "libfixture_wrong_layout.so",
            "incompatible ABI layout: mismatched package (Expected: tool-api Found: fixture_wrong_layout)",
        ),
    ];
    assert_eq!(warnings.len(), expected.len(), "{warnings:#?}");
    for ((file, message), (want_file, want_message)) in warnings.iter().zip(expected) {
        assert_eq!(file, want_file);
        assert!(message.starts_with(want_message), "{file}: {message}");
    }
    // Each warning is printed on one line of stderr, naming the file.
    for (file, _) in &warnings {
        let lines = listing
            .stderr
            .lines()
            .filter(|l| l.contains(file.as_str()))
            .count();
        assert_eq!(lines, 1, "{file} in:\n{}", listing.stderr);
    }

    let tools: Vec<&Value> = json["tools"].as_array().unwrap().iter().collect();
    let plugin_of = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["plugin"].as_str().unwrap().to_string())
    };
    assert_eq!(
        plugin_of("read_file").as_deref(),
        Some("read_file"),
        "the first registration wins"
    );
    assert_eq!(
        plugin_of("fixture_echo").as_deref(),
        Some("fixture_duplicate"),
        "the loser's other names register"
    );
    assert_eq!(
        plugin_of("fixture_panic").as_deref(),
        Some("fixture_faulty")
    );

    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let (read, out) = call_json_two_dirs(
        &real,
        &bad,
        ws.path(),
        "read_file",
        &json!({"path": "a.txt"}),
    );
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_eq!(out["text"], "1 | one\n\n(File has 1 lines total.)");
    let (echo, out) = call_json_two_dirs(
        &real,
        &bad,
        ws.path(),
        "fixture_echo",
        &json!({"text": "hi"}),
    );
    assert_eq!(echo.code, 0, "{}", echo.stderr);
    assert_eq!(out["text"], "echo: hi");
}

fn call_json_two_dirs(
    a: &PluginDir,
    b: &PluginDir,
    cwd: &std::path::Path,
    tool: &str,
    params: &Value,
) -> (toolhost_tests::Run, Value) {
    let run = run(toolhost()
        .arg("--plugins")
        .arg(a.path())
        .arg("--plugins")
        .arg(b.path())
        .args(["call", tool, &params.to_string(), "--json", "--cwd"])
        .arg(cwd));
    let json = run.json();
    (run, json)
}

#[test]
fn a_panicking_tool_is_a_tool_error_and_disables_its_plugin() {
    let plugins = PluginDir::empty();
    plugins
        .add_library("fixture_faulty")
        .add_library("read_file");
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let (host, _ui) = in_process::host(plugins.path(), ws.path());

    let first = host.call("fixture_panic", "{}");
    let error = first.result.as_ref().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Panic);
    assert!(
        error
            .message
            .as_str()
            .starts_with("The tool panicked: fixture tool panicked on purpose"),
        "{}",
        error.message
    );

    let second = host.call("fixture_panic", "{}");
    let text = second.model_text();
    assert!(
        text.contains("The plugin 'fixture_faulty' that provides fixture_panic was disabled"),
        "{text}"
    );

    let read = host.call("read_file", r#"{"path":"a.txt"}"#);
    assert_eq!(read.model_text(), "1 | one\n\n(File has 1 lines total.)");
}

#[test]
fn a_panic_through_the_cli_exits_one_with_the_error_text() {
    let plugins = PluginDir::empty();
    plugins.add_library("fixture_faulty");
    let ws = tempfile::tempdir().unwrap();
    let (run, json) = call_json(plugins.path(), ws.path(), "fixture_panic", &json!({}), &[]);
    assert_eq!(run.code, 1);
    assert_eq!(json["is_error"], true);
    assert!(json["text"]
        .as_str()
        .unwrap()
        .contains("fixture tool panicked on purpose"));
}

#[test]
fn every_real_plugin_comes_from_its_own_library() {
    let real = PluginDir::real();
    let json = tools_json(real.path());
    assert_eq!(json["warnings"], json!([]));
    let tools = json["tools"].as_array().unwrap();
    for tool in tools {
        let library = tool["library"].as_str().unwrap();
        let plugin = tool["plugin"].as_str().unwrap();
        assert!(
            library.ends_with(&format!("/lib{plugin}.so")),
            "{library} for {plugin}"
        );
    }
    let handler = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not registered"))["handler_id"]
            .clone()
    };
    assert_eq!(handler("write_to_file"), handler("replace_in_file"));
    assert_eq!(handler("write_to_file"), handler("new_rule"));
    assert_ne!(handler("write_to_file"), handler("read_file"));
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for name in [
        "read_file",
        "write_to_file",
        "replace_in_file",
        "new_rule",
        "list_files",
        "ask_followup_question",
        "attempt_completion",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
}

#[test]
fn a_hung_call_times_out_and_the_host_goes_on() {
    let plugins = PluginDir::empty();
    plugins
        .add_library("fixture_faulty")
        .add_library("read_file");
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let settings = toolhost::Settings::from_toml("[limits]\ncall_timeout_secs = 1\n").unwrap();
    let (host, _ui) = in_process::host_with(plugins.path(), ws.path(), settings);
    let started = std::time::Instant::now();
    let hung = host.call("fixture_hang", "{}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the timeout did not fire"
    );
    let error = hung.result.as_ref().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Timeout);
    assert_eq!(
        error.message.as_str(),
        "The tool did not finish within 1 seconds and was cancelled."
    );
    assert_eq!(
        host.call("read_file", r#"{"path":"a.txt"}"#).model_text(),
        "1 | one\n\n(File has 1 lines total.)"
    );
}

#[test]
fn a_call_given_up_at_its_timeout_keeps_no_hold_on_its_task() {
    let plugins = PluginDir::empty();
    plugins.add_library("fixture_faults");
    let ws = tempfile::tempdir().unwrap();
    let settings = toolhost::Settings::from_toml("[limits]\ncall_timeout_secs = 1\n").unwrap();
    let (host, _ui) = in_process::host_with(plugins.path(), ws.path(), settings);
    // Sleeps a minute whatever happens: still running when the task ends.
    let hung = host.call("fault_sleep", "{}");
    assert_eq!(hung.result.unwrap_err().kind, ErrorKind::Timeout);
    let task = std::sync::Arc::downgrade(&host);
    drop(host);
    assert!(
        task.upgrade().is_none(),
        "the abandoned call still holds the task (its task_ended would wait for the handler)"
    );
}

#[test]
fn tools_calling_tools_go_through_the_same_policies() {
    let plugins = PluginDir::empty();
    plugins
        .add_library("fixture_faulty")
        .add_library("read_file");
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    std::fs::write(root.path().join("secret.txt"), "secret\n").unwrap();
    let (host, _ui) = in_process::host(plugins.path(), &ws);
    let inside = host.call(
        "fixture_invoke",
        &json!({"tool": "read_file", "params": r#"{"path":"a.txt"}"#}).to_string(),
    );
    assert_eq!(inside.model_text(), "1 | one\n\n(File has 1 lines total.)");
    let outside = host.call(
        "fixture_invoke",
        &json!({"tool": "read_file", "params": r#"{"path":"../secret.txt"}"#}).to_string(),
    );
    assert_eq!(
        outside.model_text(),
        toolhost_tests::nobody_to_ask("read_file", &["read_files", "read_files_externally"])
    );
}

#[test]
fn plugins_run_async_code_on_their_own_runtime() {
    let plugins = PluginDir::empty();
    plugins.add_library("fixture_faulty");
    let ws = tempfile::tempdir().unwrap();
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    assert_eq!(
        host.call("fixture_async", "{}").model_text(),
        "slept on plugin-rt"
    );
    assert_eq!(
        host.call("fixture_async", "{}").model_text(),
        "slept on plugin-rt"
    );
    host.registry().shutdown();
}
