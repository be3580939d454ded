//! The command sandbox end to end, through `toolhost call execute_command` (and `serve`,
//! `mcp`) with a settings file: the default profile and the strict one (read-only, network
//! off) against the escape probes, what the result says was denied, escalation approved in the
//! `command` category only, nothing left behind by a command or by a killed host, and a
//! missing kernel feature (simulated) warned about once or, with `sandbox_required`, refused.
//!
//! Every run gets its own home (`HOME`) and temporary directory (`TMPDIR`) inside the test's
//! directory, so the writable roots are known and nothing outside the test is touched.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost_tests::{run, toolhost, PluginDir, Run};

fn plugins() -> PluginDir {
    let dir = PluginDir::empty();
    dir.add_library("execute_command");
    dir
}

const DEFAULT: &str = "[auto_approve]\nexecute_safe_commands = true\n";
const STRICT: &str = "[auto_approve]\nexecute_safe_commands = true\n\
                      [execute_command]\nsandbox = \"read-only\"\nnetwork = false\n";

struct Scene {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
    outside: PathBuf,
    plugins: PluginDir,
}

impl Scene {
    fn new(settings: &str) -> Self {
        let dir = toolhost_tests::workdir();
        let base = dir.path().canonicalize().unwrap();
        // Outside the workspace and out of the temporary directory (which a command gets a
        // private one of): a place a command sees but may not write.
        let [ws, home, tmp, outside] =
            ["ws", "home", "tmp", "home/outside"].map(|name| base.join(name));
        for d in [&ws, &home, &tmp, &outside] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(ws.join(".env"), "API_TOKEN=hunter2-secret\n").unwrap();
        std::fs::write(ws.join(".clineignore"), ".env\nprivate/\n").unwrap();
        std::fs::create_dir(ws.join("private")).unwrap();
        std::fs::write(ws.join("private/key.pem"), "hunter2-secret\n").unwrap();
        std::fs::write(ws.join("notes.md"), "public notes\n").unwrap();
        std::fs::hard_link(ws.join(".env"), ws.join("backup.txt")).unwrap();
        std::os::unix::fs::symlink(ws.join(".env"), ws.join("link-to-env")).unwrap();
        let git = Command::new("git")
            .args(["init", "-q", "."])
            .current_dir(&ws)
            .env("HOME", &home)
            .status()
            .unwrap();
        assert!(git.success());
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(base.join("settings.toml"), settings).unwrap();
        Scene {
            _dir: dir,
            base,
            ws,
            home,
            tmp,
            outside,
            plugins: plugins(),
        }
    }

    fn toolhost(&self) -> Command {
        let mut command = toolhost();
        command
            .arg("--plugins")
            .arg(self.plugins.path())
            .arg("--settings")
            .arg(self.base.join("settings.toml"))
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("TOOLHOST_SANDBOX_UNAVAILABLE");
        command
    }

    fn call_command(&self, params: &Value) -> Command {
        let mut command = self.toolhost();
        command
            .args(["call", "execute_command", &params.to_string(), "--cwd"])
            .arg(&self.ws);
        command
    }

    /// Runs a command the model marks as safe; the text the model reads.
    fn execute(&self, script: &str) -> Run {
        run(&mut self.call_command(&json!({"command": script, "requires_approval": "false"})))
    }
}

/// Live processes whose command line contains `marker`.
fn with_marker(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| s[i + 1..].trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if cmdline.contains(marker) && !zombie {
            found.push(cmdline);
        }
    }
    found
}

fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

fn marker(seed: u32) -> String {
    format!("{}.{}{}", 8000 + seed, std::process::id(), seed)
}

/// The escape probes: writes outside the writable roots (home, a directory outside the
/// workspace, through a symlink), git's hooks and configuration, and reads of the ignored
/// files by every route.
fn escape_script(scene: &Scene) -> String {
    std::os::unix::fs::symlink(&scene.outside, scene.ws.join("out-link")).unwrap();
    format!(
        "echo 1 > {home}/planted; echo 2 > {outside}/planted; echo 3 > out-link/planted; \
         echo 'touch {outside}/hooked' > .git/hooks/pre-commit; \
         echo '[core] fsmonitor = touch {outside}/hooked' >> .git/config; mv .git .git-aside; \
         cat .env; cat link-to-env; cat backup.txt; cat private/key.pem; grep -r hunter2 . ; \
         python3 -c \"print(len(open('.env').read()))\"; echo probes-done",
        home = scene.home.display(),
        outside = scene.outside.display()
    )
}

fn assert_escapes_failed(scene: &Scene, text: &str) {
    assert!(text.contains("probes-done"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(!scene.home.join("planted").exists(), "{text}");
    assert!(!scene.outside.join("planted").exists(), "{text}");
    assert!(!scene.ws.join(".git/hooks/pre-commit").exists(), "{text}");
    assert!(!scene.ws.join(".git-aside").exists(), "{text}");
    let config = std::fs::read_to_string(scene.ws.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    assert!(
        text.contains("The command ran in a sandbox") && text.contains("sandbox_escalation"),
        "{text}"
    );
}

#[test]
fn the_default_profile_stops_the_escapes_and_says_so() {
    let scene = Scene::new(DEFAULT);
    let script = escape_script(&scene) + "; echo made > made.txt && cat made.txt";
    let result = scene.execute(&script);
    assert_eq!(result.code, 0, "{}{}", result.stdout, result.stderr);
    let text = result.stdout;
    assert_escapes_failed(&scene, &text);
    assert!(
        text.contains(
            "(workspace-write, network through the egress proxy), which may have denied: \
             writing outside the writable roots"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "the temporary directories /tmp, {}, /dev/shm are the command's own",
            scene.tmp.display()
        )),
        "{text}"
    );
    // The workspace and the temporary directory are writable; the file tools still see the
    // secret where it is.
    assert!(text.contains("\nmade\n"), "{text}");
    assert_eq!(
        std::fs::read_to_string(scene.ws.join(".env")).unwrap(),
        "API_TOKEN=hunter2-secret\n"
    );
    // The temporary directory is the command's own: what it leaves there is gone.
    let result = scene.execute("echo t > \"$TMPDIR/ok\" && cat \"$TMPDIR/ok\"");
    assert!(result.stdout.contains("t"), "{}", result.stdout);
    assert!(!scene.tmp.join("ok").exists());
}

#[test]
fn the_strict_profile_denies_writes_and_the_network() {
    let scene = Scene::new(STRICT);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = escape_script(&scene)
        + &format!(
            "; echo made > made.txt; \
             python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\" \
             && echo connected"
        );
    let text = scene.execute(&script).stdout;
    assert_escapes_failed(&scene, &text);
    assert!(!scene.ws.join("made.txt").exists(), "{text}");
    assert!(!text.contains("connected"), "{text}");
    assert!(listener.accept().is_err());
    assert!(
        text.contains(
            "(read-only, network off), which may have denied: writing files (the sandbox is \
             read-only); the network (it is off in the sandbox)"
        ),
        "{text}"
    );
    // Reads and normal commands still work.
    let text = scene
        .execute("cat notes.md && git status --short | head -1 && ls")
        .stdout;
    assert!(text.starts_with("Command executed successfully"), "{text}");
    assert!(text.contains("public notes"), "{text}");
}

#[test]
fn escalation_is_a_command_approval() {
    let scene = Scene::new(STRICT);
    let params = |escalate: bool| {
        json!({"command": format!("echo out > {}/escalated", scene.outside.display()),
               "requires_approval": "false",
               "sandbox_escalation": if escalate { "true" } else { "false" }})
    };
    // Safe commands are auto-approved, an escalated run is not: no terminal, no --yes, denied.
    let denied = run(&mut scene.call_command(&params(true)));
    assert_eq!(
        denied.stdout,
        toolhost_tests::nobody_to_ask(
            "execute_command",
            &["execute_safe_commands", "execute_all_commands"]
        )
    );
    assert!(!scene.outside.join("escalated").exists());
    // In the sandbox the same command runs and is refused the write.
    let confined = run(&mut scene.call_command(&params(false)));
    assert!(
        confined.stdout.contains("may have denied"),
        "{}",
        confined.stdout
    );
    assert!(!scene.outside.join("escalated").exists());
    // Approved (--yes), it runs outside the sandbox.
    let approved = run(scene.call_command(&params(true)).arg("--yes"));
    assert_eq!(
        approved.stdout, "Command executed successfully (exit code 0).",
        "{}",
        approved.stderr
    );
    assert!(scene.outside.join("escalated").exists());
    // Also when every command is auto-approved, the escalation is asked as a command: with
    // only safe commands auto-approved it stays denied (shown above); with all commands, the
    // user's setting approves it.
    std::fs::write(
        scene.base.join("settings.toml"),
        STRICT.replace(
            "execute_safe_commands = true\n",
            "execute_safe_commands = true\nexecute_all_commands = true\n",
        ),
    )
    .unwrap();
    std::fs::remove_file(scene.outside.join("escalated")).unwrap();
    let auto = run(&mut scene.call_command(&params(true)));
    assert_eq!(auto.stdout, "Command executed successfully (exit code 0).");
    assert!(scene.outside.join("escalated").exists());
}

#[test]
fn daemons_do_not_outlive_the_command() {
    for (seed, settings) in [(1, DEFAULT), (2, STRICT)] {
        let scene = Scene::new(settings);
        let m = marker(seed);
        let text = scene
            .execute(&format!(
                "setsid -f sleep {m}; (sleep {m} &); \
                 python3 -c \"import os, subprocess; os.setpgid(0, 0); subprocess.Popen(['sleep', '{m}'])\"; \
                 sleep 0.3; echo started"
            ))
            .stdout;
        assert!(text.contains("started"), "{text}");
        assert!(
            wait_for(Duration::from_secs(3), || with_marker(&m).is_empty()),
            "{:?}",
            with_marker(&m)
        );
    }
}

/// Starts a command that leaves daemons, waits until they run, and ends the host with
/// `signal`: nothing may be left.
fn kill_the_host_mid_command(seed: u32, signal: &str) {
    let scene = Scene::new(DEFAULT);
    let m = marker(seed);
    let mut host = scene
        .call_command(&json!({
            "command": format!("setsid -f sleep {m}; (sleep {m} &); sleep {m}"),
            "requires_approval": "false"
        }))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for(Duration::from_secs(10), || with_marker(&m).len() >= 3),
        "{:?}",
        with_marker(&m)
    );
    let status = Command::new("kill")
        .args([signal, &host.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    host.wait().unwrap();
    assert!(
        wait_for(Duration::from_secs(5), || with_marker(&m).is_empty()),
        "{signal}: {:?}",
        with_marker(&m)
    );
}

#[test]
fn a_killed_host_leaves_nothing_behind() {
    kill_the_host_mid_command(3, "-KILL");
}

#[test]
fn a_terminated_or_interrupted_host_leaves_nothing_behind() {
    kill_the_host_mid_command(4, "-TERM");
    kill_the_host_mid_command(5, "-INT");
}

#[test]
fn closing_mcp_stdin_leaves_nothing_behind() {
    let scene = Scene::new(DEFAULT);
    let m = marker(6);
    let mut child = scene
        .toolhost()
        .args(["mcp", "--cwd"])
        .arg(&scene.ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let send = |input: &mut std::process::ChildStdin, message: Value| {
        writeln!(input, "{message}").unwrap();
    };
    send(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
    );
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    send(
        &mut input,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "execute_command",
            "arguments": {"command": format!("setsid -f sleep {m}; sleep {m}"),
                          "requires_approval": "false"}}}),
    );
    assert!(
        wait_for(Duration::from_secs(10), || with_marker(&m).len() >= 2),
        "{:?}",
        with_marker(&m)
    );
    drop(input);
    assert!(wait_for(Duration::from_secs(10), || child
        .try_wait()
        .unwrap()
        .is_some()));
    assert!(
        wait_for(Duration::from_secs(5), || with_marker(&m).is_empty()),
        "{:?}",
        with_marker(&m)
    );
}

#[test]
fn a_fork_bomb_is_stopped_by_the_process_limit() {
    let scene = Scene::new(&format!(
        "{DEFAULT}[execute_command]\nmax_processes = 400\n"
    ));
    let m = marker(7);
    let text = scene
        .execute(&format!(
            "python3 -c \"\nimport subprocess\nfailed = 0\nfor i in range(3000):\n    \
             try:\n        subprocess.Popen(['sleep', '{m}'])\n    \
             except OSError as e:\n        failed += 1\n        last = e\n\
             print('failed', failed)\nprint(last)\n\""
        ))
        .stdout;
    let failed: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("failed "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(failed > 2000, "{text}");
    // The result says which limit, and how to raise it.
    assert!(
        text.contains("process limit (400 processes at once)")
            && text.contains("execute_command.max_processes"),
        "{text}"
    );
    assert!(
        wait_for(Duration::from_secs(5), || with_marker(&m).is_empty()),
        "{}",
        with_marker(&m).len()
    );
}

/// JSON lines through `toolhost serve`: one result text per call.
fn serve(scene: &Scene, env: &[(&str, &str)], commands: &[&str]) -> (Vec<String>, String) {
    let mut command = scene.toolhost();
    command
        .args(["serve", "--cwd"])
        .arg(&scene.ws)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    for (id, script) in commands.iter().enumerate() {
        let line = json!({"id": id, "tool": "execute_command",
                          "params": {"command": script, "requires_approval": "false"}});
        writeln!(input, "{line}").unwrap();
    }
    drop(input);
    let output = child.wait_with_output().unwrap();
    let texts = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    (texts, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn a_missing_feature_is_warned_about_once_or_refused() {
    let scene = Scene::new(DEFAULT);
    let missing = [("TOOLHOST_SANDBOX_UNAVAILABLE", "landlock")];
    let out = scene.outside.display().to_string();
    let write = format!("echo x > {out}/unconfined && echo wrote");
    let (texts, stderr) = serve(&scene, &missing, &[&write, "cat .env; echo second"]);
    assert_eq!(texts.len(), 2, "{texts:?} {stderr}");
    // The file system is not confined, and the first result and the log say so, once.
    assert!(texts[0].contains("wrote"), "{}", texts[0]);
    assert!(
        texts[0]
            .contains("Note: commands run in a weaker sandbox on this system (missing: landlock)"),
        "{}",
        texts[0]
    );
    assert!(!texts[1].contains("weaker sandbox"), "{}", texts[1]);
    assert_eq!(stderr.matches("weaker sandbox").count(), 1, "{stderr}");
    // The rest of the sandbox still holds.
    assert!(!texts[1].contains("hunter2"), "{}", texts[1]);
    assert!(scene.outside.join("unconfined").exists());
    std::fs::remove_file(scene.outside.join("unconfined")).unwrap();

    // Required: refused, and the command never runs.
    std::fs::write(
        scene.base.join("settings.toml"),
        format!("{DEFAULT}[execute_command]\nsandbox_required = true\n"),
    )
    .unwrap();
    let (texts, _) = serve(&scene, &missing, &[&write]);
    assert!(
        texts[0].contains(
            "The sandbox is required (execute_command.sandbox_required) but this \
                           system cannot enforce all of it (landlock)"
        ),
        "{}",
        texts[0]
    );
    assert!(!scene.outside.join("unconfined").exists());
    // With everything available, the required sandbox runs the command.
    let (texts, _) = serve(&scene, &[], &["echo fine"]);
    assert!(texts[0].contains("fine"), "{}", texts[0]);
}

#[test]
fn the_sandbox_can_be_switched_off() {
    let scene = Scene::new(&format!("{DEFAULT}[execute_command]\nsandbox = \"off\"\n"));
    let text = scene
        .execute(&format!(
            "echo x > {}/free && cat .env",
            scene.outside.display()
        ))
        .stdout;
    assert!(text.contains("hunter2"), "{text}");
    assert!(!text.contains("sandbox"), "{text}");
    assert!(scene.outside.join("free").exists());
    let bad = Scene::new("[execute_command]\nsandbox = \"strict\"\n");
    // A wrong value refuses the command, naming the section; nothing runs.
    let result = bad.execute("true");
    assert_eq!(result.code, 1, "{}{}", result.stdout, result.stderr);
    assert!(
        result.stdout.contains("[execute_command]") && result.stdout.contains("strict"),
        "{}",
        result.stdout
    );
}
