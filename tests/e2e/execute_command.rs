//! execute_command through the real plugin: exit codes and result texts, streaming, the line
//! limit, large output saved to a file, timeouts and cancellation stopping the whole process
//! group, refusals that never start the command, approval, and the read cache.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::CallOutcome;
use toolhost::ErrorKind;
use toolhost::Settings;
use toolhost_tests::{call_json, run, toolhost, workdir, PluginDir};

use crate::in_process::{self, RecordingUi};

fn plugins() -> PluginDir {
    let dir = PluginDir::empty();
    dir.add_library("execute_command");
    dir.add_library("read_file");
    dir
}

/// Settings that let commands the model marks as safe run without asking.
fn safe_commands(extra: &str) -> Settings {
    Settings::from_toml(&format!(
        "[auto_approve]\nexecute_safe_commands = true\n{extra}"
    ))
    .unwrap()
}

fn run_command(
    plugins: &Path,
    ws: &Path,
    settings: Settings,
    command: &str,
    timeout: Option<&str>,
) -> (CallOutcome, RecordingUi) {
    let (host, ui) = in_process::host_with(plugins, ws, settings);
    let mut params = json!({"command": command, "requires_approval": "false"});
    if let Some(timeout) = timeout {
        params["timeout"] = json!(timeout);
    }
    let outcome = host.call("execute_command", &params.to_string());
    (outcome, ui)
}

/// The live (not zombie) processes of a process group, from /proc.
fn live_members(pgid: u32) -> Vec<String> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            members.push(stat);
        }
    }
    members
}

fn pgid_after(prefix: &str, text: &str) -> u32 {
    text.lines()
        .find_map(|line| line.strip_prefix(prefix))
        .and_then(|rest| rest.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{prefix}<pid>` line in {text:?}"))
}

#[test]
fn exit_codes_and_result_texts() {
    let plugins = plugins();
    let ws = workdir();
    for (command, expected) in [
        (
            "echo hi",
            "Command executed successfully (exit code 0).\nOutput:\nhi",
        ),
        ("true", "Command executed successfully (exit code 0)."),
        (
            "echo out; echo err >&2; exit 3",
            "Command failed with exit code 3.\nOutput:\nout\nerr",
        ),
        ("kill -TERM $$", "Command terminated by signal SIGTERM."),
        (
            "printf 'a  \\nprompt $ '",
            "Command executed successfully (exit code 0).\nOutput:\na\nprompt",
        ),
        // Standard input is closed: `cat` ends at once.
        ("cat", "Command executed successfully (exit code 0)."),
        (
            "echo $PAGER $GIT_PAGER $MANPAGER",
            "Command executed successfully (exit code 0).\nOutput:\ncat cat cat",
        ),
    ] {
        let (outcome, _) = run_command(plugins.path(), ws.path(), safe_commands(""), command, None);
        assert_eq!(outcome.model_text(), expected, "{command}");
        assert!(!outcome.is_error(), "{command}");
    }
}

#[test]
fn the_command_runs_in_the_workspace() {
    let plugins = plugins();
    let ws = workdir();
    let real = std::fs::canonicalize(ws.path()).unwrap();
    let command = format!("cd {} && pwd -P", ws.path().display());
    let (outcome, _) = run_command(plugins.path(), ws.path(), safe_commands(""), &command, None);
    assert_eq!(
        outcome.model_text(),
        format!(
            "Command executed successfully (exit code 0).\nOutput:\n{}",
            real.display()
        )
    );
}

#[test]
fn output_is_streamed_as_it_comes() {
    let plugins = plugins();
    let ws = workdir();
    let (_, ui) = run_command(
        plugins.path(),
        ws.path(),
        safe_commands(""),
        "for i in $(seq 1 45); do echo line $i; done",
        None,
    );
    let expected: Vec<String> = (1..=45).map(|i| format!("line {i}")).collect();
    assert_eq!(ui.of_kind("command_output").join("\n"), expected.join("\n"));
    assert_eq!(
        ui.of_kind("command"),
        ["for i in $(seq 1 45); do echo line $i; done"]
    );
}

#[test]
fn output_is_cut_to_the_line_limit() {
    let plugins = plugins();
    let ws = workdir();
    let lines = |range: std::ops::RangeInclusive<u32>| {
        range.map(|n| n.to_string()).collect::<Vec<_>>().join("\n")
    };
    let (outcome, _) = run_command(
        plugins.path(),
        ws.path(),
        safe_commands(""),
        "seq 1 600",
        None,
    );
    assert_eq!(
        outcome.model_text(),
        format!(
            "Command executed successfully (exit code 0).\nOutput:\n{}\n... (output truncated) ...\n{}",
            lines(1..=250),
            lines(351..=600)
        )
    );
    let limited = safe_commands("[execute_command]\noutput_line_limit = 10\n");
    let (outcome, _) = run_command(plugins.path(), ws.path(), limited, "seq 1 30", None);
    assert_eq!(
        outcome.model_text(),
        format!(
            "Command executed successfully (exit code 0).\nOutput:\n{}\n... (output truncated) ...\n{}",
            lines(1..=5),
            lines(26..=30)
        )
    );
}

#[test]
fn large_output_is_saved_to_a_file() {
    let plugins = plugins();
    let ws = workdir();
    // The log lasts as long as its task: the host is kept until the log is read.
    let (host, ui) = in_process::host_with(plugins.path(), ws.path(), safe_commands(""));
    let params = json!({"command": "seq 1 1500", "requires_approval": "false"});
    let outcome = host.call("execute_command", &params.to_string());
    let text = outcome.model_text();
    let path = text
        .rsplit_once("\nFull output saved to: ")
        .map(|(_, path)| path.to_string())
        .unwrap_or_else(|| panic!("no file in {text:?}"));
    let lines = |range: std::ops::RangeInclusive<u32>| {
        range.map(|n| n.to_string()).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(
        text,
        format!(
            "Command executed successfully (exit code 0).\nOutput:\n{}\n\n... (1300 lines written to {path}) ...\n\n{}\nFull output saved to: {path}",
            lines(1..=100),
            lines(1401..=1500)
        )
    );
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(saved, format!("{}\n", lines(1..=1500)));
    let streamed = ui.of_kind("command_output");
    let notice = format!("\n📋 Output is large (1000 lines, 4KB). Writing to: {path}");
    assert_eq!(streamed.last(), Some(&notice));
    assert_eq!(streamed[..streamed.len() - 1].join("\n"), lines(1..=1000));
    drop(host);
    assert!(!Path::new(&path).exists(), "the log outlived its task");
}

#[test]
fn a_timeout_stops_the_whole_process_group() {
    let plugins = plugins();
    let ws = workdir();
    let (outcome, _) = run_command(
        plugins.path(),
        ws.path(),
        safe_commands(""),
        "sleep 300 & echo started $$; sleep 300",
        Some("1"),
    );
    let text = outcome.model_text();
    let pgid = pgid_after("started ", &text);
    assert_eq!(
        text,
        format!(
            "Command timed out after 1 seconds and was stopped.\nOutput so far:\nstarted {pgid}"
        )
    );
    assert_eq!(live_members(pgid), Vec::<String>::new());
}

#[test]
fn processes_left_behind_are_stopped_too() {
    let plugins = plugins();
    let ws = workdir();
    let (outcome, _) = run_command(
        plugins.path(),
        ws.path(),
        safe_commands(""),
        "sleep 300 & echo started $$",
        None,
    );
    let text = outcome.model_text();
    let pgid = pgid_after("started ", &text);
    assert_eq!(
        text,
        format!("Command executed successfully (exit code 0).\nOutput:\nstarted {pgid}")
    );
    assert_eq!(live_members(pgid), Vec::<String>::new());
}

#[test]
fn cancellation_stops_the_whole_process_group() {
    let plugins = plugins();
    let ws = workdir();
    let settings = safe_commands("[limits]\ncall_timeout_secs = 1\n");
    let (outcome, ui) = run_command(
        plugins.path(),
        ws.path(),
        settings,
        "echo started $$; sleep 300 & sleep 300",
        Some("100"),
    );
    let error = outcome.result.as_ref().err().unwrap();
    assert_eq!(error.kind, ErrorKind::Timeout);
    // The host gives up on the call at once; the plugin notices the cancellation on its own
    // thread and stops the group.
    let deadline = Instant::now() + Duration::from_secs(30);
    let pgid = loop {
        let streamed = ui.of_kind("command_output").join("\n");
        if streamed.starts_with("started ") {
            break pgid_after("started ", &streamed);
        }
        assert!(Instant::now() < deadline, "no output streamed");
        std::thread::sleep(Duration::from_millis(50));
    };
    while !live_members(pgid).is_empty() {
        assert!(
            Instant::now() < deadline,
            "still running: {:?}",
            live_members(pgid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_refused_command_is_never_started() {
    let plugins = plugins();
    let ws = workdir();
    let params =
        json!({"command": "touch marker; echo \"$(rm -rf x)\"", "requires_approval": "false"});
    let result = run(toolhost()
        .env(
            "CLINE_COMMAND_PERMISSIONS",
            r#"{"allow":["touch *","echo *"],"deny":["rm *"]}"#,
        )
        .arg("--plugins")
        .arg(plugins.path())
        .args([
            "call",
            "execute_command",
            &params.to_string(),
            "--yes",
            "--cwd",
        ])
        .arg(ws.path()));
    assert_eq!(result.code, 1, "{}", result.stderr);
    assert_eq!(
        result.stdout,
        "The tool execution failed with the following error:\n<error>\nCommand execution blocked \
         by CLINE_COMMAND_PERMISSIONS: Command \"touch marker; echo \"$(rm -rf x)\"\" was denied \
         by CLINE_COMMAND_PERMISSIONS. Segment \"rm -rf x\" segment_denied.. You must try a \
         different approach or ask the user to update the permission settings.\n</error>"
    );
    assert!(!ws.path().join("marker").exists());
}

#[test]
fn commands_needing_approval_are_denied_without_yes() {
    let plugins = plugins();
    let ws = workdir();
    let settings = ws.path().join("settings.toml");
    std::fs::write(&settings, "[auto_approve]\nexecute_safe_commands = true\n").unwrap();
    let call = |command: &str, requires_approval: &str, extra: &[&str]| {
        let params = json!({"command": command, "requires_approval": requires_approval});
        call_json(
            plugins.path(),
            ws.path(),
            "execute_command",
            &params,
            &[&["--settings", settings.to_str().unwrap()], extra].concat(),
        )
        .1
    };
    let json = call("touch safe", "false", &[]);
    assert_eq!(json["text"], "Command executed successfully (exit code 0).");
    assert!(ws.path().join("safe").exists());

    let json = call("touch risky", "true", &[]);
    assert_eq!(
        json["text"],
        toolhost_tests::nobody_to_ask(
            "execute_command",
            &["execute_safe_commands", "execute_all_commands"]
        )
    );
    assert_eq!(json["error_kind"], "denied");
    assert!(!ws.path().join("risky").exists());

    let json = call("touch risky", "TRUE", &["--yes"]);
    assert_eq!(json["text"], "Command executed successfully (exit code 0).");
    assert!(ws.path().join("risky").exists());

    // With default settings even a safe command needs someone to approve it.
    let params = json!({"command": "touch unasked", "requires_approval": "false"});
    let (_, json) = call_json(plugins.path(), ws.path(), "execute_command", &params, &[]);
    assert_eq!(
        json["text"],
        toolhost_tests::nobody_to_ask("execute_command", &["execute_safe_commands"])
    );
    assert!(!ws.path().join("unasked").exists());
}

#[test]
fn running_a_command_clears_the_read_cache() {
    let plugins = plugins();
    let ws = workdir();
    std::fs::write(ws.path().join("notes.txt"), "one\ntwo\n").unwrap();
    let (host, _) = in_process::host_with(plugins.path(), ws.path(), safe_commands(""));
    let read = || {
        host.call("read_file", &json!({"path": "notes.txt"}).to_string())
            .model_text()
    };
    let first = read();
    let second = read();
    assert_ne!(first, second, "the second read is marked as repeated");
    assert!(second.starts_with("[File already read]"), "{second}");
    let outcome = host.call(
        "execute_command",
        &json!({"command": "true", "requires_approval": "false"}).to_string(),
    );
    assert!(!outcome.is_error(), "{}", outcome.model_text());
    assert_eq!(read(), first);
}

#[test]
fn missing_parameters_are_mistakes() {
    let plugins = plugins();
    let ws = workdir();
    let (host, _) = in_process::host_with(plugins.path(), ws.path(), safe_commands(""));
    let outcome = host.call(
        "execute_command",
        &json!({"command": "touch x"}).to_string(),
    );
    assert!(outcome
        .model_text()
        .contains("Missing value for required parameter 'requires_approval'."));
    let outcome = host.call(
        "execute_command",
        &json!({"command": "", "requires_approval": "false"}).to_string(),
    );
    assert!(outcome
        .model_text()
        .contains("Missing value for required parameter 'command'."));
    assert_eq!(host.task().mistakes(), 2);
    assert!(!ws.path().join("x").exists());
}

#[test]
fn the_description_names_the_command() {
    let plugins = plugins();
    let ws = workdir();
    let (outcome, _) = run_command(
        plugins.path(),
        ws.path(),
        safe_commands(""),
        "echo hi",
        None,
    );
    assert_eq!(outcome.description, "[execute_command for 'echo hi']");
}
