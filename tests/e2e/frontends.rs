//! The long-running frontends as a client meets them: what `serve` does with lines that are
//! not requests, refusing to serve nothing, what `mcp-servers` says of a failed server, and
//! command permissions, notifications, large-file ranges, invalid regexes and edits that
//! change nothing handled the same way through `call`, `serve` and `mcp`.

use std::path::Path;

use serde_json::{json, Value};
use toolhost_tests::session::{Frontend, Session};
use toolhost_tests::{run, toolhost, workdir, PluginDir};

fn started(plugins: &Path, ws: &Path, frontend: Frontend, extra: &[&str]) -> Session {
    let mut command = toolhost();
    command.arg("--plugins").arg(plugins);
    let cwd = ws.to_str().unwrap();
    let mut args = vec!["--cwd", cwd];
    args.extend_from_slice(extra);
    Session::start(command, frontend, &args)
}

#[test]
fn serve_answers_lines_that_are_not_requests_and_keeps_serving() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let ws = workdir();
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    let mut session = started(plugins.path(), ws.path(), Frontend::Serve, &[]);
    // Everything at once: the requests after the bad lines are already queued.
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"id\":1,\"tool\":\"read_file\",\"params\":{\"path\":\"a.txt\"}}\n");
    input.extend_from_slice(
        b"{\"id\":2,\"tool\":\"read_file\",\"params\":{\"path\":\"\xff\xfe.txt\"}}\n",
    );
    input.extend_from_slice(b"\xc3\x28 not even JSON\n");
    input.extend_from_slice(b"this is not JSON\n");
    input.extend_from_slice(
        b"{\"id\":5,\"tool\":\"read_file\",\"params\":{\"path\":\"a.txt\"}}\r\n",
    );
    session.send_raw(&input);
    let first = session.read_answer();
    assert_eq!(
        (first["id"].clone(), first["is_error"].clone()),
        (json!(1), json!(false))
    );
    let not_utf8 = session.read_answer();
    assert_eq!(not_utf8["id"], json!(2), "{not_utf8}");
    assert_eq!(
        not_utf8["error"],
        "not a JSON request: the line is not UTF-8 (invalid byte at offset 45)"
    );
    let garbled = session.read_answer();
    assert_eq!(garbled["id"], Value::Null, "{garbled}");
    assert!(
        garbled["error"].as_str().unwrap().contains("is not UTF-8"),
        "{garbled}"
    );
    let not_json = session.read_answer();
    assert_eq!(not_json["id"], Value::Null);
    assert!(
        not_json["error"]
            .as_str()
            .unwrap()
            .starts_with("not a JSON request: "),
        "{not_json}"
    );
    let last = session.read_answer();
    assert_eq!(last["id"], json!(5), "{last}");
    assert!(
        last["text"].as_str().unwrap().contains("1 | hello"),
        "{last}"
    );
    let (status, rest) = session.finish();
    assert!(status.success(), "{status}");
    assert_eq!(rest, "");
}

#[test]
fn serve_and_mcp_refuse_to_start_without_any_plugin() {
    let empty = PluginDir::empty();
    let ws = workdir();
    let missing = ws.path().join("no-such-dir");
    for frontend in [Frontend::Serve, Frontend::Mcp] {
        let got = run(toolhost()
            .arg("--plugins")
            .arg(empty.path())
            .args([frontend.command(), "--cwd"])
            .arg(ws.path()));
        assert_eq!(got.code, 2, "{frontend:?}: {got:?}");
        assert_eq!(got.stdout, "", "{frontend:?}");
        assert!(
            got.stderr.contains(&format!(
                "toolhost: no plugin was found in {} (--plugins), so there is no tool to serve",
                empty.path().display()
            )),
            "{frontend:?}: {}",
            got.stderr
        );
        let got = run(toolhost()
            .env(
                "TOOLHOST_PLUGIN_PATH",
                format!("{}:{}", missing.display(), empty.path().display()),
            )
            .args([frontend.command(), "--cwd"])
            .arg(ws.path()));
        assert_eq!(got.code, 2, "{frontend:?}: {got:?}");
        assert!(
            got.stderr.contains(&format!(
                "no plugin was found in {}, {} (TOOLHOST_PLUGIN_PATH)",
                missing.display(),
                empty.path().display()
            )),
            "{frontend:?}: {}",
            got.stderr
        );
    }
    // One library is enough, also one that serves only run-time tools.
    let plugins = PluginDir::empty();
    plugins.add_library("http_tools");
    for frontend in [Frontend::Serve, Frontend::Mcp] {
        let session = started(plugins.path(), ws.path(), frontend, &[]);
        let (status, _) = session.finish();
        assert!(status.success(), "{frontend:?}: {status}");
    }
}

#[test]
fn mcp_servers_shows_why_a_server_failed() {
    let plugins = PluginDir::empty();
    plugins.add_library("use_mcp_tool");
    let ws = workdir();
    let servers = ws.path().join("servers.json");
    std::fs::write(
        &servers,
        json!({"mcpServers": {
            "absent": {"command": ws.path().join("no-such-server").to_str().unwrap()},
            "quits": {"command": "sh", "args": ["-c", "echo cannot go on >&2; exit 3"]},
        }})
        .to_string(),
    )
    .unwrap();
    let settings = ws.path().join("settings.toml");
    std::fs::write(
        &settings,
        format!("[mcp]\nsettings_file = {:?}\n", servers.to_str().unwrap()),
    )
    .unwrap();
    let got = run(toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .arg("--settings")
        .arg(&settings)
        .arg("mcp-servers"));
    assert_eq!(got.code, 0, "{got:?}");
    for line in [
        "absent [failed] ",
        "    ! MCP server \"absent\" could not be started: No such file or directory (os error 2)\n",
        "quits [failed] sh -c echo cannot go on >&2; exit 3 (stdio)\n",
        "    ! Server stderr:\n    ! cannot go on\n",
    ] {
        assert!(got.stdout.contains(line), "{line:?} not in:\n{}", got.stdout);
    }
}

/// `cat < input.txt` with `cat *` and `echo hi > out.txt` with `echo *` run, as in Cline,
/// through every frontend; the redirect operand still cannot stand for a pattern's literal.
#[test]
fn redirect_operands_match_as_cline_joins_them_through_every_frontend() {
    let plugins = PluginDir::empty();
    plugins.add_library("execute_command");
    let policy = r#"{"allow":["cat *","echo *","npm test *"],"allowRedirects":true}"#;
    let params = |command: &str| json!({"command": command, "requires_approval": "false"});
    let check = |ws: &Path, via: &str, call: &mut dyn FnMut(Value) -> (bool, String)| {
        std::fs::write(ws.join("input.txt"), "from the file\n").unwrap();
        let (is_error, text) = call(params("cat < input.txt"));
        assert_eq!(
            (is_error, text.as_str()),
            (
                false,
                "Command executed successfully (exit code 0).\nOutput:\nfrom the file"
            ),
            "{via}"
        );
        let (is_error, text) = call(params("echo hi > out.txt"));
        assert!(!is_error, "{via}: {text}");
        assert_eq!(
            std::fs::read_to_string(ws.join("out.txt")).unwrap(),
            "hi\n",
            "{via}"
        );
        let (is_error, text) = call(params("npm >test publish"));
        assert!(
            is_error && text.contains("npm publish"),
            "{via}: {is_error} {text}"
        );
    };
    let ws = workdir();
    check(ws.path(), "call", &mut |params| {
        let got = run(toolhost()
            .env("CLINE_COMMAND_PERMISSIONS", policy)
            .arg("--plugins")
            .arg(plugins.path())
            .args([
                "call",
                "execute_command",
                &params.to_string(),
                "--yes",
                "--json",
                "--cwd",
            ])
            .arg(ws.path()));
        let json = got.json();
        (
            json["is_error"].as_bool().unwrap(),
            json["text"].as_str().unwrap().to_string(),
        )
    });
    for frontend in [Frontend::Serve, Frontend::Mcp] {
        let ws = workdir();
        let mut command = toolhost();
        command
            .env("CLINE_COMMAND_PERMISSIONS", policy)
            .arg("--plugins")
            .arg(plugins.path());
        let cwd = ws.path().to_str().unwrap();
        let mut session = Session::start(command, frontend, &["--cwd", cwd, "--yes"]);
        check(ws.path(), frontend.command(), &mut |params| {
            session.call("execute_command", params)
        });
    }
}

/// An auto-approved command still running after `notify_after_secs` (Cline: 30 s) tells the
/// user, when notifications are on: a line on stderr for `call` and `serve`, a
/// `notifications/message` for `mcp`. Off by default, as Cline's `enableNotifications`.
#[test]
fn a_command_still_running_is_a_notification_in_every_frontend() {
    let plugins = PluginDir::empty();
    plugins.add_library("execute_command");
    let ws = workdir();
    let settings_with = |notifications: bool| {
        let path = ws.path().join(format!("settings-{notifications}.toml"));
        std::fs::write(
            &path,
            format!(
                "[auto_approve]\nexecute_safe_commands = true\nenable_notifications = \
                 {notifications}\n[execute_command]\nnotify_after_secs = 1\n"
            ),
        )
        .unwrap();
        path
    };
    let notice = "Command is still running: An auto-approved command has been running for 1s, \
                  and may need your attention.";
    let slow = json!({"command": "sleep 2; echo done", "requires_approval": "false"});
    let quick = json!({"command": "echo quick", "requires_approval": "false"});
    for notifications in [true, false] {
        let settings = settings_with(notifications);
        let call = |params: &Value| {
            run(toolhost()
                .arg("--settings")
                .arg(&settings)
                .arg("--plugins")
                .arg(plugins.path())
                .args(["call", "execute_command", &params.to_string(), "--cwd"])
                .arg(ws.path()))
        };
        let got = call(&slow);
        assert_eq!(got.code, 0, "{got:?}");
        assert_eq!(
            got.stderr
                .contains(&format!("toolhost: notification: {notice}\n")),
            notifications,
            "{}",
            got.stderr
        );
        assert!(
            !call(&quick).stderr.contains("notification"),
            "a quick command"
        );
        for frontend in [Frontend::Serve, Frontend::Mcp] {
            let mut command = toolhost();
            command
                .arg("--settings")
                .arg(&settings)
                .arg("--plugins")
                .arg(plugins.path());
            let cwd = ws.path().to_str().unwrap();
            let mut session = Session::start(command, frontend, &["--cwd", cwd]);
            let (is_error, text) = session.call("execute_command", slow.clone());
            assert!(!is_error && text.ends_with("done"), "{frontend:?}: {text}");
            match frontend {
                Frontend::Serve => assert_eq!(
                    session.wait_for_stderr(notice, std::time::Duration::from_secs(2)),
                    notifications,
                    "{}",
                    session.stderr()
                ),
                Frontend::Mcp => {
                    let sent: Vec<Value> = session
                        .notifications()
                        .iter()
                        .filter(|n| n["method"] == "notifications/message")
                        .map(|n| n["params"].clone())
                        .collect();
                    let expected = if notifications {
                        vec![json!({"level": "notice", "logger": "toolhost", "data": notice})]
                    } else {
                        vec![]
                    };
                    assert_eq!(sent, expected);
                }
            }
            let (status, _) = session.finish();
            assert!(status.success(), "{frontend:?}: {status}");
        }
    }
}

/// Mistakes that used to look like success are errors the model reads, whatever the frontend:
/// an invalid regex (ripgrep's message), a patch with no file section, a diff with no
/// SEARCH/REPLACE block (the file unchanged).
#[test]
fn invalid_searches_and_empty_edits_are_errors_through_every_frontend() {
    let plugins = PluginDir::empty();
    for tool in ["search_files", "apply_patch", "write_to_file"] {
        plugins.add_library(tool);
    }
    let settings_dir = workdir();
    let settings = settings_dir.path().join("settings.toml");
    std::fs::write(&settings, "[auto_approve]\nedit_files = true\n").unwrap();
    let calls = [
        (
            "search_files",
            json!({"path": ".", "regex": "("}),
            "ripgrep process error: regex parse error:",
        ),
        (
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** End Patch"}),
            "*** Add File",
        ),
        (
            "replace_in_file",
            json!({"path": "a.txt", "diff": "just some text"}),
            "The diff contains no SEARCH/REPLACE block",
        ),
    ];
    let check = |via: &str, ws: &Path, call: &mut dyn FnMut(&str, Value) -> (bool, String)| {
        std::fs::write(ws.join("a.txt"), "unchanged\n").unwrap();
        for (tool, params, part) in &calls {
            let (is_error, text) = call(tool, params.clone());
            assert!(is_error && text.contains(part), "{via} {tool}: {text}");
        }
        assert_eq!(
            std::fs::read_to_string(ws.join("a.txt")).unwrap(),
            "unchanged\n"
        );
    };
    let ws = workdir();
    check("call", ws.path(), &mut |tool, params| {
        let got = run(toolhost()
            .arg("--plugins")
            .arg(plugins.path())
            .arg("--settings")
            .arg(&settings)
            .args(["call", tool, &params.to_string(), "--json", "--cwd"])
            .arg(ws.path()));
        let json = got.json();
        (
            json["is_error"].as_bool().unwrap(),
            json["text"].as_str().unwrap().to_string(),
        )
    });
    for frontend in [Frontend::Serve, Frontend::Mcp] {
        let ws = workdir();
        let mut command = toolhost();
        command
            .arg("--plugins")
            .arg(plugins.path())
            .arg("--settings")
            .arg(&settings);
        let cwd = ws.path().to_str().unwrap();
        let mut session = Session::start(command, frontend, &["--cwd", cwd]);
        check(frontend.command(), ws.path(), &mut |tool, params| {
            session.call(tool, params)
        });
    }
}

/// Any part of a large file is reachable in every frontend: on a 5,000-line file of 200-byte
/// lines, lines 2100-2102 come with their hint (the range is taken before the 400 KB cap).
#[test]
fn a_range_of_a_large_file_is_read_through_every_frontend() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let ws = workdir();
    let line = |n: usize| format!("{n:0>6}{}", "x".repeat(193));
    let content: String = (1..=5000).map(|n| line(n) + "\n").collect();
    std::fs::write(ws.path().join("big.txt"), &content).unwrap();
    let params = json!({"path": "big.txt", "start_line": "2100", "end_line": "2102"});
    let expected = format!(
        "2100 | {}\n2101 | {}\n2102 | {}\n\n(Showing lines 2100-2102 of 5000 total. Use \
         start_line=2103 to continue reading.)",
        line(2100),
        line(2101),
        line(2102)
    );
    let got = run(toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["call", "read_file", &params.to_string(), "--json", "--cwd"])
        .arg(ws.path()));
    assert_eq!(got.json()["text"], expected.as_str(), "call");
    for frontend in [Frontend::Serve, Frontend::Mcp] {
        let mut session = started(plugins.path(), ws.path(), frontend, &[]);
        assert_eq!(
            session.call("read_file", params.clone()),
            (false, expected.clone()),
            "{frontend:?}"
        );
    }
}
