//! PreToolUse and PostToolUse hooks over a real plugin: a cancel denies the call (and the host
//! goes on), context is added around the result, the PostToolUse input carries the result.
//! Workspace scripts run only once trusted (path and SHA-256), global ones always: tested with
//! real scripts in real `toolhost` processes whose home, config directory and trust file are
//! temporary directories.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tool_api::model::{AskReply, AskResponse};
use tool_api::texts::TOOL_DENIED;
use toolhost::ApprovalMode;
use toolhost::ScriptVersion;
use toolhost::Settings;
use toolhost::TrustStore;
use toolhost::Ui;
use toolhost_tests::{install_script, run, toolhost, workdir, PluginDir, Run};

use crate::in_process;

/// Installs an executable workspace hook script and returns its path.
fn install_hook(ws: &Path, name: &str, script: &str) -> PathBuf {
    install_script(&ws.join(".clinerules/hooks"), name, script)
}

/// Settings whose trust file (in `config`) trusts `scripts` as they are now.
///
/// The protocol tests below predate trust in workspace hooks; they pre-trust their scripts
/// this way, so that what they assert stays what it was.
fn trusting(config: &Path, scripts: &[&Path]) -> Settings {
    let store = TrustStore::new(Some(config.join("trusted-hooks.json")));
    let versions: Vec<ScriptVersion> = scripts
        .iter()
        .map(|path| ScriptVersion::read(path).unwrap())
        .collect();
    store.trust(&versions.iter().collect::<Vec<_>>()).unwrap();
    let mut settings = Settings::default();
    settings.hooks.trust_file = store.file().map(Path::to_path_buf);
    settings
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
    let hook = install_hook(
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
    let config = workdir();
    let settings = trusting(config.path(), &[&hook]);
    let (host, _ui) = in_process::host_with(plugins.path(), ws.path(), settings);
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
    let hook = install_hook(
        ws.path(),
        "PreToolUse",
        "#!/bin/sh\necho '{\"cancel\": true}'\nexit 3\n",
    );
    let config = workdir();
    let settings = trusting(config.path(), &[&hook]);
    let (host, _ui) = in_process::host_with(plugins.path(), ws.path(), settings);
    assert_eq!(
        host.call("read_file", r#"{"path":"ok.txt"}"#).model_text(),
        TOOL_DENIED
    );
}

#[test]
fn a_failing_script_without_an_answer_lets_the_call_through() {
    let (ws, plugins) = workspace();
    let hook = install_hook(
        ws.path(),
        "PreToolUse",
        "#!/bin/sh\necho oops >&2\nexit 1\n",
    );
    let config = workdir();
    let settings = trusting(config.path(), &[&hook]);
    let (host, _ui) = in_process::host_with(plugins.path(), ws.path(), settings);
    assert_eq!(
        host.call("read_file", r#"{"path":"ok.txt"}"#).model_text(),
        "1 | fine\n\n(File has 1 lines total.)"
    );
}

#[test]
fn post_tool_use_sees_the_result() {
    let (ws, plugins) = workspace();
    let log = ws.path().join("post.json");
    let hook = install_hook(
        ws.path(),
        "PostToolUse",
        &format!(
            "#!/bin/sh\ncat > '{}'\necho '{{\"contextModification\": \"noted\"}}'\n",
            log.display()
        ),
    );
    let config = workdir();
    let settings = trusting(config.path(), &[&hook]);
    let (host, _ui) = in_process::host_with(plugins.path(), ws.path(), settings);
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

/// What `read_file` of `ok.txt` returns, with no hook context.
const OK_TEXT: &str = "1 | fine\n\n(File has 1 lines total.)";

/// The context the marker scripts add before the result.
const MARKER_CONTEXT: &str =
    "<hook_context source=\"PreToolUse\" type=\"general\">\nhook ran\n</hook_context>";

/// How the warning about a script that did not run begins.
const NOT_RUNNING: &str = "not running the workspace hook";

/// A script that creates `marker` and adds `hook ran` as context.
fn marker_script(marker: &Path) -> String {
    format!(
        "#!/bin/sh\ncat > /dev/null\ntouch '{}'\necho '{{\"contextModification\": \"hook ran\"}}'\n",
        marker.display()
    )
}

/// A user's temporary home and config directory, for `toolhost` processes: the real home's
/// hooks and trust file are never seen.
struct User {
    home: tempfile::TempDir,
    config: tempfile::TempDir,
}

impl User {
    fn new() -> Self {
        Self {
            home: workdir(),
            config: workdir(),
        }
    }

    /// `toolhost` with this home and config directory (the default trust file lives there).
    fn toolhost(&self) -> Command {
        let mut command = toolhost();
        command
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.config.path());
        command
    }

    /// The default trust file.
    fn trust_file(&self) -> PathBuf {
        self.config.path().join("toolhost/trusted-hooks.json")
    }

    /// `toolhost call read_file {"path":"ok.txt"} --cwd WS --json [extra]`.
    fn read_ok(&self, plugins: &Path, ws: &Path, extra: &[&str]) -> (Run, Value) {
        let run = run(self
            .toolhost()
            .arg("--plugins")
            .arg(plugins)
            .args([
                "call",
                "read_file",
                r#"{"path":"ok.txt"}"#,
                "--json",
                "--cwd",
            ])
            .arg(ws)
            .args(extra));
        let json = run.json();
        (run, json)
    }

    /// `toolhost hooks ARGS`.
    fn hooks(&self, args: &[&str]) -> Run {
        run(self.toolhost().arg("hooks").args(args))
    }

    /// `toolhost hooks list --cwd WS --json`: the status of each script, by path.
    fn statuses(&self, ws: &Path) -> Vec<(String, String, String)> {
        let list = self.hooks(&["list", "--json", "--cwd", ws.to_str().unwrap()]);
        assert_eq!(list.code, 0, "{}", list.stderr);
        list.json()["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["origin"].as_str().unwrap().to_string(),
                    h["status"].as_str().unwrap().to_string(),
                    h["path"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

#[test]
fn an_untrusted_workspace_hook_does_not_run_without_approval_and_is_warned_about_once() {
    let (ws, plugins) = workspace();
    let user = User::new();
    let marker = user.home.path().join("ran");
    let hook = install_hook(ws.path(), "PreToolUse", &marker_script(&marker));
    // Two calls in one process (no terminal, no --yes): the calls go ahead, the script never
    // runs, and one warning says why and how to trust it.
    let mut child = user
        .toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["serve", "--cwd"])
        .arg(ws.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for id in [1, 2] {
        let request = json!({"id": id, "tool": "read_file", "params": {"path": "ok.txt"}});
        writeln!(stdin, "{request}").unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 2, "{stdout}\n{stderr}");
    for answer in &answers {
        assert_eq!(answer["is_error"], false, "{answer}");
    }
    assert_eq!(answers[0]["text"], OK_TEXT);
    // The second read of the file is marked as such (read_file's own rule), with no hook context.
    let second = answers[1]["text"].as_str().unwrap();
    assert!(
        second.ends_with(OK_TEXT) && !second.contains("hook_context"),
        "{second}"
    );
    assert!(!marker.exists(), "the untrusted hook ran");
    assert_eq!(stderr.matches(NOT_RUNNING).count(), 1, "{stderr}");
    let canonical = hook.canonicalize().unwrap();
    assert!(
        stderr.contains(&format!("toolhost hooks trust {}", canonical.display())),
        "{stderr}"
    );
    assert!(stderr.contains("it is not trusted"), "{stderr}");
    assert_eq!(
        user.statuses(ws.path()),
        vec![(
            "workspace".to_string(),
            "untrusted".to_string(),
            hook.display().to_string()
        )]
    );
    assert!(!user.trust_file().exists());
}

#[test]
fn a_trusted_workspace_hook_runs_in_later_processes_without_yes() {
    let (ws, plugins) = workspace();
    let user = User::new();
    let marker = user.home.path().join("ran");
    let hook = install_hook(ws.path(), "PreToolUse", &marker_script(&marker));
    let canonical = hook.canonicalize().unwrap();
    let trust = user.hooks(&["trust", hook.to_str().unwrap()]);
    assert_eq!(trust.code, 0, "{}", trust.stderr);
    let sha256 = ScriptVersion::read(&hook).unwrap().sha256;
    assert_eq!(
        trust.stdout,
        format!("trusted {} (sha256 {sha256})\n", canonical.display())
    );
    // Kept in the default place, by canonical path and hash.
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(user.trust_file()).unwrap()).unwrap();
    assert_eq!(
        stored["scripts"][canonical.to_str().unwrap()]["sha256"],
        sha256.as_str()
    );
    let (run, json) = user.read_ok(plugins.path(), ws.path(), &[]);
    assert!(
        marker.exists(),
        "the trusted hook did not run: {}",
        run.stderr
    );
    assert_eq!(json["text"], format!("{MARKER_CONTEXT}\n\n{OK_TEXT}"));
    assert!(!run.stderr.contains(NOT_RUNNING), "{}", run.stderr);
    assert_eq!(user.statuses(ws.path())[0].1, "trusted");
}

#[test]
fn a_changed_workspace_hook_does_not_run_until_trusted_again() {
    let (ws, plugins) = workspace();
    let user = User::new();
    let first = user.home.path().join("first");
    let second = user.home.path().join("second");
    let hook = install_hook(ws.path(), "PreToolUse", &marker_script(&first));
    assert_eq!(user.hooks(&["trust", hook.to_str().unwrap()]).code, 0);
    let (_, json) = user.read_ok(plugins.path(), ws.path(), &[]);
    assert!(first.exists());
    assert_eq!(json["text"], format!("{MARKER_CONTEXT}\n\n{OK_TEXT}"));

    // The same path, other content: not the version that was trusted.
    std::fs::write(&hook, marker_script(&second)).unwrap();
    let (run, json) = user.read_ok(plugins.path(), ws.path(), &[]);
    assert!(!second.exists(), "the changed hook ran");
    assert_eq!(json["text"], OK_TEXT);
    assert_eq!(run.stderr.matches(NOT_RUNNING).count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("it changed since it was trusted"),
        "{}",
        run.stderr
    );
    assert_eq!(user.statuses(ws.path())[0].1, "changed");

    assert_eq!(user.hooks(&["trust", hook.to_str().unwrap()]).code, 0);
    let (_, json) = user.read_ok(plugins.path(), ws.path(), &[]);
    assert!(second.exists(), "the newly trusted version did not run");
    assert_eq!(json["text"], format!("{MARKER_CONTEXT}\n\n{OK_TEXT}"));
}

#[test]
fn yes_runs_an_untrusted_workspace_hook_for_that_run_only() {
    let (ws, plugins) = workspace();
    let user = User::new();
    let trust_file = user.config.path().join("elsewhere/trust.json");
    let marker = user.home.path().join("ran");
    let hook = install_hook(ws.path(), "PreToolUse", &marker_script(&marker));
    let overridden = |extra: &[&str]| {
        let call = run(user
            .toolhost()
            .env("TOOLHOST_TRUSTED_HOOKS", &trust_file)
            .arg("--plugins")
            .arg(plugins.path())
            .args([
                "call",
                "read_file",
                r#"{"path":"ok.txt"}"#,
                "--json",
                "--cwd",
            ])
            .arg(ws.path())
            .args(extra));
        let json = call.json();
        (call, json)
    };
    let (call, json) = overridden(&["--yes"]);
    assert!(
        marker.exists(),
        "--yes did not run the hook: {}",
        call.stderr
    );
    assert_eq!(json["text"], format!("{MARKER_CONTEXT}\n\n{OK_TEXT}"));
    assert!(!call.stderr.contains(NOT_RUNNING), "{}", call.stderr);
    // Nothing was remembered: the next run without --yes does not run it.
    assert!(!trust_file.exists() && !user.trust_file().exists());
    std::fs::remove_file(&marker).unwrap();
    let (call, json) = overridden(&[]);
    assert!(!marker.exists());
    assert_eq!(json["text"], OK_TEXT);
    assert_eq!(
        call.stderr.matches(NOT_RUNNING).count(),
        1,
        "{}",
        call.stderr
    );

    // TOOLHOST_TRUSTED_HOOKS names the trust file for `hooks trust` as for the host.
    let trust = run(user
        .toolhost()
        .env("TOOLHOST_TRUSTED_HOOKS", &trust_file)
        .args(["hooks", "trust"])
        .arg(&hook));
    assert_eq!(trust.code, 0, "{}", trust.stderr);
    assert!(trust_file.exists() && !user.trust_file().exists());
    let (_, json) = overridden(&[]);
    assert!(marker.exists());
    assert_eq!(json["text"], format!("{MARKER_CONTEXT}\n\n{OK_TEXT}"));

    // And `hooks untrust` takes it back.
    std::fs::remove_file(&marker).unwrap();
    let untrust = run(user
        .toolhost()
        .env("TOOLHOST_TRUSTED_HOOKS", &trust_file)
        .args(["hooks", "untrust"])
        .arg(&hook));
    assert_eq!(
        untrust.stdout,
        format!("untrusted {}\n", hook.canonicalize().unwrap().display())
    );
    let (_, json) = overridden(&[]);
    assert!(!marker.exists());
    assert_eq!(json["text"], OK_TEXT);
}

#[test]
fn global_hooks_run_without_any_approval() {
    let (ws, plugins) = workspace();
    let user = User::new();
    let global_marker = user.home.path().join("global-ran");
    let settings_marker = user.home.path().join("settings-ran");
    let global = install_script(
        &user.home.path().join("Documents/Cline/Hooks"),
        "PreToolUse",
        &marker_script(&global_marker),
    );
    let settings_dir = user.config.path().join("my-hooks");
    let settings_hook = install_script(
        &settings_dir,
        "PostToolUse",
        &format!(
            "#!/bin/sh\ncat > /dev/null\ntouch '{}'\n",
            settings_marker.display()
        ),
    );
    let settings = user.config.path().join("settings.toml");
    std::fs::write(
        &settings,
        format!("[hooks]\ndir = \"{}\"\n", settings_dir.display()),
    )
    .unwrap();
    let settings = settings.to_str().unwrap();
    let (run, json) = user.read_ok(plugins.path(), ws.path(), &["--settings", settings]);
    assert!(global_marker.exists(), "the global hook did not run");
    assert!(settings_marker.exists(), "the [hooks] dir hook did not run");
    assert_eq!(json["text"], format!("{MARKER_CONTEXT}\n\n{OK_TEXT}"));
    assert!(!run.stderr.contains(NOT_RUNNING), "{}", run.stderr);
    assert!(!user.trust_file().exists());
    let list = user.hooks(&[
        "--settings",
        settings,
        "list",
        "--json",
        "--cwd",
        ws.path().to_str().unwrap(),
    ]);
    let hooks = list.json()["hooks"].clone();
    assert_eq!(
        hooks,
        json!([
            {"hook": "PreToolUse", "path": global, "origin": "global", "status": "own",
             "sha256": ScriptVersion::read(&global).unwrap().sha256, "runs_without_asking": true},
            {"hook": "PostToolUse", "path": settings_hook, "origin": "settings", "status": "own",
             "sha256": ScriptVersion::read(&settings_hook).unwrap().sha256, "runs_without_asking": true},
        ])
    );
}

/// A user on a terminal who gives the prepared answers to questions and records them.
#[derive(Clone, Default)]
struct AnsweringUi {
    answers: Arc<Mutex<VecDeque<bool>>>,
    questions: Arc<Mutex<Vec<(String, String)>>>,
}

impl Ui for AnsweringUi {
    fn say(&self, _kind: &str, _text: &str, _partial: bool) {}

    fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        self.questions
            .lock()
            .unwrap()
            .push((kind.to_string(), text.to_string()));
        let yes = self.answers.lock().unwrap().pop_front()?;
        Some(AskReply {
            response: if yes {
                AskResponse::Yes
            } else {
                AskResponse::No
            },
            text: None,
        })
    }
}

#[test]
fn on_a_terminal_the_user_is_asked_once_per_script_version() {
    let (ws, plugins) = workspace();
    let config = workdir();
    let trust_file = config.path().join("trusted-hooks.json");
    let first = config.path().join("first");
    let second = config.path().join("second");
    let hook = install_hook(ws.path(), "PreToolUse", &marker_script(&first));
    let canonical = hook.canonicalize().unwrap();
    let mut settings = Settings::default();
    settings.hooks.trust_file = Some(trust_file.clone());
    let ui = AnsweringUi::default();
    ui.answers.lock().unwrap().extend([true, false]);
    let host = in_process::host_asking(
        plugins.path(),
        ws.path(),
        settings.clone(),
        ApprovalMode::Ask,
        Box::new(ui.clone()),
    );
    let questions = || ui.questions.lock().unwrap().clone();

    // Asked, with the path, the hash and the first lines; approved: it runs and is remembered.
    let outcome = host.call("read_file", r#"{"path":"ok.txt"}"#);
    assert_eq!(
        outcome.model_text(),
        format!("{MARKER_CONTEXT}\n\n{OK_TEXT}")
    );
    assert!(first.exists());
    let asked = questions();
    assert_eq!(asked.len(), 1);
    let (kind, text) = &asked[0];
    assert_eq!(kind, "hook");
    let sha256 = ScriptVersion::read(&hook).unwrap().sha256;
    assert!(text.contains(&canonical.display().to_string()), "{text}");
    assert!(text.contains(&format!("sha256 {sha256}")), "{text}");
    assert!(
        text.contains("  | #!/bin/sh\n  | cat > /dev/null"),
        "{text}"
    );
    assert_eq!(
        TrustStore::new(Some(trust_file.clone())).entries().unwrap()[&canonical].sha256,
        sha256
    );

    // Not asked again for the same version.
    std::fs::remove_file(&first).unwrap();
    host.call("read_file", r#"{"path":"ok.txt"}"#);
    assert!(first.exists());
    assert_eq!(questions().len(), 1);

    // Changed: asked again; refused, it does not run, and the refusal holds for this process.
    std::fs::write(&hook, marker_script(&second)).unwrap();
    let outcome = host.call("read_file", r#"{"path":"ok.txt"}"#).model_text();
    // A repeated read is marked as such (read_file's own rule); no hook context.
    assert!(
        outcome.ends_with(OK_TEXT) && !outcome.contains("hook_context"),
        "{outcome}"
    );
    assert!(!second.exists());
    let asked = questions();
    assert_eq!(asked.len(), 2);
    assert!(
        asked[1].1.contains("changed since you trusted it"),
        "{}",
        asked[1].1
    );
    host.call("read_file", r#"{"path":"ok.txt"}"#);
    assert!(!second.exists());
    assert_eq!(questions().len(), 2);

    // A later process: the approved version runs without a question.
    drop(host);
    std::fs::write(&hook, marker_script(&first)).unwrap();
    std::fs::remove_file(&first).unwrap();
    let later = AnsweringUi::default();
    let host = in_process::host_asking(
        plugins.path(),
        ws.path(),
        settings,
        ApprovalMode::Ask,
        Box::new(later.clone()),
    );
    let outcome = host.call("read_file", r#"{"path":"ok.txt"}"#);
    assert_eq!(
        outcome.model_text(),
        format!("{MARKER_CONTEXT}\n\n{OK_TEXT}")
    );
    assert!(first.exists());
    assert!(later.questions.lock().unwrap().is_empty());
}

/// A global PreToolUse hook that cancels reads of `blocked.txt` (with `message`, when given),
/// in a settings file naming its directory.
fn cancelling_hook(config: &Path, message: Option<&str>) -> PathBuf {
    let answer = match message {
        Some(message) => json!({"cancel": true, "errorMessage": message}),
        None => json!({"cancel": true}),
    };
    let dir = config.join("hooks");
    install_script(
        &dir,
        "PreToolUse",
        &format!("#!/bin/sh\ncase \"$(cat)\" in\n  *blocked.txt*) echo '{answer}' ;;\nesac\n"),
    );
    let settings = config.join("settings.toml");
    std::fs::write(
        &settings,
        format!("[hooks]\ndir = {:?}\n", dir.to_str().unwrap()),
    )
    .unwrap();
    settings
}

const VETO: &str = "reading blocked.txt is against the policy";

/// `call`: the call is the task. Its result is Cline's denial, the user sees the hook's
/// message on stderr, and `--json` says the task was cancelled.
#[test]
fn a_pre_tool_use_veto_is_shown_to_the_user_of_call() {
    let (ws, plugins) = workspace();
    let config = workdir();
    let settings = cancelling_hook(config.path(), Some(VETO));
    let call = |extra: &[&str]| {
        run(toolhost()
            .arg("--settings")
            .arg(&settings)
            .arg("--plugins")
            .arg(plugins.path())
            .args(["call", "read_file", r#"{"path":"blocked.txt"}"#, "--cwd"])
            .arg(ws.path())
            .args(extra))
    };
    let text = call(&[]);
    assert_eq!(text.code, 1, "{text:?}");
    assert_eq!(text.stdout, TOOL_DENIED);
    assert!(
        text.stderr.contains(&format!("toolhost: error: {VETO}\n")),
        "{}",
        text.stderr
    );
    let json = call(&["--json"]).json();
    assert_eq!(json["text"], TOOL_DENIED);
    assert_eq!(json["error_kind"], "denied");
    assert_eq!(
        json["task_cancelled"],
        json!({"hook": "PreToolUse", "message": VETO})
    );
    // Without a message, Cline's words.
    let config = workdir();
    let settings = cancelling_hook(config.path(), None);
    let got = run(toolhost()
        .arg("--settings")
        .arg(&settings)
        .arg("--plugins")
        .arg(plugins.path())
        .args(["call", "read_file", r#"{"path":"blocked.txt"}"#, "--cwd"])
        .arg(ws.path()));
    assert!(
        got.stderr
            .contains("toolhost: error: PreToolUse hook requested cancellation\n"),
        "{}",
        got.stderr
    );
}

/// `serve` and `mcp` have no user: the hook's reason is in the result's text (and the MCP
/// client also gets it as a `notifications/message`); the session goes on, since the task is
/// the client's.
#[test]
fn a_pre_tool_use_veto_reaches_serve_and_mcp_clients_in_the_result() {
    use toolhost_tests::session::{Frontend, Session};

    let (ws, plugins) = workspace();
    let config = workdir();
    let settings = cancelling_hook(config.path(), Some(VETO));
    let expected = format!("{TOOL_DENIED}\n\nThe PreToolUse hook cancelled the task: {VETO}");
    for frontend in [Frontend::Serve, Frontend::Mcp] {
        let mut command = toolhost();
        command
            .arg("--settings")
            .arg(&settings)
            .arg("--plugins")
            .arg(plugins.path());
        let cwd = ws.path().to_str().unwrap();
        let mut session = Session::start(command, frontend, &["--cwd", cwd]);
        let (is_error, text) = session.call("read_file", json!({"path": "blocked.txt"}));
        assert!(is_error, "{frontend:?}");
        assert_eq!(text, expected, "{frontend:?}");
        match frontend {
            Frontend::Serve => {
                let answer = session
                    .request(json!({"tool": "read_file", "params": {"path": "blocked.txt"}}));
                assert_eq!(
                    answer["task_cancelled"],
                    json!({"hook": "PreToolUse", "message": VETO})
                );
                assert!(
                    session.wait_for_stderr(
                        &format!("toolhost: error: {VETO}\n"),
                        std::time::Duration::from_secs(5)
                    ),
                    "{}",
                    session.stderr()
                );
            }
            Frontend::Mcp => {
                let messages: Vec<&Value> = session
                    .notifications()
                    .iter()
                    .filter(|n| n["method"] == "notifications/message")
                    .collect();
                assert_eq!(messages.len(), 1, "{messages:?}");
                assert_eq!(messages[0]["params"]["level"], "error");
                assert_eq!(messages[0]["params"]["data"], VETO);
            }
        }
        let (is_error, text) = session.call("read_file", json!({"path": "ok.txt"}));
        assert!(!is_error, "{frontend:?}: {text}");
        let (status, _) = session.finish();
        assert!(status.success(), "{frontend:?}: {status}");
    }
}

/// `replay` is a task with a user: the message is shown as an error event and nothing after
/// the vetoed call runs; there is no next user message.
#[test]
fn a_pre_tool_use_veto_ends_a_replayed_task() {
    let (ws, plugins) = workspace();
    std::fs::write(ws.path().join("later.txt"), "later\n").unwrap();
    let config = workdir();
    let settings = cancelling_hook(config.path(), Some(VETO));
    let message = ws.path().join("message.txt");
    std::fs::write(
        &message,
        "Reading both.\n<read_file>\n<path>blocked.txt</path>\n</read_file>\n\
         <read_file>\n<path>later.txt</path>\n</read_file>\n",
    )
    .unwrap();
    let got = run(toolhost()
        .arg("--settings")
        .arg(&settings)
        .arg("--plugins")
        .arg(plugins.path())
        .arg("replay")
        .arg(&message)
        .arg("--cwd")
        .arg(ws.path()));
    assert_eq!(got.code, 0, "{got:?}");
    let lines: Vec<&str> = got.stdout.lines().collect();
    let shown = lines
        .iter()
        .position(|l| *l == format!("  [error] {VETO}"))
        .unwrap_or_else(|| panic!("{}", got.stdout));
    let cancelled = lines
        .iter()
        .position(|l| *l == format!("task cancelled by the PreToolUse hook: {VETO}"))
        .unwrap_or_else(|| panic!("{}", got.stdout));
    assert!(shown < cancelled, "{}", got.stdout);
    assert_eq!(
        lines.last().copied(),
        Some(format!("-- task cancelled: The PreToolUse hook cancelled the task: {VETO}").as_str()),
        "{}",
        got.stdout
    );
    assert!(!got.stdout.contains("later.txt'] Result"), "{}", got.stdout);
    assert!(!got.stdout.contains("next user message"), "{}", got.stdout);
}

/// Every root of a multi-root workspace has its own `.clinerules/hooks/`, as in Cline: a
/// trusted script of the second root runs and is listed.
#[test]
fn each_workspace_root_has_its_hooks() {
    let (ws, plugins) = workspace();
    let second = workdir();
    let user = User::new();
    let marker = user.home.path().join("ran");
    let hook = install_hook(second.path(), "PreToolUse", &marker_script(&marker));
    let roots = [
        "--cwd",
        ws.path().to_str().unwrap(),
        "--cwd",
        second.path().to_str().unwrap(),
    ];
    let mut list = vec!["list", "--json"];
    list.extend(roots);
    let listed = user.hooks(&list);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let canonical = hook.canonicalize().unwrap();
    let paths: Vec<String> = listed.json()["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect();
    assert!(
        paths
            .iter()
            .any(|p| Path::new(p) == hook || Path::new(p) == canonical),
        "{paths:?}"
    );
    let trusted = user.hooks(&["trust", hook.to_str().unwrap()]);
    assert_eq!(trusted.code, 0, "{}", trusted.stderr);
    let got = run(user
        .toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["call", "read_file", r#"{"path":"ok.txt"}"#])
        .args(roots));
    assert_eq!(got.code, 0, "{got:?}");
    assert!(
        marker.exists(),
        "the second root's hook did not run: {got:?}"
    );
    assert!(got.stdout.contains("hook ran"), "{got:?}");
}
