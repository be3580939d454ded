//! An MCP server's results through use_mcp_tool and its native tools, against a real server
//! (tests/fixtures/mcp_rich_server.py, on the official Python SDK) whose tools answer with
//! `isError`, `structuredContent`, resource links, embedded resources, audio and annotations:
//! what the model reads, the exit code of `toolhost call`, and what `toolhost mcp` answers an
//! MCP client (the official Python SDK's), compared with what the server itself answers.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use tool_api::texts::tool_error;
use toolhost::ErrorKind;
use toolhost::Settings;
use toolhost_tests::{run, toolhost, toolhost_bin, workdir, workspace_root, PluginDir, Run};

use crate::in_process;

/// The fixture server.
fn server_script() -> PathBuf {
    workspace_root().join("tests/fixtures/mcp_rich_server.py")
}

/// use_mcp_tool's plugin, an MCP settings file naming the fixture server `rich`, and host
/// settings that auto-approve MCP calls.
pub(crate) struct Setup {
    _dirs: Vec<tempfile::TempDir>,
    pub(crate) workspace: PathBuf,
    pub(crate) plugins: PluginDir,
    /// The host's settings file.
    pub(crate) settings: PathBuf,
    toml: String,
}

impl Setup {
    pub(crate) fn new() -> Self {
        Self::with_server_env(json!({}))
    }

    /// The same, with `env` in the fixture server's environment.
    fn with_server_env(env: Value) -> Self {
        let workspace = workdir();
        let config = workdir();
        let plugins = PluginDir::empty();
        plugins.add_library("use_mcp_tool");
        let mcp_settings = config.path().join("cline_mcp_settings.json");
        let servers = json!({"mcpServers": {
            "rich": {"command": "python3", "args": [server_script()], "env": env},
        }});
        std::fs::write(&mcp_settings, servers.to_string()).unwrap();
        let toml = format!(
            "[auto_approve]\nuse_mcp = true\n[mcp]\nsettings_file = {:?}\n",
            mcp_settings.display().to_string()
        );
        let settings = config.path().join("toolhost.toml");
        std::fs::write(&settings, &toml).unwrap();
        Self {
            workspace: workspace.path().to_path_buf(),
            plugins,
            settings,
            toml,
            _dirs: vec![workspace, config],
        }
    }

    fn host(&self) -> (std::sync::Arc<toolhost::Host>, in_process::RecordingUi) {
        in_process::host_with(
            self.plugins.path(),
            &self.workspace,
            Settings::from_toml(&self.toml).unwrap(),
        )
    }

    fn call(&self, tool: &str, params: &Value) -> Run {
        run(toolhost()
            .arg("--plugins")
            .arg(self.plugins.path())
            .arg("--settings")
            .arg(&self.settings)
            .args(["call", tool, &params.to_string(), "--json", "--cwd"])
            .arg(&self.workspace))
    }
}

fn use_rich(tool: &str) -> Value {
    json!({"server_name": "rich", "tool_name": tool})
}

#[test]
fn an_upstream_error_is_a_tool_error_with_its_details() {
    let setup = Setup::new();
    let (host, ui) = setup.host();
    let outcome = host.call("use_mcp_tool", &use_rich("fails").to_string());
    let error = outcome.result.as_ref().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Failed);
    let details = "Structured content:\n{\n  \"code\": 429,\n  \"retry_after\": 30\n}";
    assert_eq!(
        outcome.model_text(),
        tool_error(&format!("quota exceeded for Oslo\n\n{details}"))
    );
    // The user sees Cline's form of it.
    assert_eq!(
        ui.of_kind("mcp_server_response"),
        vec![format!("Error:\nquota exceeded for Oslo\n\n{details}")]
    );
    // A failure is a mistake, as every failed call is.
    assert_eq!(host.task().mistakes(), 1);
    assert_eq!(
        outcome.mcp_result(),
        Some(&json!({
            "content": [{"type": "text", "text": "quota exceeded for Oslo"}],
            "structuredContent": {"code": 429, "retry_after": 30},
            "isError": true,
        }))
    );
    // `toolhost call` fails, by both names of the tool.
    for (tool, params) in [
        ("use_mcp_tool", use_rich("fails")),
        ("rich0mcp0fails", json!({})),
    ] {
        let run = setup.call(tool, &params);
        assert_eq!(run.code, 1, "{tool}: {}", run.stderr);
        let json = run.json();
        assert_eq!(json["is_error"], true);
        assert_eq!(json["error_kind"], "failed");
        assert!(json["text"].as_str().unwrap().contains("quota exceeded"));
    }
}

#[test]
fn an_unknown_server_is_an_error() {
    let setup = Setup::new();
    let run = setup.call(
        "use_mcp_tool",
        &json!({"server_name": "nope", "tool_name": "x"}),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.json()["text"],
        tool_error("Error executing MCP tool: No connection found for server: nope. Please make sure to use MCP servers available under 'Connected MCP Servers'.")
    );
    let ok = setup.call("use_mcp_tool", &use_rich("structured"));
    assert_eq!(ok.code, 0, "{}", ok.stderr);
}

#[test]
fn structured_content_links_resources_and_annotations_reach_the_model() {
    let setup = Setup::new();
    let (host, _) = setup.host();
    let text = |tool: &str| {
        let outcome = host.call("use_mcp_tool", &use_rich(tool).to_string());
        assert!(!outcome.is_error(), "{}", outcome.model_text());
        outcome.model_text()
    };
    // The server echoes its structured content as text: the model reads it once.
    assert_eq!(
        text("structured"),
        "{\"city\": \"Oslo\", \"days\": [{\"high\": 14, \"sky\": \"sunny\"}, {\"high\": 9, \"sky\": \"rain\"}]}\n\n\
         for the user only\n(annotations: {\"audience\":[\"user\"],\"priority\":0.25})"
    );
    assert_eq!(
        text("linked"),
        "{\n  \"mimeType\": \"text/markdown\",\n  \"uri\": \"file:///srv/report.md\",\n  \"name\": \"report.md\",\n  \
         \"title\": \"Weekly report\",\n  \"description\": \"The report of week 48\"\n}\n\
         (annotations: {\"audience\":[\"assistant\"],\"priority\":0.9})\n\n\
         {\n  \"uri\": \"note://summary\",\n  \"mimeType\": \"text/plain\",\n  \"text\": \"All systems nominal.\"\n}\n\
         (annotations: {\"priority\":0.5})\n\n\
         {\n  \"uri\": \"blob://data.bin\",\n  \"mimeType\": \"application/octet-stream\"\n}"
    );
    assert_eq!(
        text("sound"),
        "[The tool returned audio (audio/wav), which cannot be shown as text.]"
    );
}

/// A server that floods: what the model reads is cut at use_mcp_tool's cap, and nothing of it
/// is relayed beyond that cut.
#[test]
fn a_flood_of_structured_content_is_cut_for_every_client() {
    let setup = Setup::new();
    let (host, _) = setup.host();
    let outcome = host.call("use_mcp_tool", &use_rich("flood").to_string());
    assert!(!outcome.is_error(), "{}", outcome.model_text());
    let text = outcome.model_text();
    assert!(
        text.starts_with("flood\n\nStructured content:\n"),
        "{}",
        &text[..80]
    );
    assert!(text.contains("[FILE TRUNCATED: "), "not cut");
    assert!(text.len() < 420_000, "{} bytes", text.len());
    assert_eq!(outcome.mcp_result(), None);
}

/// The client: calls the fixture server itself, then `toolhost mcp` relaying it (by the
/// native names and through use_mcp_tool), and prints every result as JSON.
const CLIENT: &str = r#"
import asyncio, json, sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

config = json.loads(sys.argv[1])


def dump(result):
    return {
        "isError": bool(result.is_error),
        "content": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.content],
        "structuredContent": result.structured_content,
    }


async def results(server, calls):
    out = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for key, (name, arguments) in calls.items():
                out[key] = dump(await session.call_tool(name, arguments))
    return out


async def main():
    tools = ["fails", "structured", "linked", "sound"]
    direct = await results(
        StdioServerParameters(command="python3", args=[config["server"]]),
        {tool: (tool, {}) for tool in tools},
    )
    calls = {tool: ("rich0mcp0" + tool, {}) for tool in tools}
    calls["use_mcp_tool"] = ("use_mcp_tool", {"server_name": "rich", "tool_name": "linked"})
    calls["flood"] = ("rich0mcp0flood", {})
    relayed = await results(
        StdioServerParameters(
            command=config["toolhost"], args=config["toolhost_args"], env=config["toolhost_env"],
        ),
        calls,
    )
    print(json.dumps({"direct": direct, "relayed": relayed}))


asyncio.run(main())
"#;

/// Runs a Python client `script` with the set-up as its config; the JSON it prints.
fn run_client(script: &str, setup: &Setup) -> Value {
    run_client_with(script, setup, json!({}))
}

/// The same, with `extra`'s entries added to the config.
fn run_client_with(script: &str, setup: &Setup, extra: Value) -> Value {
    let scratch = workdir();
    let script_path = scratch.path().join("client.py");
    std::fs::write(&script_path, script).unwrap();
    // How the clients start `toolhost mcp` over the set-up.
    let toolhost_args = json!([
        "--plugins",
        setup.plugins.path(),
        "--settings",
        setup.settings,
        "--isolation",
        "in-process",
        "mcp",
        "--cwd",
        setup.workspace,
    ]);
    let config = json!({
        "server": server_script(),
        "toolhost": toolhost_bin(),
        "toolhost_args": toolhost_args,
        "toolhost_env": {"XDG_CONFIG_HOME": scratch.path(), "XDG_CACHE_HOME": scratch.path()},
    });
    let mut config = config;
    if let (Some(config), Value::Object(extra)) = (config.as_object_mut(), extra) {
        config.extend(extra);
    }
    let output = Command::new("timeout")
        .args(["180", "python3"])
        .arg(&script_path)
        .arg(config.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("run python3");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the client failed: {stderr}");
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("no JSON from the client ({e}): {stderr}"))
}

#[test]
fn toolhost_mcp_answers_with_the_servers_own_structures() {
    let summary = run_client(CLIENT, &Setup::new());
    let direct = &summary["direct"];
    let relayed = &summary["relayed"];
    for tool in ["fails", "structured", "linked", "sound"] {
        assert_eq!(relayed[tool], direct[tool], "{tool}");
    }
    assert_eq!(relayed["use_mcp_tool"], direct["linked"]);
    // A flood is not relayed: the client gets the model's cut text.
    let flood = &relayed["flood"];
    assert_eq!(flood["isError"], false);
    assert_eq!(flood["structuredContent"], Value::Null);
    assert_eq!(flood["content"].as_array().unwrap().len(), 1);
    assert!(flood["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("[FILE TRUNCATED: "));
    // The comparison holds something: the server's own structures.
    assert_eq!(direct["fails"]["isError"], true);
    assert_eq!(
        direct["fails"]["structuredContent"],
        json!({"code": 429, "retry_after": 30})
    );
    assert_eq!(direct["linked"]["content"][0]["type"], "resource_link");
    assert_eq!(
        direct["linked"]["content"][0]["annotations"],
        json!({"audience": ["assistant"], "priority": 0.9})
    );
    assert_eq!(direct["linked"]["content"][2]["resource"]["blob"], "AAEC");
    assert_eq!(direct["sound"]["content"][0]["type"], "audio");
}

/// A client with a progress callback, calling the fixture's `steps` through `toolhost mcp`.
const PROGRESS_CLIENT: &str = r#"
import asyncio, json, sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

config = json.loads(sys.argv[1])
progress = []


async def on_progress(value, total, message):
    progress.append(message)


async def main():
    server = StdioServerParameters(
        command=config["toolhost"], args=config["toolhost_args"], env=config["toolhost_env"],
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("rich0mcp0steps", {}, progress_callback=on_progress)
    print(json.dumps({"text": result.content[0].text, "progress": progress}))


asyncio.run(main())
"#;

/// What the upstream server says while it works (its progress and a log message) reaches the
/// client of `toolhost mcp` as progress of the call, before the result (in any order).
#[test]
fn an_upstream_servers_progress_reaches_the_client() {
    let summary = run_client(PROGRESS_CLIENT, &Setup::new());
    assert_eq!(summary["text"], "three steps done");
    // rmcp hands each notification to a task of its own: their order may vary.
    let mut progress: Vec<&str> = summary["progress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|message| message.starts_with("mcp_notification: "))
        .collect();
    progress.sort_unstable();
    assert_eq!(
        progress,
        [
            "mcp_notification: [rich] 1/3 step 1",
            "mcp_notification: [rich] 2/3 step 2",
            "mcp_notification: [rich] 3/3 step 3",
            "mcp_notification: [rich] starting the steps",
        ],
        "{summary}"
    );
}

/// A client that calls a tool of the fixture server through `toolhost mcp` and, while that
/// server waits to start, pings `toolhost mcp`; once the ping is answered it lets the server
/// start (`config["start"]`). Without an answer to the ping within 30 s, it fails.
const SLOW_START_CLIENT: &str = r#"
import asyncio, json, pathlib, sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

config = json.loads(sys.argv[1])


async def main():
    server = StdioServerParameters(
        command=config["toolhost"], args=config["toolhost_args"], env=config["toolhost_env"],
    )
    answers = []
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            async def call():
                result = await session.call_tool("rich0mcp0structured", {})
                answers.append(("call", result.is_error))

            async def ping():
                await asyncio.sleep(0.5)
                await asyncio.wait_for(session.send_ping(), 30)
                answers.append(("ping", False))
                pathlib.Path(config["start"]).touch()

            await asyncio.gather(call(), ping())
    print(json.dumps({"answers": answers}))


asyncio.run(main())
"#;

/// Calling an MCP server's tool over `toolhost mcp` starts that server; while it starts, the
/// protocol goes on: a ping sent meanwhile is answered (and only then does the server start).
#[test]
fn the_protocol_goes_on_while_an_upstream_server_starts() {
    let scratch = workdir();
    let start = scratch.path().join("start");
    let setup = Setup::with_server_env(json!({"RICH_FIXTURE_START_WHEN": start}));
    let summary = run_client_with(SLOW_START_CLIENT, &setup, json!({"start": start}));
    assert_eq!(
        summary["answers"],
        json!([["ping", false], ["call", false]]),
        "{summary}"
    );
}
