//! `bench mcp` over streamable HTTP (`toolhost mcp --http`), beside stdio in the same run:
//!
//! - read latency: the same `read_file` call over one HTTP session and over one stdio session
//!   of toolhost, calls alternating between them, median and p95;
//! - load: [`SESSIONS`] sessions at once, each making [`CALLS_PER_SESSION`] calls one after
//!   another; every failure counted (target: none), the p50 and p99 of a call, the calls per
//!   second.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::mcp_client::{check_read, percentile, Server, Session, CALLS, WARMUP};
use crate::bench::startup::ms;

/// Sessions of the load figure.
const SESSIONS: usize = 32;

/// Calls each session of the load figure makes.
const CALLS_PER_SESSION: usize = 1000;

/// The bearer token the server is started with.
const TOKEN: &str = "bench-token-0123456789abcdef";

/// `toolhost mcp --http` on a free port of 127.0.0.1, killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    /// Starts `server` (toolhost's stdio set-up) with `--http 127.0.0.1:0` and waits for the
    /// address it prints.
    fn start(server: &Server) -> Result<Self, String> {
        let mut command = server.command();
        command
            .arg("--http")
            .arg("127.0.0.1:0")
            .env("TOOLHOST_MCP_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start toolhost mcp --http: {e}"))?;
        let stderr = child.stderr.take().ok_or("no stderr pipe")?;
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let Some(Ok(line)) = lines.next() else {
                let _ = child.kill();
                return Err("toolhost mcp --http ended before it printed its address".into());
            };
            if let Some(url) = line.split(" at ").nth(1).filter(|u| u.starts_with("http")) {
                break url.trim().to_string();
            }
        };
        // The rest of stderr is drained, so that the server never blocks on it.
        std::thread::spawn(move || lines.for_each(drop));
        Ok(Self { child, url })
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One MCP session over streamable HTTP (keep-alive connection, SSE or JSON answers).
struct HttpSession {
    agent: ureq::Agent,
    url: String,
    session: String,
    next_id: u64,
}

impl HttpSession {
    /// `initialize`, then `notifications/initialized`.
    fn open(url: &str) -> Result<Self, String> {
        // No timeout on the whole call nor on name resolution: with one, ureq resolves on a
        // thread of its own for every request, and starting that thread (tens of µs, more on a
        // busy machine) would be measured as the server's time.
        let limit = Some(Duration::from_secs(60));
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(limit)
            .timeout_recv_response(limit)
            .timeout_recv_body(limit)
            .build()
            .into();
        let mut session = Self {
            agent,
            url: url.to_string(),
            session: String::new(),
            next_id: 1,
        };
        let initialize = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "toolhost-bench", "version": "1"},
        });
        let (headers, _) = session.request("initialize", initialize)?;
        session.session = headers.ok_or("no Mcp-Session-Id in the initialize answer")?;
        session.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(session)
    }

    fn call_tool(&mut self, name: &str, arguments: &Value) -> Result<Value, String> {
        let (_, result) =
            self.request("tools/call", json!({"name": name, "arguments": arguments}))?;
        Ok(result)
    }

    /// Sends a request; its answer's session id header and result.
    fn request(&mut self, method: &str, params: Value) -> Result<(Option<String>, Value), String> {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (session, body) = self.post(&message)?;
        let answer = answer_of(&body, id)
            .ok_or_else(|| format!("no answer to {method} in: {}", shorten(&body)))?;
        if let Some(error) = answer.get("error") {
            return Err(format!("{method} answered with {error}"));
        }
        Ok((session, answer["result"].clone()))
    }

    /// POSTs one message; the session id header and the body.
    fn post(&self, message: &Value) -> Result<(Option<String>, String), String> {
        let mut request = self
            .agent
            .post(&self.url)
            .header("Authorization", format!("Bearer {TOKEN}"))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        if !self.session.is_empty() {
            request = request.header("Mcp-Session-Id", &self.session);
        }
        let mut response = request
            .send(message.to_string())
            .map_err(|e| format!("POST {}: {e}", self.url))?;
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response
            .body_mut()
            .read_to_string()
            .map_err(|e| format!("reading the answer: {e}"))?;
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", shorten(&body)));
        }
        Ok((session, body))
    }

    /// Ends the session (`DELETE`).
    fn close(self) {
        let _ = self
            .agent
            .delete(&self.url)
            .header("Authorization", format!("Bearer {TOKEN}"))
            .header("Mcp-Session-Id", &self.session)
            .call();
    }
}

/// The JSON-RPC answer with `id` in a body: JSON, or server-sent events whose `data:` lines
/// carry the messages.
fn answer_of(body: &str, id: u64) -> Option<Value> {
    let trimmed = body.trim_start();
    let messages: Vec<Value> = if trimmed.starts_with('{') {
        serde_json::from_str(trimmed).into_iter().collect()
    } else {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect()
    };
    messages.into_iter().find(|message| message["id"] == id)
}

fn shorten(text: &str) -> String {
    text.chars().take(300).collect()
}

/// Both figures, printed and returned as JSON.
pub(super) fn figures(toolhost: &Server) -> Result<Value, String> {
    let server = HttpServer::start(toolhost)?;
    let (http, stdio) = beside_stdio(&server, toolhost)?;
    let load = load(&server, toolhost)?;
    let ratio = ms(percentile(&http, 50)) / ms(percentile(&stdio, 50));
    println!("  over streamable HTTP (toolhost mcp --http, keep-alive, one session), {CALLS} calls each, alternating");
    println!("    {:<36} {:>9} {:>9}", "", "median", "p95");
    for (name, calls) in [("HTTP read_file", &http), ("stdio read_file", &stdio)] {
        println!(
            "    {name:<36} {:>6.3} ms {:>6.3} ms",
            ms(percentile(calls, 50)),
            ms(percentile(calls, 95))
        );
    }
    println!("    HTTP over stdio, ratio of medians {ratio:.3}");
    println!(
        "  load: {SESSIONS} HTTP sessions at once x {CALLS_PER_SESSION} read_file calls: {} failed; a call p50 {:.3} ms, p99 {:.3} ms; {:.0} calls/s",
        load.failed,
        ms(percentile(&load.times, 50)),
        ms(percentile(&load.times, 99)),
        load.calls_per_second
    );
    if let Some(first) = &load.first_failure {
        println!("    first failure: {first}");
    }
    Ok(json!({
        "http_read_ms": {"median": ms(percentile(&http, 50)), "p95": ms(percentile(&http, 95))},
        "stdio_read_ms": {"median": ms(percentile(&stdio, 50)), "p95": ms(percentile(&stdio, 95))},
        "http_over_stdio": ratio,
        "load": {
            "sessions": SESSIONS,
            "calls_per_session": CALLS_PER_SESSION,
            "failed": load.failed,
            "p50_ms": ms(percentile(&load.times, 50)),
            "p99_ms": ms(percentile(&load.times, 99)),
            "calls_per_second": load.calls_per_second,
        },
    }))
}

/// Round trips of the read call over one HTTP session and one stdio session, alternating.
fn beside_stdio(
    server: &HttpServer,
    toolhost: &Server,
) -> Result<(Vec<Duration>, Vec<Duration>), String> {
    let mut http = HttpSession::open(&server.url)?;
    let mut stdio = Session::spawn(toolhost.command(), toolhost.name)?;
    stdio.initialize()?;
    stdio.notify("notifications/initialized")?;
    check_read(
        toolhost,
        &http.call_tool(toolhost.tool, &toolhost.arguments)?,
    )?;
    check_read(
        toolhost,
        &stdio.call_tool(toolhost.tool, &toolhost.arguments)?,
    )?;
    for _ in 1..WARMUP {
        http.call_tool(toolhost.tool, &toolhost.arguments)?;
        stdio.call_tool(toolhost.tool, &toolhost.arguments)?;
    }
    let mut times = (Vec::with_capacity(CALLS), Vec::with_capacity(CALLS));
    for _ in 0..CALLS {
        let start = Instant::now();
        http.call_tool(toolhost.tool, &toolhost.arguments)?;
        times.0.push(start.elapsed());
        let start = Instant::now();
        stdio.call_tool(toolhost.tool, &toolhost.arguments)?;
        times.1.push(start.elapsed());
    }
    http.close();
    stdio.close()?;
    Ok(times)
}

/// What the load figure found.
struct Load {
    times: Vec<Duration>,
    failed: usize,
    first_failure: Option<String>,
    calls_per_second: f64,
}

/// [`SESSIONS`] threads, each its own session, calling at once.
fn load(server: &HttpServer, toolhost: &Server) -> Result<Load, String> {
    let start = Instant::now();
    let runs: Vec<_> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..SESSIONS)
            .map(|_| scope.spawn(|| one_session(&server.url, toolhost)))
            .collect();
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err("a load thread panicked".into()))
            })
            .collect()
    });
    let elapsed = start.elapsed();
    let mut load = Load {
        times: Vec::with_capacity(SESSIONS * CALLS_PER_SESSION),
        failed: 0,
        first_failure: None,
        calls_per_second: 0.0,
    };
    for run in runs {
        match run {
            Ok((times, failures)) => {
                load.times.extend(times);
                load.failed += failures.len();
                load.first_failure = load.first_failure.or(failures.into_iter().next());
            }
            Err(e) => {
                // A session that could not open counts all its calls as failed.
                load.failed += CALLS_PER_SESSION;
                load.first_failure.get_or_insert(e);
            }
        }
    }
    #[allow(clippy::cast_precision_loss)] // a count of calls
    let done = load.times.len() as f64;
    load.calls_per_second = done / elapsed.as_secs_f64();
    Ok(load)
}

/// One session's calls: the times of those that succeeded and why the others failed.
fn one_session(url: &str, toolhost: &Server) -> Result<(Vec<Duration>, Vec<String>), String> {
    let mut session = HttpSession::open(url)?;
    let mut times = Vec::with_capacity(CALLS_PER_SESSION);
    let mut failures = Vec::new();
    for _ in 0..CALLS_PER_SESSION {
        let start = Instant::now();
        match session.call_tool(toolhost.tool, &toolhost.arguments) {
            Ok(result) if result["isError"] != true => times.push(start.elapsed()),
            Ok(result) => failures.push(format!("isError: {}", shorten(&result.to_string()))),
            Err(e) => failures.push(e),
        }
    }
    session.close();
    Ok((times, failures))
}
