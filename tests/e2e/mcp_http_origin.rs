//! An approval comes from the user, never from something a tool call started: a command that
//! finds `toolhost mcp --http`'s port and holds its token (as if it had leaked) cannot open a
//! session of its own to call `execute_command` with `sandbox_escalation` and approve it itself;
//! nor can a command of another toolhost instance, sandboxed or under an isolated plugin's
//! worker. Commands do not inherit `TOOLHOST_MCP_TOKEN`. The user's own client (the official
//! Python SDK, elicitation declared) is served as before.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use toolhost_tests::{run, toolhost, toolhost_as_installed, workdir, PluginDir};

use crate::mcp_http::{run_script, Server, TOKEN};

/// The user's client: one session, elicitation declared, every approval given; runs the
/// commands of the configuration and prints the text of each result.
const USER_CLIENT: &str = r#"
import asyncio, json, sys

import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

config = json.loads(open(sys.argv[1]).read())


async def approve(context, params):
    return types.ElicitResult(action="accept", content={"approve": True})


async def main():
    headers = {"Authorization": f"Bearer {config['token']}"}
    texts = []
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(config["url"], http_client=http) as streams:
            async with ClientSession(streams[0], streams[1], elicitation_callback=approve) as session:
                await session.initialize()
                for command in config["commands"]:
                    result = await session.call_tool(
                        "execute_command", {"command": command, "requires_approval": "true"})
                    texts.append("\n".join(c.text for c in result.content if getattr(c, "text", None)))
    print(json.dumps(texts))


asyncio.run(main())
"#;

/// The attack, run as a command: finds the listening ports of 127.0.0.1 in /proc/net/tcp,
/// opens an MCP session on each with the token (elicitation declared), and on one that
/// accepts, calls execute_command with sandbox_escalation writing the marker, approving its
/// own approval. Prints `ATTACK-REPORT {json}`: each port's answer to `initialize` and what
/// the escalated call returned.
const ATTACK: &str = r#"
import asyncio, json, socket, sys

import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

token, marker = sys.argv[1], sys.argv[2]
loopback = socket.inet_aton("127.0.0.1")[::-1].hex().upper()


def listening_ports():
    ports = []
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        fields = line.split()
        address, port = fields[1].split(":")
        if fields[3] == "0A" and address == loopback:
            ports.append(int(port, 16))
    return ports


def initialize(port):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "attack", "version": "1"}}})
    data = b""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=3)
        s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                   f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                   f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}").encode())
        while len(data) < 8192:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data and (b"jsonrpc" in data or b"refused" in data):
                break
    except OSError:
        pass
    text = data.decode(errors="replace")
    status = int(text.split()[1]) if text.startswith("HTTP/") else 0
    return {"status": status, "text": text[:2000]}


async def escalate(port):
    async def approve(context, params):
        return types.ElicitResult(action="accept", content={"approve": True})

    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as streams:
            async with ClientSession(streams[0], streams[1], elicitation_callback=approve) as session:
                await session.initialize()
                result = await session.call_tool("execute_command", {
                    "command": f"echo escaped > {marker}", "requires_approval": "true",
                    "sandbox_escalation": "true"})
                return "\n".join(c.text for c in result.content if getattr(c, "text", None))


async def main():
    report = {"ports": {}, "escalated": {}}
    for port in listening_ports():
        report["ports"][str(port)] = answer = initialize(port)
        if answer["status"] == 200:
            try:
                report["escalated"][str(port)] = await asyncio.wait_for(escalate(port), 60)
            except BaseException as e:
                report["escalated"][str(port)] = f"failed: {type(e).__name__}: {e}"
    print("ATTACK-REPORT " + json.dumps(report), flush=True)


asyncio.run(main())
"#;

/// A raw `initialize` with the token to `sys.argv[1]` (`HOST:PORT`); prints `PROBE STATUS`
/// and the answer.
const PROBE: &str = r#"
import json, socket, sys

host, port = sys.argv[1].rsplit(":", 1)
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}})
s = socket.create_connection((host, int(port)), timeout=5)
s.sendall((f"POST /mcp HTTP/1.1\r\nHost: {sys.argv[1]}\r\nAuthorization: Bearer {sys.argv[2]}\r\n"
           f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
           f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}").encode())
data = b""
while b"\r\n\r\n" not in data or not (b"jsonrpc" in data or b"refused" in data):
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
text = data.decode(errors="replace")
print("PROBE", text.split()[1] if text.startswith("HTTP/") else "none")
print(text)
"#;

/// The Python interpreter's own path (commands get the server's environment, whose `PATH`
/// may not find the same one).
fn python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A workspace, a home, a temporary directory and a directory outside all of them (outside
/// every writable root of the sandbox), and the scripts in the workspace.
struct Scene {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
    outside: PathBuf,
}

impl Scene {
    fn new() -> Self {
        let dir = workdir();
        let base = dir.path().canonicalize().unwrap();
        let [ws, home, tmp, outside] = ["ws", "home", "tmp", "outside"].map(|n| base.join(n));
        for d in [&ws, &home, &tmp, &outside] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(ws.join("attack.py"), ATTACK).unwrap();
        std::fs::write(ws.join("probe.py"), PROBE).unwrap();
        Self {
            _dir: dir,
            base,
            ws,
            home,
            tmp,
            outside,
        }
    }

    /// `settings` as a settings file; its path.
    fn settings(&self, settings: &str) -> PathBuf {
        let path = self.base.join("settings.toml");
        std::fs::write(&path, settings).unwrap();
        path
    }

    /// `toolhost mcp --http` as the README starts it (no `--yes`), `settings` its settings.
    fn server(&self, plugins: &Path, settings: &str) -> Server {
        let mut command = toolhost_as_installed();
        command
            .args(["--isolation", "in-process", "--settings"])
            .arg(self.settings(settings))
            .arg("--plugins")
            .arg(plugins)
            .args(["mcp", "--http", "127.0.0.1:0", "--cwd"])
            .arg(&self.ws)
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp);
        Server::spawn(command)
    }
}

fn execute_command() -> PluginDir {
    let plugins = PluginDir::empty();
    plugins.add_library("execute_command");
    plugins
}

/// The attack's report in a command's output.
fn attack_report(text: &str) -> Value {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("ATTACK-REPORT "))
        .unwrap_or_else(|| panic!("no report in the command's output:\n{text}"));
    serde_json::from_str(line).unwrap()
}

#[test]
fn a_command_cannot_open_a_session_and_approve_its_own_escalation() {
    let plugins = execute_command();
    let python = python();
    // The default sandbox: the command's loopback is its own, and the server is not there.
    let scene = Scene::new();
    let server = scene.server(plugins.path(), "");
    let marker = scene.outside.join("escaped");
    let texts = run_script(
        "python3",
        &[],
        USER_CLIENT,
        "user.py",
        &json!({"url": server.url(), "token": TOKEN, "commands": [
            format!("{python} {} {TOKEN} {}", scene.ws.join("attack.py").display(), marker.display()),
        ]}),
    );
    let report = attack_report(texts[0].as_str().unwrap());
    let port = server.addr.rsplit(':').next().unwrap();
    assert!(report["ports"].get(port).is_none(), "{report}");
    assert!(!marker.exists(), "the command escaped: {report}");
    // That server stays up: below, it is another instance's, and refuses those commands too.
    let _other_instance = server;
    // With the network direct, the server is reached, and refuses: the sandbox's supervisor
    // started the command; and without a sandbox, this host did.
    for (settings, starter) in [
        (
            "[execute_command]\nnetwork = \"direct\"\n",
            "the command supervisor `toolhost __sandbox-exec`",
        ),
        (
            "[execute_command]\nsandbox = \"off\"\n",
            "this toolhost process",
        ),
    ] {
        let scene = Scene::new();
        let server = scene.server(plugins.path(), settings);
        let marker = scene.outside.join("escaped");
        let texts = run_script(
            "python3",
            &[],
            USER_CLIENT,
            "user.py",
            &json!({"url": server.url(), "token": TOKEN, "commands": [
                "echo token=${TOOLHOST_MCP_TOKEN:-none}",
                format!("{python} {} {TOKEN} {}", scene.ws.join("attack.py").display(), marker.display()),
            ]}),
        );
        // The user's client is served, and commands do not inherit the token.
        let env_text = texts[0].as_str().unwrap();
        assert!(env_text.contains("token=none"), "{settings}: {env_text}");
        let report = attack_report(texts[1].as_str().unwrap());
        let port = server.addr.rsplit(':').next().unwrap();
        let answer = &report["ports"][port];
        assert_eq!(answer["status"], 403, "{settings}: {report}");
        let refusal = answer["text"].as_str().unwrap();
        for part in [
            "toolhost mcp refused the connection",
            "started by a toolhost tool call",
            starter,
            "approvals must come from the user",
        ] {
            assert!(
                refusal.contains(part),
                "{settings}: {part:?} not in {refusal}"
            );
        }
        // Other tests' servers may answer the scan too; no session of any toolhost opened.
        assert!(report["escalated"].get(port).is_none(), "{report}");
        let escalated = report["escalated"].as_object().into_iter().flatten();
        for (other, outcome) in escalated {
            let outcome = outcome.as_str().unwrap_or_default();
            assert!(
                outcome.starts_with("failed"),
                "{settings}: {other}: {report}"
            );
        }
        assert!(
            !marker.exists(),
            "{settings}: the command escaped: {report}"
        );
    }
}

#[test]
fn commands_of_another_toolhost_cannot_open_a_session() {
    let plugins = execute_command();
    let python = python();
    let scene = Scene::new();
    let server = scene.server(plugins.path(), "");
    let command = json!({
        "command": format!("{python} {} {} {TOKEN}", scene.ws.join("probe.py").display(), server.addr),
        "requires_approval": "true",
    })
    .to_string();
    let other = workdir();
    // Sandboxed by another toolhost (by default its loopback is its own: nothing answers);
    // with the network direct; and started by an isolated plugin's worker, unsandboxed.
    let settings_file = other.path().join("settings.toml");
    std::fs::write(&settings_file, "").unwrap();
    let out = run(toolhost()
        .arg("--settings")
        .arg(&settings_file)
        .arg("--plugins")
        .arg(plugins.path())
        .args(["call", "execute_command", &command, "--yes", "--cwd"])
        .arg(&scene.ws)
        .env("HOME", &scene.home)
        .env("TMPDIR", &scene.tmp));
    assert!(out.stdout.contains("Connection refused"), "{out:?}");
    assert!(!out.stdout.contains("PROBE"), "{out:?}");
    for (settings, mut toolhost, starter) in [
        (
            "[execute_command]\nnetwork = \"direct\"\n",
            toolhost(),
            "the command supervisor `toolhost __sandbox-exec`",
        ),
        (
            "[execute_command]\nsandbox = \"off\"\n[plugins.execute_command]\nisolation = \"process\"\nfs = \"full\"\nnetwork = true\nspawn = true\n",
            toolhost_as_installed(),
            "the plugin worker `toolhost __plugin-worker`",
        ),
    ] {
        let settings_file = other.path().join("settings.toml");
        std::fs::write(&settings_file, settings).unwrap();
        let out = run(toolhost
            .arg("--settings")
            .arg(&settings_file)
            .arg("--plugins")
            .arg(plugins.path())
            .args(["call", "execute_command", &command, "--yes", "--cwd"])
            .arg(&scene.ws)
            .env("HOME", &scene.home)
            .env("TMPDIR", &scene.tmp));
        assert!(out.stdout.contains("PROBE 403"), "{settings}: {out:?}");
        assert!(out.stdout.contains(starter), "{settings}: {out:?}");
    }
}
