//! A `toolhost serve` or `toolhost mcp` process spoken to line by line, for the tests that go
//! through every frontend.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The long-running frontends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Frontend {
    /// `toolhost serve`: JSON lines.
    Serve,
    /// `toolhost mcp`: MCP over stdio.
    Mcp,
}

impl Frontend {
    /// The subcommand.
    pub fn command(self) -> &'static str {
        match self {
            Frontend::Serve => "serve",
            Frontend::Mcp => "mcp",
        }
    }
}

/// A running `serve` or `mcp` process. Its stderr is collected as it comes.
pub struct Session {
    frontend: Frontend,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
    /// MCP notifications read while waiting for answers.
    notifications: Vec<Value>,
}

impl Session {
    /// Starts `command` (a `toolhost` command with its global options) with the frontend's
    /// subcommand and `args` after it; an MCP session is initialized.
    pub fn start(mut command: Command, frontend: Frontend, args: &[&str]) -> Self {
        let mut child = command
            .arg(frontend.command())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start toolhost");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("stderr");
        let collected = stderr.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                collected
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        let mut session = Self {
            frontend,
            child,
            stdin,
            stdout,
            stderr,
            next_id: 99,
            notifications: Vec::new(),
        };
        if frontend == Frontend::Mcp {
            let answer = session.request(json!({"method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "tests", "version": "1"}}}));
            assert!(answer["result"].is_object(), "{answer}");
            session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        }
        session
    }

    /// The host's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Which frontend this is.
    pub fn frontend(&self) -> Frontend {
        self.frontend
    }

    /// Writes raw bytes (a line should end with `\n`).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("write to toolhost");
        stdin.flush().expect("flush");
    }

    /// Writes one JSON message as a line.
    pub fn send(&mut self, message: &Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    /// The next line of output, as JSON; MCP notifications are kept aside
    /// ([`Session::notifications`]) and skipped.
    pub fn read_answer(&mut self) -> Value {
        loop {
            let mut line = String::new();
            self.stdout
                .read_line(&mut line)
                .expect("read from toolhost");
            assert!(
                !line.is_empty(),
                "the host closed its output; stderr:\n{}",
                self.stderr()
            );
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not a protocol line ({e}): {line:.300}"));
            if self.frontend == Frontend::Mcp && value.get("id").is_none() {
                assert!(
                    value["method"].is_string(),
                    "not a notification: {line:.300}"
                );
                self.notifications.push(value);
                continue;
            }
            return value;
        }
    }

    /// Sends a request with the next id and returns its answer.
    pub fn request(&mut self, mut message: Value) -> Value {
        self.next_id += 1;
        message["id"] = json!(self.next_id);
        if self.frontend == Frontend::Mcp {
            message["jsonrpc"] = json!("2.0");
        }
        self.send(&message);
        let answer = self.read_answer();
        assert_eq!(answer["id"], json!(self.next_id), "{answer}");
        answer
    }

    /// Calls a tool: whether it failed, and its text.
    pub fn call(&mut self, tool: &str, params: Value) -> (bool, String) {
        match self.frontend {
            Frontend::Serve => {
                let answer = self.request(json!({"tool": tool, "params": params}));
                (
                    answer["is_error"].as_bool().expect("is_error"),
                    answer["text"].as_str().expect("text").to_string(),
                )
            }
            Frontend::Mcp => {
                let answer = self.request(json!({"method": "tools/call",
                    "params": {"name": tool, "arguments": params}}));
                let result = &answer["result"];
                let text = result["content"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                (result["isError"].as_bool().unwrap_or(false), text)
            }
        }
    }

    /// The MCP notifications received so far.
    pub fn notifications(&self) -> &[Value] {
        &self.notifications
    }

    /// What the host wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits up to `timeout` for stderr to contain `text`.
    pub fn wait_for_stderr(&self, text: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.stderr().contains(text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stderr().contains(text)
    }

    /// Closes stdin and waits for the process: its status, and the output it wrote after the
    /// last answer read.
    pub fn finish(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let mut rest = String::new();
        self.stdout
            .read_to_string(&mut rest)
            .expect("read the rest of stdout");
        let status = self.child.wait().expect("wait for toolhost");
        (status, rest)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
