//! What the MCP benches share: a small JSON-RPC client over a server's stdio, the servers
//! under test, the file they read and the reference server (npm).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::target_dir;

/// Timed read calls per server.
pub(super) const CALLS: usize = 500;

/// Untimed calls per server first (caches, JIT, allocator).
pub(super) const WARMUP: usize = 50;

/// The size of the file both servers read.
pub(super) const FILE_BYTES: usize = 10 * 1024;

/// The reference server's npm package.
pub(super) const NPM_PACKAGE: &str = "@modelcontextprotocol/server-filesystem";

/// One server under test: how to start it and which call reads the file.
pub(super) struct Server {
    pub(super) name: &'static str,
    pub(super) program: PathBuf,
    pub(super) args: Vec<String>,
    pub(super) envs: Vec<(&'static str, PathBuf)>,
    pub(super) tool: &'static str,
    pub(super) arguments: Value,
}

impl Server {
    pub(super) fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .env_remove("TOOLHOST_PLUGIN_PATH")
            .env_remove("TOOLHOST_SETTINGS")
            .env_remove("TOOLHOST_LOG");
        for (key, value) in &self.envs {
            command.env(key, value);
        }
        command
    }
}

/// The read must have succeeded and returned the whole file (toolhost numbers the lines, so
/// its text is longer).
pub(super) fn check_read(server: &Server, result: &Value) -> Result<(), String> {
    let text = result["content"][0]["text"].as_str().unwrap_or("");
    if result["isError"] == true || text.len() < FILE_BYTES || !text.contains("line 0001:") {
        return Err(format!(
            "{} {} did not return the file: {}",
            server.name,
            server.tool,
            result.to_string().chars().take(500).collect::<String>()
        ));
    }
    Ok(())
}

/// Text lines up to exactly `FILE_BYTES` bytes.
pub(super) fn ten_kb_text() -> String {
    let mut text = String::with_capacity(FILE_BYTES);
    let mut n = 1;
    while text.len() < FILE_BYTES {
        text.push_str(&format!(
            "line {n:04}: the quick brown fox jumps over the lazy dog\n"
        ));
        n += 1;
    }
    text.truncate(FILE_BYTES - 1);
    text.push('\n');
    text
}

pub(super) fn median(times: &[Duration]) -> Duration {
    percentile(times, 50)
}

pub(super) fn p95(times: &[Duration]) -> Duration {
    percentile(times, 95)
}

pub(super) fn percentile(times: &[Duration], percent: usize) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted
        .get((sorted.len() * percent / 100).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

/// The reference server's entry script and version, installed with npm into
/// `target/bench/node` when missing.
pub(super) fn reference_server() -> Result<(PathBuf, String), String> {
    let prefix = target_dir().join("bench/node");
    let package_dir = prefix.join("node_modules").join(NPM_PACKAGE);
    let manifest = package_dir.join("package.json");
    if !manifest.exists() {
        std::fs::create_dir_all(&prefix).map_err(|e| e.to_string())?;
        println!("installing {NPM_PACKAGE} into {}", prefix.display());
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(&prefix)
            .arg(NPM_PACKAGE)
            .status()
            .map_err(|e| format!("cannot run npm (the mcp bench needs node and npm): {e}"))?;
        if !status.success() {
            return Err(format!("npm install {NPM_PACKAGE} failed ({status})"));
        }
    }
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let package: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let entry = match &package["bin"] {
        Value::String(path) => path.clone(),
        Value::Object(bins) => bins
            .values()
            .find_map(Value::as_str)
            .unwrap_or("dist/index.js")
            .to_string(),
        _ => "dist/index.js".to_string(),
    };
    let version = package["version"].as_str().unwrap_or("?").to_string();
    Ok((package_dir.join(entry), version))
}

/// An MCP server process spoken to in newline-delimited JSON-RPC (MCP's stdio framing).
///
/// Written by hand rather than with an MCP client crate: the bench sends three kinds of
/// message, and a client crate would bring an async runtime into xtask, which stays light.
pub(super) struct Session {
    name: &'static str,
    pub(super) child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

impl Session {
    pub(super) fn spawn(mut command: Command, name: &'static str) -> Result<Self, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {name} ({command:?}): {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin pipe")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout pipe")?);
        Ok(Self {
            name,
            child,
            stdin,
            stdout,
            next_id: 1,
            line: String::new(),
        })
    }

    pub(super) fn initialize(&mut self) -> Result<Value, String> {
        self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "toolhost-bench", "version": "1"},
            }),
        )
    }

    pub(super) fn call_tool(&mut self, name: &str, arguments: &Value) -> Result<Value, String> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    pub(super) fn notify(&mut self, method: &str) -> Result<(), String> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let mut bytes = message.to_string().into_bytes();
        bytes.push(b'\n');
        self.stdin
            .write_all(&bytes)
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("cannot write to {}: {e}", self.name))
    }

    /// Sends a request and reads messages until its response (notifications are skipped).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            self.line.clear();
            let read = self
                .stdout
                .read_line(&mut self.line)
                .map_err(|e| format!("cannot read from {}: {e}", self.name))?;
            if read == 0 {
                return Err(format!("{} closed stdout during {method}", self.name));
            }
            let message: Value = serde_json::from_str(&self.line).map_err(|e| {
                format!(
                    "{} wrote something that is not JSON ({e}): {}",
                    self.name, self.line
                )
            })?;
            if message["id"] != id {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(format!("{} answered {method} with {error}", self.name));
            }
            return Ok(message["result"].clone());
        }
    }

    /// Closes stdin and waits for the exit; a server still running after 5 s is killed.
    pub(super) fn close(self) -> Result<(), String> {
        let Self {
            name,
            mut child,
            stdin,
            ..
        } = self;
        drop(stdin);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    eprintln!("{name} did not exit within 5 s of stdin closing; killed");
                    return Ok(());
                }
                Err(e) => return Err(format!("cannot wait for {name}: {e}")),
            }
        }
    }
}
