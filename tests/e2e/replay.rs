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
        l == "  [approval] Let replace_in_file change src/greet.py? approved (--yes)"
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
    assert_eq!(
        lines[denied + 1].trim(),
        toolhost_tests::nobody_to_ask("write_to_file", &["edit_files"])
    );
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

/// An assistant message with a listing, a read, a search and a command.
const EXPLORE_AND_RUN: &str = "Looking around.\n\n<list_files>\n<path>src</path>\n<recursive>true</recursive>\n</list_files>\n\n<read_file>\n<path>src/a.txt</path>\n</read_file>\n\n<search_files>\n<path>src</path>\n<regex>TODO</regex>\n<file_pattern>*.txt</file_pattern>\n</search_files>\n\n<execute_command>\n<command>echo streamed</command>\n<requires_approval>false</requires_approval>\n</execute_command>\n";

fn replay_message(ws: &std::path::Path, settings: Option<&str>) -> toolhost_tests::Run {
    let plugins = PluginDir::real();
    let message = ws.join("message.txt");
    std::fs::write(&message, EXPLORE_AND_RUN).unwrap();
    let mut command = toolhost();
    command.arg("--plugins").arg(plugins.path());
    if let Some(settings) = settings {
        let file = ws.join("settings.toml");
        std::fs::write(&file, settings).unwrap();
        command.arg("--settings").arg(file);
    }
    run(command
        .arg("replay")
        .arg(&message)
        .arg("--cwd")
        .arg(ws.join("project"))
        .args(["--chunk", "6"]))
}

fn explore_workspace() -> tempfile::TempDir {
    let ws = workdir();
    std::fs::create_dir_all(ws.path().join("project/src")).unwrap();
    std::fs::write(ws.path().join("project/src/a.txt"), "TODO one\n").unwrap();
    ws
}

#[test]
fn read_list_and_search_stream_what_they_will_touch_before_they_run() {
    let ws = explore_workspace();
    let result = replay_message(ws.path(), None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let lines: Vec<&str> = result.stdout.lines().collect();
    // The path streams in, then the complete call runs (reads are auto-approved by default).
    let listing = position(&lines, |l| {
        l == r#"  [tool (partial)] {"tool":"listFilesRecursive","path":"src","content":"","operationIsLocatedInWorkspace":true}"#
    });
    let listed = position(&lines, |l| l.trim() == "[list_files for 'src'] Result:");
    let reading = position(&lines, |l| {
        l == r#"  [tool (partial)] {"tool":"readFile","path":"src/a.txt","operationIsLocatedInWorkspace":true}"#
    });
    let read = position(&lines, |l| {
        l.trim() == "[read_file for 'src/a.txt'] Result:"
    });
    let searching = position(&lines, |l| {
        l == r#"  [tool (partial)] {"tool":"searchFiles","path":"src","content":"","regex":"TODO","filePattern":"*.txt","operationIsLocatedInWorkspace":true}"#
    });
    let searched = position(&lines, |l| {
        l.trim() == "[search_files for 'TODO' in '*.txt'] Result:"
    });
    assert!(
        listing < listed
            && listed < reading
            && reading < read
            && read < searching
            && searching < searched,
        "{}",
        result.stdout
    );
    // While the path streams, shorter versions of it were shown first.
    assert!(
        lines[..reading].iter().any(|l| l
            .starts_with(r#"  [tool (partial)] {"tool":"readFile","path":"src/a"#)
            && !l.contains(r#""path":"src/a.txt""#)),
        "{}",
        result.stdout
    );
    // The command is not auto-approved by default: it streams as a question, then is denied.
    let command = position(&lines, |l| l == "  [command (partial)] echo streamed");
    assert!(
        lines[..command]
            .iter()
            .any(|l| l.starts_with("  [command (partial)] echo s")),
        "{}",
        result.stdout
    );
    let denied = position(&lines, |l| {
        l.trim() == "[execute_command for 'echo streamed'] Result:"
    });
    assert!(command < denied);
    assert_eq!(
        lines[denied + 1].trim(),
        toolhost_tests::nobody_to_ask("execute_command", &["execute_safe_commands"])
    );
}

#[test]
fn an_auto_approved_command_waits_for_the_complete_block() {
    let ws = explore_workspace();
    let result = replay_message(
        ws.path(),
        Some("[auto_approve]\nexecute_safe_commands = true\n"),
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(
        !result.stdout.contains("[command (partial)]"),
        "{}",
        result.stdout
    );
    let lines: Vec<&str> = result.stdout.lines().collect();
    let ran = position(&lines, |l| {
        l.trim() == "[execute_command for 'echo streamed'] Result:"
    });
    assert_eq!(
        lines[ran + 1].trim(),
        "Command executed successfully (exit code 0)."
    );
}
