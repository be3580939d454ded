//! Crash containment: the fault plugin isolated in a worker process, driven through `call`,
//! `serve` and `mcp`. Whatever a fault does, the host lives, a real tool called next succeeds,
//! the faulty plugin's next call gets a fresh worker (or, after three crashes within a minute,
//! the error that it was disabled), and no worker process or thread is left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost_tests::session::{Frontend, Session};
use toolhost_tests::{toolhost, workdir, PluginDir};

/// The fault plugin runs isolated (by its name, which also makes the host open it in a worker
/// before it knows the name), calls time out after 2 s, and a worker may map 512 MiB.
const SETTINGS: &str = "[limits]\ncall_timeout_secs = 2\n\n\
                        [plugins.fixture_faults]\nisolation = \"process\"\nmemory_mb = 512\n";

/// The same, with time for 64 MiB of output to cross (a debug build on a busy machine).
const SLOW_SETTINGS: &str = "[limits]\ncall_timeout_secs = 60\n\n\
                             [plugins.fixture_faults]\nisolation = \"process\"\nmemory_mb = 512\n";

/// The settings a fault is tried with: the slow ones for faults whose work takes time on a
/// busy machine (64 MiB of output; touching memory up to the limit), so that their outcome,
/// not the timeout, is what the test sees.
fn settings_for(fault: &str) -> &'static str {
    if fault == "fault_huge_output" || fault == "fault_alloc_unbounded" {
        SLOW_SETTINGS
    } else {
        SETTINGS
    }
}

/// What a fault does to an isolated plugin's call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The worker ends: a crash error naming the plugin.
    Crash,
    /// The call runs past its timeout; the worker is stopped.
    Timeout,
    /// The call succeeds with this text (or one starting with it).
    Answer(&'static str),
}

/// Every fault of the fixture, and what isolation makes of it.
const FAULTS: [(&str, Expect); 15] = [
    ("fault_panic", Expect::Crash),
    ("fault_panic_unwinding", Expect::Crash),
    ("fault_panic_payload", Expect::Crash),
    ("fault_abort", Expect::Crash),
    ("fault_segv", Expect::Crash),
    ("fault_stack_overflow", Expect::Crash),
    ("fault_exit", Expect::Crash),
    ("fault_alloc_unbounded", Expect::Crash),
    ("fault_alloc_huge", Expect::Crash),
    ("fault_loop", Expect::Timeout),
    ("fault_sleep", Expect::Timeout),
    ("fault_thread_abort", Expect::Answer("started")),
    ("fault_stdout", Expect::Answer("printed")),
    ("fault_close_stdout", Expect::Answer("closed")),
    ("fault_huge_output", Expect::Answer("0123456789abcdef")),
];

/// The plugins (the fault fixture and read_file, a real tool that runs in-process), a
/// workspace with one file, and the settings.
struct Scene {
    plugins: PluginDir,
    ws: tempfile::TempDir,
    _config: tempfile::TempDir,
    settings: PathBuf,
}

impl Scene {
    fn new(settings: &str) -> Self {
        let plugins = PluginDir::empty();
        plugins
            .add_library("fixture_faults")
            .add_library("read_file");
        let ws = workdir();
        std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
        let config = workdir();
        let file = config.path().join("settings.toml");
        std::fs::write(&file, settings).unwrap();
        Self {
            plugins,
            ws,
            _config: config,
            settings: file,
        }
    }
}

/// Checks one answer against what the fault should have done.
fn check(fault: &str, expect: Expect, (is_error, text): &(bool, String)) {
    let short: String = text.chars().take(400).collect();
    match expect {
        Expect::Crash => {
            assert!(*is_error, "{fault}: {short}");
            assert!(
                text.contains("The plugin 'fixture_faults'") && text.contains("worker process"),
                "{fault}: {short}"
            );
        }
        Expect::Timeout => {
            assert!(*is_error, "{fault}: {short}");
            assert!(
                text.contains("did not finish within 2 seconds"),
                "{fault}: {short}"
            );
        }
        Expect::Answer(start) => {
            assert!(!*is_error, "{fault}: {short}");
            assert!(text.starts_with(start), "{fault}: {short}");
            if fault == "fault_huge_output" {
                assert!(text.len() >= 64 << 20, "{fault}: {} bytes", text.len());
            }
        }
    }
}

/// The processes serving as workers of the host `host_pid` (their library copies live in the
/// host's private directory).
fn workers_of(host_pid: u32) -> Vec<u32> {
    let marker = format!("toolhost-{host_pid}-");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline);
        if cmdline.contains("__plugin-worker") && cmdline.contains(&marker) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until the host `host_pid` has at most `most` workers; the ones it has.
fn settle_workers(host_pid: u32, most: usize) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let workers = workers_of(host_pid);
        if workers.len() <= most || Instant::now() > deadline {
            return workers;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// A `toolhost serve` or `toolhost mcp` host over a scene, spoken to with the shared line
/// client (request ids start at 100, so a forged answer with id 1 can never be taken for one;
/// under `mcp` the host's warnings, such as a dying worker's stderr, are notifications it
/// skips), with the checks each fault run makes.
struct FaultSession {
    session: Session,
}

impl FaultSession {
    fn start(scene: &Scene, frontend: Frontend, args: &[&str]) -> Self {
        let mut command = toolhost();
        command
            .arg("--settings")
            .arg(&scene.settings)
            .arg("--plugins")
            .arg(scene.plugins.path());
        Self::over(command, scene, frontend, args)
    }

    /// `command` (with its plugins and settings) run as `frontend` with `args` on the scene's
    /// workspace.
    fn over(command: Command, scene: &Scene, frontend: Frontend, args: &[&str]) -> Self {
        let cwd = scene.ws.path().to_str().unwrap();
        let mut all = args.to_vec();
        all.extend(["--cwd", cwd]);
        Self {
            session: Session::start(command, frontend, &all),
        }
    }

    fn pid(&self) -> u32 {
        self.session.pid()
    }

    /// Calls a tool; whether it failed, and its text.
    fn call(&mut self, tool: &str) -> (bool, String) {
        let params = if tool == "read_file" {
            json!({"path": "a.txt"})
        } else {
            json!({})
        };
        self.session.call(tool, params)
    }

    /// A real tool and the faulty plugin's harmless tool both answer.
    fn check_alive(&mut self, after: &str) {
        let (is_error, text) = self.call("read_file");
        assert!(
            !is_error && text.contains("1 | hello"),
            "after {after}: {text}"
        );
        let (is_error, text) = self.call("fault_ok");
        assert!(!is_error && text == "ok", "after {after}: {text}");
    }

    /// Closes the input: the host must exit by itself, successfully, with nothing left
    /// behind and nothing more written.
    fn finish(self) {
        let pid = self.pid();
        let (status, rest) = self.session.finish();
        assert!(
            rest.trim().is_empty(),
            "more output than answers: {rest:.300}"
        );
        assert!(status.success(), "the host ended with {status}");
        assert_eq!(
            settle_workers(pid, 0),
            Vec::<u32>::new(),
            "workers left behind"
        );
    }
}

/// One host process per fault, so that crashes do not add up to disabling the plugin.
fn every_fault_through(frontend: Frontend) {
    let (quick, slow) = (Scene::new(SETTINGS), Scene::new(SLOW_SETTINGS));
    for (fault, expect) in FAULTS {
        let scene = if settings_for(fault) == SETTINGS {
            &quick
        } else {
            &slow
        };
        let mut session = FaultSession::start(scene, frontend, &[]);
        session.check_alive("starting");
        let before = workers_of(session.pid());
        let threads = threads_of(session.pid());
        let answer = session.call(fault);
        check(fault, expect, &answer);
        if fault == "fault_thread_abort" {
            // The worker aborts after the call returned; the next call starts a fresh one.
            std::thread::sleep(Duration::from_millis(600));
        }
        if matches!(expect, Expect::Crash | Expect::Timeout) || fault == "fault_thread_abort" {
            // The old worker is gone (a timed-out call's worker is stopped, not left running).
            let deadline = Instant::now() + Duration::from_secs(5);
            while before.iter().any(|p| workers_of(session.pid()).contains(p))
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            let now = workers_of(session.pid());
            assert!(
                before.iter().all(|p| !now.contains(p)),
                "{fault}: the old worker {before:?} still runs ({now:?})"
            );
        }
        session.check_alive(fault);
        assert_eq!(workers_of(session.pid()).len(), 1, "{fault}: one worker");
        assert!(
            threads_of(session.pid()) <= threads + 3,
            "{fault}: the host's threads grew from {threads} to {}",
            threads_of(session.pid())
        );
        session.finish();
    }
}

#[test]
fn no_fault_takes_serve_down() {
    every_fault_through(Frontend::Serve);
}

#[test]
fn no_fault_takes_mcp_down() {
    every_fault_through(Frontend::Mcp);
}

#[test]
fn no_fault_takes_call_down() {
    let (quick, slow) = (Scene::new(SETTINGS), Scene::new(SLOW_SETTINGS));
    for (fault, expect) in FAULTS {
        let scene = if settings_for(fault) == SETTINGS {
            &quick
        } else {
            &slow
        };
        let mut child = toolhost()
            .arg("--settings")
            .arg(&scene.settings)
            .arg("--plugins")
            .arg(scene.plugins.path())
            .args(["call", fault, "{}", "--json", "--cwd"])
            .arg(scene.ws.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut stdout = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
        let status = child.wait().unwrap();
        let expected_code = if matches!(expect, Expect::Answer(_)) {
            0
        } else {
            1
        };
        assert_eq!(status.code(), Some(expected_code), "{fault}: {status}");
        let answer: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{fault}: not JSON ({e}): {stdout:.300}"));
        check(
            fault,
            expect,
            &(
                answer["is_error"].as_bool().unwrap(),
                answer["text"].as_str().unwrap().to_string(),
            ),
        );
        assert_eq!(
            settle_workers(pid, 0),
            Vec::<u32>::new(),
            "{fault}: workers left"
        );
    }
}

#[test]
fn three_crashes_within_a_minute_disable_the_plugin() {
    let scene = Scene::new(SETTINGS);
    let mut session = FaultSession::start(&scene, Frontend::Serve, &[]);
    for _ in 0..3 {
        let answer = session.call("fault_abort");
        check("fault_abort", Expect::Crash, &answer);
        assert!(answer.1.contains("SIGABRT"), "{}", answer.1);
    }
    let (is_error, text) = session.call("fault_ok");
    assert!(is_error, "{text}");
    assert!(
        text.contains("was disabled after 3 crashes within a minute")
            && text.contains("hot swap")
            && text.contains("restart"),
        "{text}"
    );
    let (is_error, text) = session.call("read_file");
    assert!(!is_error && text.contains("1 | hello"), "{text}");
    session.finish();
}

#[test]
fn tools_shows_where_each_plugin_runs() {
    let scene = Scene::new(SETTINGS);
    let run = toolhost_tests::run(
        toolhost()
            .arg("--settings")
            .arg(&scene.settings)
            .arg("--plugins")
            .arg(scene.plugins.path())
            .args(["tools", "--json"]),
    );
    let tools = run.json()["tools"].as_array().unwrap().clone();
    let mode = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["isolation"].clone())
            .unwrap()
    };
    assert_eq!(mode("fault_ok"), "process");
    assert_eq!(mode("read_file"), "in_process");
    // Without --isolation, a library outside the host's own plugin directory runs isolated.
    let installed = toolhost_tests::run(
        toolhost_tests::toolhost_as_installed()
            .arg("--plugins")
            .arg(scene.plugins.path())
            .args(["tools", "--json"]),
    );
    let all_isolated = installed.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["isolation"] == "process");
    assert!(all_isolated, "{}", installed.stdout);
}

/// A path the scene's isolated plugins must not reach.
fn outside_file(dir: &Path) -> PathBuf {
    let file = dir.join("private.txt");
    std::fs::write(&file, "private-value\n").unwrap();
    file
}

#[test]
fn a_sandboxed_worker_is_denied_what_it_was_not_granted() {
    let plugins = PluginDir::empty();
    plugins
        .add_library("read_file")
        .add_library("write_to_file");
    let ws = workdir();
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    let outside = workdir();
    let private = outside_file(outside.path());
    let config = workdir();
    let settings = config.path().join("settings.toml");
    // Both isolated with the default grant: read the workspace, write nothing.
    std::fs::write(&settings, "[plugins]\nisolation = \"process\"\n").unwrap();
    let call = |tool: &str, params: Value| {
        toolhost_tests::run(
            toolhost_tests::toolhost_as_installed()
                .arg("--settings")
                .arg(&settings)
                .arg("--plugins")
                .arg(plugins.path())
                .args([
                    "call",
                    tool,
                    &params.to_string(),
                    "--yes",
                    "--json",
                    "--cwd",
                ])
                .arg(ws.path()),
        )
        .json()
    };
    let inside = call("read_file", json!({"path": "a.txt"}));
    assert_eq!(inside["is_error"], false, "{inside}");
    // Approved (--yes), and still refused by the worker's sandbox.
    let read = call("read_file", json!({"path": private.to_str().unwrap()}));
    assert_eq!(read["is_error"], true, "{read}");
    assert!(
        !read["text"].as_str().unwrap().contains("private-value"),
        "{read}"
    );
    assert!(
        read["text"].as_str().unwrap().contains("ermission denied"),
        "{read}"
    );
    let write = call(
        "write_to_file",
        json!({"path": "new.txt", "content": "x\n"}),
    );
    assert_eq!(write["is_error"], true, "{write}");
    assert!(!ws.path().join("new.txt").exists());
    // Granted: the same write goes through.
    std::fs::write(
        &settings,
        "[plugins]\nisolation = \"process\"\n[plugins.write_to_file]\nfs = \"workspace-write\"\n",
    )
    .unwrap();
    let granted = call(
        "write_to_file",
        json!({"path": "new.txt", "content": "x\n"}),
    );
    assert_eq!(granted["is_error"], false, "{granted}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("new.txt")).unwrap(),
        "x\n"
    );
}

#[test]
fn a_worker_without_the_network_grant_reaches_no_server() {
    let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let port = server.server_addr().to_ip().unwrap().port();
    let serving = server.clone();
    std::thread::spawn(move || {
        for request in serving.incoming_requests() {
            let _ = request.respond(tiny_http::Response::from_string("reachable-page"));
        }
    });
    let plugins = PluginDir::empty();
    plugins.add_library("web_fetch");
    let ws = workdir();
    let config = workdir();
    let settings = config.path().join("settings.toml");
    let fetch = |grants: &str| {
        std::fs::write(
            &settings,
            format!("[plugins.web_fetch]\nisolation = \"process\"\n{grants}"),
        )
        .unwrap();
        toolhost_tests::run(
            toolhost()
                .arg("--settings")
                .arg(&settings)
                .arg("--plugins")
                .arg(plugins.path())
                .args(["call", "web_fetch", "--yes", "--json", "--cwd"])
                .arg(ws.path())
                .arg(
                    json!({"url": format!("http://127.0.0.1:{port}/"), "prompt": "What is it?"})
                        .to_string(),
                ),
        )
        .json()
    };
    // web_fetch reports a failed fetch as its text, as Cline does.
    let denied = fetch("");
    let text = denied["text"].as_str().unwrap();
    assert!(!text.contains("reachable-page"), "{denied}");
    assert!(text.contains("Operation not permitted"), "{denied}");
    // Granted the network, it goes through the egress proxy: the loopback only by an exact rule.
    let granted = fetch("network = true\n");
    let text = granted["text"].as_str().unwrap();
    assert!(!text.contains("reachable-page"), "{granted}");
    assert!(text.contains("a loopback address"), "{granted}");
    let allowed = fetch(&format!(
        "network = true\n[egress]\nallow = [\"127.0.0.1:{port}\"]\n"
    ));
    assert!(
        allowed["text"].as_str().unwrap().contains("reachable-page"),
        "{allowed}"
    );
    server.unblock();
}

#[test]
fn a_hot_swapped_isolated_plugin_gets_new_workers() {
    let scene = Scene::new(SETTINGS);
    // Copies, not links, so that the file can be replaced.
    let plugins = workdir();
    for name in ["fixture_faults", "read_file"] {
        let source = toolhost_tests::library(name);
        std::fs::copy(&source, plugins.path().join(source.file_name().unwrap())).unwrap();
    }
    let mut command = toolhost();
    command
        .arg("--settings")
        .arg(&scene.settings)
        .arg("--plugins")
        .arg(plugins.path());
    let mut session = FaultSession::over(command, &scene, Frontend::Serve, &["--watch"]);
    session.check_alive("starting");
    let first = workers_of(session.pid());
    assert_eq!(first.len(), 1, "{first:?}");

    // A new build (other bytes: one more after the end of the image) installed the way build
    // tools do: written aside, renamed over.
    let library = plugins.path().join("libfixture_faults.so");
    let staging = plugins.path().join("libfixture_faults.staging");
    let mut bytes = std::fs::read(toolhost_tests::library("fixture_faults")).unwrap();
    bytes.push(0);
    std::fs::write(&staging, bytes).unwrap();
    std::fs::rename(&staging, &library).unwrap();

    // New calls go to a worker of the new generation; the old generation's is stopped.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (is_error, text) = session.call("fault_ok");
        assert!(!is_error, "{text}");
        let now = workers_of(session.pid());
        if !now.is_empty() && now.iter().all(|p| !first.contains(p)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still served by {first:?} ({now:?})"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    session.finish();
}

/// The names in `dir` that look like hosts' private directories.
fn private_dirs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("toolhost-"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_host_leaves_no_private_directory_and_removes_abandoned_ones() {
    let scene = Scene::new(SETTINGS);
    let temp = workdir();
    // One a killed host left (its lock is free), one of a running host (its lock is held),
    // and a name that only looks like one.
    let abandoned = temp.path().join("toolhost-4000000-abcdef");
    let in_use = temp.path().join("toolhost-4000001-abcdef");
    let other = temp.path().join("toolhost-notes");
    for dir in [&abandoned, &in_use, &other] {
        std::fs::create_dir(dir).unwrap();
        std::fs::write(dir.join(".lock"), "").unwrap();
    }
    std::fs::write(abandoned.join("read_file-worker-0.so"), "copy").unwrap();
    let held = std::fs::File::open(in_use.join(".lock")).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let run = toolhost_tests::run(
        toolhost()
            .env("TMPDIR", temp.path())
            .arg("--settings")
            .arg(&scene.settings)
            .arg("--plugins")
            .arg(scene.plugins.path())
            .args(["call", "fault_ok", "{}", "--cwd"])
            .arg(scene.ws.path()),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        private_dirs(temp.path()),
        ["toolhost-4000001-abcdef", "toolhost-notes"],
        "the isolated call's own directory and the abandoned one are gone"
    );
}
