//! The command line's contract: exit codes, `--json`, parameters from stdin.

use std::io::Write;
use std::process::Stdio;

use serde_json::json;
use tool_api::texts::{missing_param_error, tool_error};
use toolhost_tests::{call_json, run, toolhost, tools_json, PluginDir};

#[test]
fn bad_usage_exits_two() {
    let plugins = PluginDir::real();
    let ws = tempfile::tempdir().unwrap();
    let base = |args: &[&str]| {
        run(toolhost()
            .arg("--plugins")
            .arg(plugins.path())
            .args(args)
            .arg("--cwd")
            .arg(ws.path()))
    };
    let unknown = base(&["call", "no_such_tool", "{}"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown
            .stderr
            .contains("no tool named 'no_such_tool' is loaded"),
        "{}",
        unknown.stderr
    );
    let malformed = base(&["call", "read_file", "{\"path\":"]);
    assert_eq!(malformed.code, 2);
    assert!(
        malformed
            .stderr
            .contains("the parameters are not valid JSON"),
        "{}",
        malformed.stderr
    );
    let not_object = base(&["call", "read_file", "[1,2]"]);
    assert_eq!(not_object.code, 2);
    assert!(
        not_object.stderr.contains("must be a JSON object"),
        "{}",
        not_object.stderr
    );
    assert_eq!(unknown.stdout, "");
}

#[test]
fn a_tool_error_exits_one_and_prints_the_model_text() {
    let plugins = PluginDir::real();
    let ws = tempfile::tempdir().unwrap();
    let missing = run(toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["call", "read_file", r#"{"path":"nope.txt"}"#, "--cwd"])
        .arg(ws.path()));
    assert_eq!(missing.code, 1);
    let absolute = ws.path().join("nope.txt");
    let expected = tool_error(&format!(
        "Error reading file: File not found: {}",
        absolute.display()
    ));
    assert_eq!(missing.stdout, expected);
}

#[test]
fn a_missing_parameter_is_reported_with_clines_text() {
    let plugins = PluginDir::real();
    let ws = tempfile::tempdir().unwrap();
    let (run, json) = call_json(plugins.path(), ws.path(), "read_file", &json!({}), &[]);
    assert_eq!(run.code, 1);
    assert_eq!(
        json,
        json!({"is_error": true, "text": tool_error(&missing_param_error("path")), "images": [], "error_kind": "invalid_params"})
    );
}

#[test]
fn parameters_can_come_from_stdin() {
    let plugins = PluginDir::real();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "x\ny\n").unwrap();
    let mut child = toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["call", "read_file", "-", "--cwd"])
        .arg(ws.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"path":"a.txt","start_line":2}"#)
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "2 | y\n\n(File has 2 lines total.)"
    );
}

#[test]
fn schemas_come_from_the_loaded_specs() {
    let plugins = PluginDir::empty();
    plugins
        .add_library("read_file")
        .add_library("write_to_file");
    let schema = |format: &str| {
        let result = run(toolhost()
            .arg("--plugins")
            .arg(plugins.path())
            .args(["schema", "--format", format]));
        assert_eq!(result.code, 0, "{}", result.stderr);
        result.stdout
    };
    let openai: serde_json::Value = serde_json::from_str(&schema("openai")).unwrap();
    let names: Vec<&str> = openai
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["new_rule", "read_file", "replace_in_file", "write_to_file"]
    );
    assert_eq!(openai[1]["type"], "function");
    assert_eq!(
        openai[1]["function"]["parameters"]["required"],
        json!(["path"])
    );
    let anthropic: serde_json::Value = serde_json::from_str(&schema("anthropic")).unwrap();
    assert_eq!(
        anthropic[1]["input_schema"]["properties"]["start_line"]["type"],
        "string"
    );
    let mcp: serde_json::Value = serde_json::from_str(&schema("mcp")).unwrap();
    assert_eq!(
        mcp[1]["annotations"],
        json!({"title": "Read file", "readOnlyHint": true, "destructiveHint": false,
               "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(mcp[1]["title"], "Read file");
    assert_eq!(
        mcp[3]["annotations"],
        json!({"title": "Write file", "readOnlyHint": false, "destructiveHint": true,
               "idempotentHint": true, "openWorldHint": false})
    );
    let prompt = schema("xml-prompt");
    assert!(
        prompt.starts_with("# Tools\n\n## new_rule\nDescription: "),
        "{prompt}"
    );
    assert!(prompt.contains("\n## read_file\nDescription: "));
    assert!(prompt.contains("- path: (required) "));
    assert!(prompt.contains("- start_line: (optional) "));
    assert!(prompt.contains("Usage:\n<read_file>\n<path>path here</path>\n<start_line>start_line here</start_line>\n<end_line>end_line here</end_line>\n</read_file>\n"));
}

#[test]
fn native_arguments_are_read_leniently_and_coerced_to_the_schema() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let (host, _ui) = crate::in_process::host(plugins.path(), ws.path());
    // JSON5 (single quotes, a trailing comma) and a number where the schema wants a string.
    let lenient = host.call("read_file", "{path: 'a.txt', start_line: 2,}");
    assert_eq!(
        lenient.model_text(),
        "2 | two\n3 | three\n\n(File has 3 lines total.)"
    );
    // A stream cut in the middle of the object still yields the complete pairs.
    let truncated = host.call("read_file", r#"{"path": "a.txt", "end_line": "1"#);
    assert_eq!(
        truncated.model_text(),
        "[File already read] The file 'a.txt' was already read earlier in this conversation. Returning content:\n1 | one\n\n(Showing lines 1-1 of 3 total. Use start_line=2 to continue reading.)"
    );
    let garbage = host.call("read_file", "certainly not arguments");
    assert!(
        garbage.model_text().contains("not a JSON object"),
        "{}",
        garbage.model_text()
    );
}

/// `toolhost tools` says which tools stream: read_file, list_files, search_files and
/// execute_command have partial handlers (Cline's UI while their blocks stream);
/// list_code_definition_names has none.
#[test]
fn tools_shows_the_streaming_tools_as_partial() {
    let plugins = PluginDir::real();
    let json = tools_json(plugins.path());
    let partial = |name: &str| {
        json["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed"))["partial"]
            .as_bool()
            .unwrap()
    };
    for name in ["read_file", "list_files", "search_files", "execute_command"] {
        assert!(partial(name), "{name}");
    }
    assert!(!partial("list_code_definition_names"));
}
