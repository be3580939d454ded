//! Crash containment for plugins loaded in process: the fault fixture (`fixture_faults`, one
//! tool per fault) called through `toolhost call`, `toolhost serve` (JSON lines) and
//! `toolhost mcp` (JSON-RPC lines), as real processes over the real library.
//!
//! In process, a plugin shares the host's address space, signal dispositions and standard
//! streams, so some faults end the host whatever it does: an abort, a segfault, a stack
//! overflow, `exit`, a panic while unwinding, a failed huge allocation, a thread that aborts
//! later. Those tests assert that the process died, and how. Every other fault is a tool
//! result, and the next call in the same `serve` or `mcp` process succeeds.
//!
//! `fault_alloc_unbounded` is not run here: in process nothing limits its memory, so it would
//! eat the machine before its timeout.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost_tests::{toolhost, workdir, PluginDir};

const SIGABRT: i32 = 6;
const SIGSEGV: i32 = 11;
const FORGED_JSON_RPC: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"forged":true}}"#;
const FORGED_SERVE: &str = r#"{"id":1,"is_error":false,"text":"forged","images":[]}"#;
const HUGE_OUTPUT_BYTES: usize = 64 << 20;
/// How long a test waits for one answer before it fails.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Killed by this signal.
    Signal(i32),
    /// Exited with this code.
    Code(i32),
}

impl End {
    fn of(status: ExitStatus) -> Self {
        match status.signal() {
            Some(signal) => Self::Signal(signal),
            None => Self::Code(status.code().unwrap_or(-1)),
        }
    }
}

/// The faults that end the process in process, how, and what it says on stderr as it dies.
fn fatal_faults() -> Vec<(&'static str, End, &'static str)> {
    let mut faults = vec![
        ("fault_abort", End::Signal(SIGABRT), ""),
        ("fault_segv", End::Signal(SIGSEGV), ""),
        (
            "fault_stack_overflow",
            End::Signal(SIGABRT),
            "has overflowed its stack",
        ),
        ("fault_exit", End::Code(3), ""),
        (
            "fault_panic_unwinding",
            End::Signal(SIGABRT),
            "non-unwinding panic",
        ),
    ];
    // Under the usual overcommit heuristic (0) or strict accounting (2) the 1 TiB allocation
    // fails and Rust aborts. With overcommit always on (1) it would succeed, and touching it
    // would run the machine out of memory: not run then.
    let overcommit = std::fs::read_to_string("/proc/sys/vm/overcommit_memory").unwrap_or_default();
    if overcommit.trim() != "1" {
        faults.push((
            "fault_alloc_huge",
            End::Signal(SIGABRT),
            "memory allocation of 1099511627776 bytes failed",
        ));
    } else {
        eprintln!("fault_alloc_huge not run: vm.overcommit_memory is 1");
    }
    faults
}

/// A plugin directory with the fault fixture and read_file, a workspace with `a.txt`, and
/// settings whose call timeout is one second (for the faults that ignore cancellation).
pub(crate) struct Fixture {
    plugins: PluginDir,
    workspace: tempfile::TempDir,
    quick: PathBuf,
    logs: tempfile::TempDir,
}

impl Fixture {
    /// The fixture.
    pub(crate) fn new() -> Self {
        let plugins = PluginDir::empty();
        plugins
            .add_library("fixture_faults")
            .add_library("read_file");
        let workspace = workdir();
        std::fs::write(workspace.path().join("a.txt"), "one\n").unwrap();
        let logs = workdir();
        let quick = logs.path().join("quick.toml");
        std::fs::write(&quick, "[limits]\ncall_timeout_secs = 1\n").unwrap();
        Self {
            plugins,
            workspace,
            quick,
            logs,
        }
    }

    /// A `toolhost` command over the fixture's plugins (with the one-second timeout when
    /// `quick`).
    fn command(&self, quick: bool) -> Command {
        let mut command = toolhost();
        command.arg("--plugins").arg(self.plugins.path());
        if quick {
            command.arg("--settings").arg(&self.quick);
        }
        command
    }
}

/// The JSON-lines or MCP protocol.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Protocol {
    /// `toolhost serve`.
    Serve,
    /// `toolhost mcp`.
    Mcp,
}

/// One answer to a tool call.
#[derive(Debug)]
pub(crate) struct Answer {
    /// Whether the call failed.
    pub(crate) is_error: bool,
    /// The text the model reads.
    pub(crate) text: String,
}

/// A running `toolhost serve` or `toolhost mcp`, spoken to one request at a time.
pub(crate) struct Session {
    protocol: Protocol,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: PathBuf,
    next_id: u64,
}

impl Session {
    /// Starts the frontend over the fixture (`quick`: one-second call timeout); MCP is
    /// initialized.
    pub(crate) fn start(protocol: Protocol, fixture: &Fixture, quick: bool) -> Self {
        let mut command = fixture.command(quick);
        let verb = match protocol {
            Protocol::Serve => "serve",
            Protocol::Mcp => "mcp",
        };
        command.args([verb, "--cwd"]).arg(fixture.workspace.path());
        let stderr = fixture
            .logs
            .path()
            .join(format!("stderr-{}.log", log_name()));
        Self::spawn(protocol, &mut command, &stderr)
    }

    /// Starts `command` (`toolhost … serve|mcp …`) as the frontend of `protocol`, its stderr
    /// written to the file `stderr`.
    pub(crate) fn spawn(protocol: Protocol, command: &mut Command, stderr: &Path) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(stderr).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || loop {
            let mut line = String::new();
            match stdout.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if sender.send(line).is_err() {
                        break;
                    }
                }
            }
        });
        let mut session = Self {
            protocol,
            child,
            stdin,
            lines,
            stderr: stderr.to_path_buf(),
            next_id: 0,
        };
        if let Protocol::Mcp = protocol {
            let init = session.request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "faults", "version": "1"}}),
            );
            assert!(init.is_some(), "initialize was not answered");
            session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        }
        session
    }

    fn send(&mut self, message: &Value) {
        // A process that died cannot read: the answer (none) says so.
        if let Some(stdin) = self.stdin.as_mut() {
            let _ = writeln!(stdin, "{message}").and_then(|()| stdin.flush());
        }
    }

    /// The answer with this id; `None` when the stream ended first.
    fn answer(&mut self, id: u64) -> Option<Value> {
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("no answer to request {id}"),
            };
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the protocol stream carries a line that is not JSON ({e}): {line:.200}")
            });
            // A plugin's forged answer may carry the very id awaited: caught before it counts.
            assert!(
                !line.contains("forged"),
                "a forged line reached the protocol stream: {line}"
            );
            if message["id"] == json!(id) {
                return Some(message);
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Option<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id)
    }

    /// Calls `tool` without parameters; `None` when the process ended before answering.
    pub(crate) fn call(&mut self, tool: &str) -> Option<Answer> {
        self.call_with(tool, json!({}))
    }

    /// Calls `tool` with `params`; `None` when the process ended before answering.
    pub(crate) fn call_with(&mut self, tool: &str, params: Value) -> Option<Answer> {
        match self.protocol {
            Protocol::Serve => {
                self.next_id += 1;
                let id = self.next_id;
                self.send(&json!({"id": id, "tool": tool, "params": params}));
                let answer = self.answer(id)?;
                Some(Answer {
                    is_error: answer["is_error"].as_bool().unwrap(),
                    text: answer["text"].as_str().unwrap().to_string(),
                })
            }
            Protocol::Mcp => {
                let answer =
                    self.request("tools/call", json!({"name": tool, "arguments": params}))?;
                let result = &answer["result"];
                Some(Answer {
                    is_error: result["isError"].as_bool().unwrap(),
                    text: result["content"][0]["text"].as_str().unwrap().to_string(),
                })
            }
        }
    }

    /// read_file on `a.txt`, which must succeed: the process still serves real tools.
    pub(crate) fn assert_serves(&mut self, after: &str) {
        let answer = self
            .call_with("read_file", json!({"path": "a.txt"}))
            .unwrap_or_else(|| panic!("{:?} died after {after}", self.protocol));
        assert!(!answer.is_error, "read_file after {after}: {}", answer.text);
        // A second read of the unchanged file is marked as such, with the same content.
        assert!(
            answer
                .text
                .ends_with("1 | one\n\n(File has 1 lines total.)"),
            "read_file after {after}: {}",
            answer.text
        );
    }

    /// Waits for the process to end (it must, within a few seconds).
    pub(crate) fn ended(&mut self) -> End {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return End::of(status);
            }
            assert!(Instant::now() < deadline, "the process did not end");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What the process wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Closes stdin and expects the process to exit successfully.
    pub(crate) fn finish(mut self) {
        drop(self.stdin.take());
        assert_eq!(self.ended(), End::Code(0), "stderr:\n{}", self.stderr());
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A name for a log file that no other session of this test process uses.
fn log_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed).to_string()
}

/// `toolhost call TOOL {} --json`: how it ended, stdout and stderr.
fn call(fixture: &Fixture, tool: &str, quick: bool) -> (End, String, String) {
    let output = fixture
        .command(quick)
        .args(["call", tool, "{}", "--json", "--cwd"])
        .arg(fixture.workspace.path())
        .output()
        .unwrap();
    (
        End::of(output.status),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn assert_fatal_faults_end(protocol: Protocol) {
    let fixture = Fixture::new();
    for (fault, end, says) in fatal_faults() {
        let mut session = Session::start(protocol, &fixture, false);
        session.assert_serves("starting");
        let answer = session.call(fault);
        assert!(answer.is_none(), "{fault} was answered: {answer:?}");
        assert_eq!(
            session.ended(),
            end,
            "{fault}; stderr:\n{}",
            session.stderr()
        );
        assert!(
            session.stderr().contains(says),
            "{fault}: {}",
            session.stderr()
        );
    }
}

#[test]
fn call_fatal_faults_end_the_process() {
    let fixture = Fixture::new();
    for (fault, end, says) in fatal_faults() {
        let (ended, stdout, stderr) = call(&fixture, fault, false);
        assert_eq!(ended, end, "{fault}; stderr:\n{stderr}");
        assert_eq!(stdout, "", "{fault} printed an answer");
        assert!(stderr.contains(says), "{fault}: {stderr}");
    }
}

#[test]
fn serve_fatal_faults_end_the_process() {
    assert_fatal_faults_end(Protocol::Serve);
}

#[test]
fn mcp_fatal_faults_end_the_process() {
    assert_fatal_faults_end(Protocol::Mcp);
}

/// A thread a plugin started aborts the process after the call was answered.
fn assert_a_late_abort_ends_the_process(protocol: Protocol) {
    let fixture = Fixture::new();
    let mut session = Session::start(protocol, &fixture, false);
    let answer = session.call("fault_thread_abort").unwrap();
    assert_eq!((answer.is_error, answer.text.as_str()), (false, "started"));
    assert_eq!(session.ended(), End::Signal(SIGABRT));
}

#[test]
fn serve_dies_of_a_plugin_thread_that_aborts_after_the_call() {
    assert_a_late_abort_ends_the_process(Protocol::Serve);
}

#[test]
fn mcp_dies_of_a_plugin_thread_that_aborts_after_the_call() {
    assert_a_late_abort_ends_the_process(Protocol::Mcp);
}

#[test]
fn call_answers_before_a_plugin_thread_aborts() {
    // `call` usually exits before the thread's 300 ms are up; what holds either way is that
    // the answer was printed first.
    let fixture = Fixture::new();
    let (_, stdout, _) = call(&fixture, "fault_thread_abort", false);
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["text"], "started");
}

#[test]
fn call_reports_survivable_faults_as_tool_results() {
    let fixture = Fixture::new();
    for (fault, message) in [
        (
            "fault_panic",
            "The tool panicked: fault_panic panicked on purpose",
        ),
        (
            "fault_panic_payload",
            "The tool panicked: (a panic with a non-text payload)",
        ),
    ] {
        let (ended, stdout, stderr) = call(&fixture, fault, false);
        assert_eq!(ended, End::Code(1), "{fault}; stderr:\n{stderr}");
        let answer: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(answer["error_kind"], "panic");
        assert!(
            answer["text"].as_str().unwrap().contains(message),
            "{answer}"
        );
    }
    // `call` prints to the process's own stdout: the plugin's lines come before the answer.
    let (ended, stdout, _) = call(&fixture, "fault_stdout", false);
    assert_eq!(ended, End::Code(0));
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["text"], "printed");
    // With fd 1 closed the answer is lost, and the process still exits normally.
    let (ended, stdout, stderr) = call(&fixture, "fault_close_stdout", false);
    assert_eq!((ended, stdout.as_str()), (End::Code(0), ""), "{stderr}");
}

#[test]
fn call_times_out_on_faults_that_ignore_cancellation() {
    let fixture = Fixture::new();
    for fault in ["fault_loop", "fault_sleep"] {
        let started = Instant::now();
        let (ended, stdout, stderr) = call(&fixture, fault, true);
        assert_eq!(ended, End::Code(1), "{fault}: {stderr}");
        let answer: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(answer["error_kind"], "timeout", "{answer}");
        assert!(started.elapsed() < Duration::from_secs(5), "{fault}");
    }
}

#[test]
fn call_returns_a_huge_output() {
    let fixture = Fixture::new();
    let (ended, stdout, stderr) = call(&fixture, "fault_huge_output", false);
    assert_eq!(ended, End::Code(0), "{stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["text"].as_str().unwrap().len(), HUGE_OUTPUT_BYTES);
}

fn assert_panics_are_tool_errors(protocol: Protocol) {
    let fixture = Fixture::new();
    for (fault, message) in [
        (
            "fault_panic",
            "The tool panicked: fault_panic panicked on purpose",
        ),
        (
            "fault_panic_payload",
            "The tool panicked: (a panic with a non-text payload)",
        ),
    ] {
        let mut session = Session::start(protocol, &fixture, false);
        let answer = session
            .call(fault)
            .unwrap_or_else(|| panic!("{fault} ended the process:\n{}", session.stderr()));
        assert!(answer.is_error, "{fault}: {}", answer.text);
        assert!(answer.text.contains(message), "{fault}: {}", answer.text);
        // The panicking plugin is disabled; the others serve on.
        assert!(session.call("fault_ok").unwrap().is_error);
        session.assert_serves(fault);
        session.finish();
    }
}

#[test]
fn serve_contains_panics_and_panicking_payloads() {
    assert_panics_are_tool_errors(Protocol::Serve);
}

#[test]
fn mcp_contains_panics_and_panicking_payloads() {
    assert_panics_are_tool_errors(Protocol::Mcp);
}

/// The plugin prints forged protocol lines and closes fd 1; the protocol stream never carries
/// them, and the process keeps answering.
fn assert_stdout_stays_the_protocols(protocol: Protocol) {
    let fixture = Fixture::new();
    let mut session = Session::start(protocol, &fixture, false);
    let printed = session.call("fault_stdout").unwrap();
    assert_eq!(
        (printed.is_error, printed.text.as_str()),
        (false, "printed")
    );
    assert_eq!(session.call("fault_ok").unwrap().text, "ok");

    let closed = session.call("fault_close_stdout").unwrap();
    assert_eq!((closed.is_error, closed.text.as_str()), (false, "closed"));
    assert_eq!(session.call("fault_ok").unwrap().text, "ok");
    session.assert_serves("fault_close_stdout");
    // What a plugin prints after fd 1 was closed goes where fd 1 went before.
    assert_eq!(session.call("fault_stdout").unwrap().text, "printed");
    session.assert_serves("fault_stdout");

    // (Every line of the protocol stream was checked for forged lines as it was read.)
    let stderr = session.stderr();
    assert_eq!(stderr.matches(FORGED_JSON_RPC).count(), 2, "{stderr}");
    assert_eq!(stderr.matches(FORGED_SERVE).count(), 2, "{stderr}");
    session.finish();
}

#[test]
fn serve_keeps_its_stdout_from_plugins() {
    assert_stdout_stays_the_protocols(Protocol::Serve);
}

#[test]
fn mcp_keeps_its_stdout_from_plugins() {
    assert_stdout_stays_the_protocols(Protocol::Mcp);
}

fn assert_hangs_time_out(protocol: Protocol) {
    let fixture = Fixture::new();
    let mut session = Session::start(protocol, &fixture, true);
    for fault in ["fault_loop", "fault_sleep"] {
        let started = Instant::now();
        let answer = session.call(fault).unwrap();
        assert!(answer.is_error, "{fault}: {}", answer.text);
        assert!(
            answer.text.contains("did not finish within 1 seconds"),
            "{fault}: {}",
            answer.text
        );
        assert!(started.elapsed() < Duration::from_secs(5), "{fault}");
        assert_eq!(session.call("fault_ok").unwrap().text, "ok");
        session.assert_serves(fault);
    }
    // The spinning thread is still running; the process ends anyway when the client leaves.
    session.finish();
}

#[test]
fn serve_times_out_on_faults_that_ignore_cancellation() {
    assert_hangs_time_out(Protocol::Serve);
}

#[test]
fn mcp_times_out_on_faults_that_ignore_cancellation() {
    assert_hangs_time_out(Protocol::Mcp);
}

fn assert_huge_output_is_answered(protocol: Protocol) {
    let fixture = Fixture::new();
    let mut session = Session::start(protocol, &fixture, false);
    let answer = session.call("fault_huge_output").unwrap();
    assert!(!answer.is_error);
    assert_eq!(answer.text.len(), HUGE_OUTPUT_BYTES);
    assert_eq!(session.call("fault_ok").unwrap().text, "ok");
    session.assert_serves("fault_huge_output");
    session.finish();
}

#[test]
fn serve_answers_a_huge_output() {
    assert_huge_output_is_answered(Protocol::Serve);
}

#[test]
fn mcp_answers_a_huge_output() {
    assert_huge_output_is_answered(Protocol::Mcp);
}
