//! `bench mcp`: `toolhost mcp` against `@modelcontextprotocol/server-filesystem` (npm), both
//! driven over stdio by the same small JSON-RPC client.
//!
//! Two figures, each with the reference server beside it:
//! - startup: process spawn to the `initialize` response received (toolhost with every release
//!   plugin loaded; node with its server module loaded), runs interleaved, median;
//! - read latency: one `tools/call` round trip reading the same 10 KB file (toolhost's
//!   `read_file`, the reference's `read_text_file`), calls alternating between the two open
//!   sessions after a warm-up, median and p95; then the same with read_file isolated in a
//!   worker process (`--isolation process`) against the reference again; the first round also
//!   times the floor, an rmcp server whose tool only reads the file (`xtask/mcp-floor`), so
//!   that what the protocol library costs shows beside what toolhost adds;
//! - over streamable HTTP ([`super::mcp_http`]): read latency beside stdio, and many sessions
//!   at once.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bench::startup::{ms, tempfile_dir, warm_plugin_index};
use crate::build;
use crate::util::{plugin_crates, target_dir};

/// Startup runs per server; the median is reported.
const STARTUP_RUNS: usize = 20;

/// Timed read calls per server.
pub(super) const CALLS: usize = 500;

/// Untimed calls per server first (caches, JIT, allocator).
pub(super) const WARMUP: usize = 50;

/// The size of the file both servers read.
const FILE_BYTES: usize = 10 * 1024;

/// toolhost's time over the reference's that each figure should stay under.
const STARTUP_TARGET: f64 = 0.1;
const READ_TARGET: f64 = 0.2;

/// The same with read_file isolated in a worker process.
const ISOLATED_READ_TARGET: f64 = 0.5;

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

/// Runs the benchmark and prints the table.
pub fn mcp() -> Result<Value, String> {
    let dist = build::dist()?;
    let (reference_entry, reference_version) = reference_server()?;
    let workspace = tempfile_dir("toolhost-bench-mcp")?
        .canonicalize()
        .map_err(|e| e.to_string())?;
    let file = workspace.join("ten_kb.txt");
    std::fs::write(&file, ten_kb_text()).map_err(|e| e.to_string())?;
    // As a user runs it: with the plugin index, made by an earlier run.
    let index = workspace.join("plugin-index.json");
    warm_plugin_index(&dist.join("bin/toolhost"), &dist.join("plugins"), &index)?;

    let toolhost = Server {
        name: "toolhost mcp",
        program: dist.join("bin/toolhost"),
        args: vec![
            "--plugins".into(),
            dist.join("plugins").display().to_string(),
            "mcp".into(),
            "--cwd".into(),
            workspace.display().to_string(),
        ],
        // An empty config home: the user's settings file must not change what is measured.
        envs: vec![
            ("XDG_CONFIG_HOME", workspace.clone()),
            ("TOOLHOST_PLUGIN_INDEX", index.clone()),
        ],
        tool: "read_file",
        arguments: json!({"path": "ten_kb.txt"}),
    };
    let reference = Server {
        name: "server-filesystem",
        program: PathBuf::from("node"),
        args: vec![
            reference_entry.display().to_string(),
            workspace.display().to_string(),
        ],
        envs: Vec::new(),
        tool: "read_text_file",
        arguments: json!({"path": file}),
    };

    // The same server with read_file isolated in a worker process.
    let mut isolated_args = vec!["--isolation".to_string(), "process".to_string()];
    isolated_args.extend(toolhost.args.iter().cloned());
    let isolated = Server {
        name: "toolhost mcp, isolated",
        args: isolated_args,
        program: toolhost.program.clone(),
        envs: toolhost.envs.clone(),
        tool: toolhost.tool,
        arguments: toolhost.arguments.clone(),
    };

    let plugins = plugin_crates()?.len();
    let startup = startup_medians(&toolhost, &reference)?;
    // rmcp alone, beside the two (see `xtask/mcp-floor`).
    let floor = Server {
        name: "rmcp alone (mcp-floor)",
        program: target_dir().join("release/mcp-floor"),
        args: Vec::new(),
        envs: Vec::new(),
        tool: "read_file",
        arguments: json!({"path": file}),
    };
    let [toolhost_calls, reference_calls, floor_calls] =
        read_latencies(&[&toolhost, &reference, &floor])?
            .try_into()
            .map_err(|_| "three servers, three series")?;
    let [isolated_calls, reference_again] = read_latencies(&[&isolated, &reference])?
        .try_into()
        .map_err(|_| "two servers, two series")?;
    let floor_ratio = ms(median(&floor_calls)) / ms(median(&reference_calls));
    let isolated_ratio = ms(median(&isolated_calls)) / ms(median(&reference_again));
    let startup_ratio = ms(startup.0) / ms(startup.1);
    let read_ratio = ms(median(&toolhost_calls)) / ms(median(&reference_calls));

    println!(
        "mcp: toolhost mcp ({plugins} plugins, release) vs {NPM_PACKAGE} {reference_version} (node)"
    );
    println!("  startup: spawn to initialize answered, median of {STARTUP_RUNS}");
    println!("    {:<36} {:>9.2} ms", toolhost.name, ms(startup.0));
    println!("    {:<36} {:>9.2} ms", reference.name, ms(startup.1));
    println!(
        "    ratio {startup_ratio:.3} (target <= {STARTUP_TARGET}) {}",
        verdict(startup_ratio, STARTUP_TARGET)
    );
    println!("  read a {FILE_BYTES}-byte file: tools/call round trip, {CALLS} calls each");
    println!("    {:<36} {:>9} {:>9}", "", "median", "p95");
    for (server, calls) in [
        (&toolhost, &toolhost_calls),
        (&reference, &reference_calls),
        (&floor, &floor_calls),
    ] {
        println!(
            "    {:<36} {:>6.3} ms {:>6.3} ms",
            format!("{} {}", server.name, server.tool),
            ms(median(calls)),
            ms(p95(calls))
        );
    }
    println!(
        "    ratio of medians {read_ratio:.3} (target <= {READ_TARGET}) {}",
        verdict(read_ratio, READ_TARGET)
    );
    println!("    the floor, rmcp alone: ratio of medians {floor_ratio:.3}");
    for (server, calls) in [(&isolated, &isolated_calls), (&reference, &reference_again)] {
        println!(
            "    {:<36} {:>6.3} ms {:>6.3} ms",
            format!("{} {}", server.name, server.tool),
            ms(median(calls)),
            ms(p95(calls))
        );
    }
    println!(
        "    isolated: ratio of medians {isolated_ratio:.3} (target <= {ISOLATED_READ_TARGET}) {}",
        verdict(isolated_ratio, ISOLATED_READ_TARGET)
    );
    let http = super::mcp_http::figures(&toolhost)?;
    Ok(json!({
        "http": http,
        "bench": "mcp",
        "reference": format!("{NPM_PACKAGE} {reference_version}"),
        "plugins": plugins,
        "startup_ms": {"toolhost": ms(startup.0), "reference": ms(startup.1)},
        "startup_ratio": startup_ratio,
        "startup_target": STARTUP_TARGET,
        "read_ms": {
            "toolhost": {"median": ms(median(&toolhost_calls)), "p95": ms(p95(&toolhost_calls))},
            "reference": {"median": ms(median(&reference_calls)), "p95": ms(p95(&reference_calls))},
        },
        "read_ratio": read_ratio,
        "floor_read_ms": {"median": ms(median(&floor_calls)), "p95": ms(p95(&floor_calls))},
        "floor_read_ratio": floor_ratio,
        "read_target": READ_TARGET,
        "isolated_read_ms": {"median": ms(median(&isolated_calls)), "p95": ms(p95(&isolated_calls)),
                             "reference_median": ms(median(&reference_again))},
        "isolated_read_ratio": isolated_ratio,
        "isolated_read_target": ISOLATED_READ_TARGET,
    }))
}

fn verdict(ratio: f64, target: f64) -> &'static str {
    if ratio <= target {
        "ok"
    } else {
        "MISSED"
    }
}

/// Median startup of each server, runs interleaved so that noise hits both alike.
fn startup_medians(a: &Server, b: &Server) -> Result<(Duration, Duration), String> {
    let mut times_a = Vec::with_capacity(STARTUP_RUNS);
    let mut times_b = Vec::with_capacity(STARTUP_RUNS);
    for _ in 0..STARTUP_RUNS {
        times_a.push(time_startup(a)?);
        times_b.push(time_startup(b)?);
    }
    Ok((median(&times_a), median(&times_b)))
}

/// Spawn to the `initialize` response; the session is then closed (untimed).
fn time_startup(server: &Server) -> Result<Duration, String> {
    let start = Instant::now();
    let mut session = Session::spawn(server.command(), server.name)?;
    session.initialize()?;
    let elapsed = start.elapsed();
    session.close()?;
    Ok(elapsed)
}

/// Round-trip times of the read call on each server, calls alternating between the sessions.
fn read_latencies(servers: &[&Server]) -> Result<Vec<Vec<Duration>>, String> {
    let mut sessions = Vec::with_capacity(servers.len());
    for server in servers {
        let mut session = Session::spawn(server.command(), server.name)?;
        session.initialize()?;
        session.notify("notifications/initialized")?;
        let first = session.call_tool(server.tool, &server.arguments)?;
        check_read(server, &first)?;
        for _ in 1..WARMUP {
            session.call_tool(server.tool, &server.arguments)?;
        }
        sessions.push(session);
    }
    let mut times = vec![Vec::with_capacity(CALLS); servers.len()];
    for _ in 0..CALLS {
        for ((session, server), times) in sessions.iter_mut().zip(servers).zip(&mut times) {
            let start = Instant::now();
            session.call_tool(server.tool, &server.arguments)?;
            times.push(start.elapsed());
        }
    }
    for session in sessions {
        session.close()?;
    }
    Ok(times)
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

fn median(times: &[Duration]) -> Duration {
    percentile(times, 50)
}

fn p95(times: &[Duration]) -> Duration {
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
