//! `toolhost mcp --http`: streamable HTTP driven by the official Python SDK and TypeScript SDK
//! clients, and raw HTTP requests for the status codes: the bearer token, a foreign `Origin`,
//! 32 concurrent sessions each a task of its own, a call's log messages for its session only,
//! `DELETE` ending a session and removing its commands' output logs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost_tests::{workdir, PluginDir};

/// The bearer token the servers of these tests are started with.
pub(crate) const TOKEN: &str = "test-token-0123456789";

/// The Python client: `sessions` concurrent sessions, each reading a.txt three times.
const PYTHON_CLIENT: &str = r#"
import asyncio, json, sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

config = json.loads(open(sys.argv[1]).read())


async def session_reads(token, origin=None):
    headers = {"Authorization": f"Bearer {token}"}
    if origin:
        headers["Origin"] = origin
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(config["url"], http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                texts = []
                for _ in range(3):
                    result = await session.call_tool("read_file", {"path": "a.txt"})
                    texts.append(result.content[0].text)
                return texts


async def outcome(coroutine):
    try:
        return {"texts": await asyncio.wait_for(coroutine, 60)}
    except BaseException as e:
        return {"error": type(e).__name__}


async def main():
    sessions = await asyncio.gather(*[session_reads(config["token"]) for _ in range(config["sessions"])])
    out = {
        "sessions": sessions,
        "wrong_token": await outcome(session_reads("wrong")),
        "foreign_origin": await outcome(session_reads(config["token"], "http://evil.example")),
    }
    print(json.dumps(out))


asyncio.run(main())
"#;

/// The TypeScript client: one session with the token, one without.
const TS_CLIENT: &str = r#"
const fs = require("fs");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

async function session(token) {
  const client = new Client({ name: "ts-http", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(config.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  const result = await client.callTool({ name: "read_file", arguments: { path: "a.txt" } });
  await transport.terminateSession();
  await client.close();
  return result.content[0].text;
}

async function main() {
  const out = { text: await session(config.token) };
  try {
    await session("wrong");
    out.wrong_token = "connected";
  } catch (e) {
    out.wrong_token = "refused";
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
"#;

/// The Python client: two sessions open at once, each calling fixture_log with its own
/// message, each keeping the log messages it receives.
const LOGS_CLIENT: &str = r#"
import asyncio, json, sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

config = json.loads(open(sys.argv[1]).read())
logs = {"a": [], "b": []}


def keep(name):
    async def on_log(params):
        logs[name].append(str(params.data))
    return on_log


async def main():
    headers = {"Authorization": f"Bearer {config['token']}"}
    async with create_mcp_http_client(headers=headers) as http_a, create_mcp_http_client(headers=headers) as http_b:
        async with streamable_http_client(config["url"], http_client=http_a) as a_streams, streamable_http_client(config["url"], http_client=http_b) as b_streams:
            async with ClientSession(a_streams[0], a_streams[1], logging_callback=keep("a")) as a, ClientSession(b_streams[0], b_streams[1], logging_callback=keep("b")) as b:
                await a.initialize()
                await b.initialize()
                for session, name in ((a, "a"), (b, "b")):
                    await session.call_tool("fixture_log", {"message": f"only for session {name}"})
                    # Time for a message sent elsewhere to arrive.
                    await asyncio.sleep(0.5)
    print(json.dumps(logs))


asyncio.run(main())
"#;

/// A `toolhost mcp --http 127.0.0.1:0` process and the address it serves.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) addr: String,
}

impl Server {
    fn start(plugins: &Path, ws: &Path) -> Self {
        Self::start_with(plugins, ws, &["--isolation", "in-process"])
    }

    /// The same with `options` before the subcommand (where plugins run, among them).
    pub(crate) fn start_with(plugins: &Path, ws: &Path, options: &[&str]) -> Self {
        let mut command = toolhost_tests::toolhost_as_installed();
        command.args(options).arg("--plugins").arg(plugins);
        Self::start_command(command, ws)
    }

    /// The same from `command` (a `toolhost` command with its global options).
    fn start_command(mut command: Command, ws: &Path) -> Self {
        command
            .args(["mcp", "--http", "127.0.0.1:0", "--cwd"])
            .arg(ws);
        Self::spawn(command)
    }

    /// Starts `command`, a `toolhost ... mcp --http 127.0.0.1:0 ...` (the token in its
    /// environment), and waits for the address it prints.
    pub(crate) fn spawn(mut command: Command) -> Self {
        let mut child = command
            .env("TOOLHOST_MCP_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut addr = None;
        let mut line = String::new();
        while stderr.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(rest) = line
                .trim()
                .strip_prefix("toolhost mcp: serving MCP over streamable HTTP at http://")
            {
                addr = Some(rest.trim_end_matches("/mcp").to_string());
                break;
            }
            line.clear();
        }
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Self {
            child,
            addr: addr.expect("the server said where it listens"),
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// One raw HTTP/1.1 request; the status and the headers and body as text, read until the
    /// connection closes, `until` appears in the body, or 5 seconds pass (an event stream may
    /// stay open).
    pub(crate) fn request(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        self.request_until(method, headers, body, "\"jsonrpc\"")
    }

    pub(crate) fn request_until(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
        until: &str,
    ) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.addr,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = Vec::new();
        let mut buffer = [0u8; 4096];
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => {
                    response.extend_from_slice(&buffer[..n]);
                    if response.windows(4).any(|w| w == b"\r\n\r\n")
                        && String::from_utf8_lossy(&response).contains(until)
                    {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        let text = String::from_utf8_lossy(&response).into_owned();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, text)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string()
}

pub(crate) fn run_script(
    program: &str,
    envs: &[(&str, &Path)],
    script: &str,
    file: &str,
    config: &Value,
) -> Value {
    let scratch = workdir();
    let script_path = scratch.path().join(file);
    std::fs::write(&script_path, script).unwrap();
    let config_path = scratch.path().join("config.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mut command = Command::new(program);
    command.arg(&script_path).arg(&config_path);
    for (key, value) in envs {
        command.env(key, value);
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("start {program}: {e}"));
    assert!(
        output.status.success(),
        "the client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn python_32_concurrent_sessions_each_a_task_and_the_token_and_origin_are_checked() {
    let plugins = PluginDir::real();
    let ws = workdir();
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    let server = Server::start(plugins.path(), ws.path());
    let out = run_script(
        "python3",
        &[],
        PYTHON_CLIENT,
        "client.py",
        &json!({"url": server.url(), "token": TOKEN, "sessions": 32}),
    );
    let sessions = out["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 32);
    for texts in sessions {
        // Every session is a new task: its first read is not a repeat; its own reads are.
        assert_eq!(
            texts[0], "1 | hello\n\n(File has 1 lines total.)",
            "{texts}"
        );
        assert!(
            texts[1]
                .as_str()
                .unwrap()
                .starts_with("[File already read]"),
            "{texts}"
        );
        assert!(
            texts[2].as_str().unwrap().starts_with("[DUPLICATE READ]"),
            "{texts}"
        );
    }
    assert!(out["wrong_token"].get("error").is_some(), "{out}");
    assert!(out["foreign_origin"].get("error").is_some(), "{out}");
}

#[test]
fn python_a_plugins_log_message_goes_to_its_calls_session_only() {
    let plugins = PluginDir::empty();
    plugins.add_library("fixture_faulty");
    let ws = workdir();
    for isolation in ["in-process", "process"] {
        let server = Server::start_with(plugins.path(), ws.path(), &["--isolation", isolation]);
        let logs = run_script(
            "python3",
            &[],
            LOGS_CLIENT,
            "logs.py",
            &json!({"url": server.url(), "token": TOKEN}),
        );
        let heard = |session: &str, message: &str| {
            logs[session]
                .as_array()
                .unwrap()
                .iter()
                .any(|log| log.as_str().unwrap_or("").contains(message))
        };
        assert!(heard("a", "only for session a"), "{isolation}: {logs}");
        assert!(heard("b", "only for session b"), "{isolation}: {logs}");
        assert!(!heard("b", "only for session a"), "{isolation}: {logs}");
        assert!(!heard("a", "only for session b"), "{isolation}: {logs}");
    }
}

#[test]
fn raw_http_status_codes_and_delete_ends_the_session() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let server = Server::start(plugins.path(), ws.path());
    let bearer = format!("Bearer {TOKEN}");

    let (status, _) = server.request("POST", &[], &initialize());
    assert_eq!(status, 401);
    let (status, _) = server.request("POST", &[("Authorization", "Bearer nope")], &initialize());
    assert_eq!(status, 401);
    let (status, _) = server.request(
        "POST",
        &[
            ("Authorization", &bearer),
            ("Origin", "http://evil.example"),
        ],
        &initialize(),
    );
    assert_eq!(status, 403);

    let (status, response) = server.request("POST", &[("Authorization", &bearer)], &initialize());
    assert_eq!(status, 200, "{response}");
    let session = response
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .expect("a session id");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let with_session = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, _) = server.request_until("POST", &with_session, &initialized, "\r\n\r\n");
    assert_eq!(status, 202);
    let (status, response) = server.request_until("POST", &with_session, &list, "\"read_file\"");
    assert_eq!(status, 200, "{response}");
    assert!(response.contains("\"read_file\""), "{response}");
    let (status, _) = server.request("DELETE", &with_session, "");
    // 200, not rmcp's 202: the Python SDK warns of a failed termination on anything else.
    assert_eq!(status, 200, "DELETE answered {status}");
    let (status, response) = server.request("POST", &with_session, &list);
    assert_eq!(status, 404, "the deleted session still answers: {response}");
}

#[test]
fn typescript_client_over_http_with_and_without_the_token() {
    let plugins = PluginDir::real();
    let ws = workdir();
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    let server = Server::start(plugins.path(), ws.path());
    let modules = toolhost_tests::target_dir()
        .parent()
        .unwrap()
        .join("node/node_modules");
    assert!(
        modules
            .join("@modelcontextprotocol/sdk/package.json")
            .is_file(),
        "the MCP TypeScript SDK is missing: run `cargo xtask test` once"
    );
    let out = run_script(
        "node",
        &[("NODE_PATH", &modules)],
        TS_CLIENT,
        "client.js",
        &json!({"url": server.url(), "token": TOKEN}),
    );
    assert_eq!(out["text"], "1 | hello\n\n(File has 1 lines total.)");
    assert_eq!(out["wrong_token"], "refused");
}

/// A raw session: its id, after `initialize` and `notifications/initialized`.
fn open_session(server: &Server, bearer: &str) -> String {
    let (status, response) = server.request("POST", &[("Authorization", bearer)], &initialize());
    assert_eq!(status, 200, "{response}");
    let session = response
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let headers = session_headers(bearer, &session);
    let (status, _) = server.request_until("POST", &headers, &initialized, "\r\n\r\n");
    assert_eq!(status, 202);
    session
}

fn session_headers<'a>(bearer: &'a str, session: &'a str) -> [(&'static str, &'a str); 3] {
    [
        ("Authorization", bearer),
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-06-18"),
    ]
}

#[test]
fn ending_a_session_removes_its_commands_output_logs() {
    let scene = crate::command_output::Scene::new("[execute_command]\noutput_log_limit_mb = 1\n");
    let server = Server::start_command(scene.toolhost(), &scene.ws);
    let bearer = format!("Bearer {TOKEN}");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "execute_command",
        "arguments": {"command": "seq 1 300000", "requires_approval": "false"}}})
    .to_string();
    let mut logs = Vec::new();
    let sessions: Vec<String> = (0..2).map(|_| open_session(&server, &bearer)).collect();
    for session in &sessions {
        let headers = session_headers(&bearer, session);
        // The answer's event stream ends with the answer.
        let (status, response) = server.request_until("POST", &headers, &call, "\0");
        assert_eq!(status, 200, "{response}");
        let path = response
            .split("Full output saved to: ")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| panic!("no log in {response:.2000}"));
        logs.push(std::path::PathBuf::from(path));
    }
    assert!(logs.iter().all(|log| log.is_file()), "{logs:?}");
    let (status, _) = server.request("DELETE", &session_headers(&bearer, &sessions[0]), "");
    assert_eq!(status, 200);
    let deadline = Instant::now() + Duration::from_secs(30);
    while logs[0].exists() {
        assert!(Instant::now() < deadline, "the ended session's log stays");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(logs[1].is_file(), "the other session's log went too");
}
