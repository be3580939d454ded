//! `toolhost replay` and `toolhost parse` over the real plugins: streamed partial blocks reach
//! the partial handlers before the complete block executes; executor rules apply.

use std::io::Write;
use std::process::Stdio;

use toolhost_tests::{run, toolhost, workdir, workspace_root, PluginDir};

fn replay(example: &str, cwd: &std::path::Path, extra: &[&str]) -> toolhost_tests::Run {
    let plugins = PluginDir::real();
    let file = workspace_root().join("host/examples").join(example);
    run(toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .arg("replay")
        .arg(file)
        .arg("--cwd")
        .arg(cwd)
        .args(extra))
}

fn position(lines: &[&str], wanted: impl Fn(&str) -> bool) -> usize {
    lines
        .iter()
        .position(|l| wanted(l))
        .unwrap_or_else(|| panic!("no such line in:\n{}", lines.join("\n")))
}

#[test]
fn the_edit_example_streams_partials_then_executes() {
    let ws = workdir();
    let result = replay("edit-a-file.txt", ws.path(), &["--yes"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let lines: Vec<&str> = result.stdout.lines().collect();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("src/greet.py")).unwrap(),
        "def greet(name):\n    return f\"Hello, {name}!\"\n"
    );
    let partial = position(&lines, |l| {
        l.starts_with("  [tool (partial)]") && l.contains("editedExistingFile")
    });
    let approval = position(&lines, |l| {
        l == "  [approval] replace_in_file wants to use src/greet.py: approved (--yes)"
    });
    let result_line = position(&lines, |l| {
        l.trim() == "[replace_in_file for 'src/greet.py'] Result:"
    });
    assert!(
        partial < approval && approval < result_line,
        "order: partial {partial}, approval {approval}, result {result_line}"
    );
    let read = position(&lines, |l| {
        l.trim() == "[read_file for 'src/greet.py'] Result:"
    });
    assert_eq!(lines[read + 1].trim(), "1 | def greet(name):");
    assert!(
        lines.contains(&"-- next user message: 4 block(s)"),
        "{}",
        result.stdout
    );
}

#[test]
fn without_yes_or_a_terminal_edits_are_denied_and_later_tools_skipped() {
    let ws = workdir();
    let result = replay("edit-a-file.txt", ws.path(), &[]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(!ws.path().join("src/greet.py").exists());
    let lines: Vec<&str> = result.stdout.lines().collect();
    let denied = position(&lines, |l| {
        l.trim() == "[write_to_file for 'src/greet.py'] Result:"
    });
    assert_eq!(lines[denied + 1].trim(), "The user denied this operation.");
    position(&lines, |l| {
        l.trim() == "Skipping tool due to user rejecting a previous tool. [replace_in_file for 'src/greet.py']"
    });
}

#[test]
fn mistakes_and_repeated_calls_are_counted() {
    let ws = workdir();
    let result = replay("mistakes.txt", ws.path(), &[]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let lines: Vec<&str> = result.stdout.lines().collect();
    let missing = position(&lines, |l| l.trim() == "[read_file for ''] Result:");
    assert_eq!(
        lines[missing + 1].trim(),
        "The tool execution failed with the following error:"
    );
    assert_eq!(
        lines[missing + 3].trim(),
        "Missing value for required parameter 'path'. Please retry with complete response."
    );
    position(&lines, |l| {
        l.starts_with("notice: Tool [read_file] has been called 3 times consecutively with identical arguments. This is not making progress.")
    });
    position(&lines, |l| {
        l.starts_with("notice: mistake_limit_reached: 4 consecutive mistakes (limit 3)")
    });
}

#[test]
fn parse_prints_blocks_as_json() {
    let mut child = toolhost()
        .arg("parse")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"Look.\n<read_file>\n<path>a.txt</path>\n</read_file>")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        r#"[{"type":"text","content":"Look.","partial":false},{"type":"tool_use","name":"read_file","params":{"path":"a.txt"},"partial":false,"isNativeToolCall":false}]"#
    );
}
