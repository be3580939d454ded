//! `toolhost mcp` driven by a real MCP client: the official Python SDK starts the server over
//! stdio, lists the tools, calls some, closes stdin, and prints what it saw as JSON.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tool_api::texts;
use toolhost_tests::{toolhost_bin, workdir, PluginDir};

use crate::in_process;

/// A 2×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP4z8DwHwQZYAwAkNcJ9+lmnmwAAAAASUVORK5CYII=";

/// The client. `sh` only records the server's exit status once the SDK has closed its stdin;
/// if the server does not exit on its own within the SDK's grace period, the SDK kills the
/// process group and no status is written.
const CLIENT: &str = r#"
import asyncio, json, os, sys

from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

config = json.loads(sys.argv[1])


def result_json(result):
    return {
        "isError": result.is_error,
        "content": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.content],
    }


async def main():
    server = StdioServerParameters(
        command="/bin/sh",
        args=["-c", '"$@"; echo $? > "$STATUS_FILE"', "sh", config["toolhost"],
              "--plugins", config["plugins"], "mcp", "--cwd", config["workspace"]],
        env={"XDG_CONFIG_HOME": config["config_home"], "STATUS_FILE": config["status_file"]},
    )
    summary = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            summary["server"] = {
                "name": init.server_info.name,
                "tools_capability": init.capabilities.tools is not None,
            }
            listed = await session.list_tools()
            summary["tools"] = [
                {
                    "name": tool.name,
                    "title": tool.title,
                    "description": tool.description,
                    "inputSchema": tool.input_schema,
                    "annotations": tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
                    if tool.annotations else None,
                }
                for tool in listed.tools
            ]
            calls = {
                "read_file": ("read_file", {"path": "src/main.rs"}),
                "read_image": ("read_file", {"path": "dot.png"}),
                "list_files": ("list_files", {"path": "."}),
                "missing_param": ("read_file", {}),
                "denied_write": ("write_to_file", {"path": "new.txt", "content": "x"}),
            }
            for key, (name, arguments) in calls.items():
                summary[key] = result_json(await session.call_tool(name, arguments))
            try:
                summary["unknown_tool"] = {"result": result_json(await session.call_tool("no_such_tool", {}))}
            except MCPError as e:
                summary["unknown_tool"] = {"error": {"code": e.code, "message": e.message}}
    status_file = config["status_file"]
    summary["exit_status"] = open(status_file).read().strip() if os.path.exists(status_file) else None
    print(json.dumps(summary))


asyncio.run(main())
"#;

/// Fails with a clear message when the SDK is missing (`cargo xtask test` installs it).
fn require_python_sdk() {
    let found = Command::new("python3")
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "the MCP Python SDK is missing: `python3 -c \"import mcp\"` fails. Install it with \
         `python3 -m pip install mcp` (`cargo xtask test` does this)"
    );
}

/// Runs the client script against `toolhost mcp` and returns its JSON summary.
fn run_client(plugins: &Path, workspace: &Path) -> Value {
    require_python_sdk();
    let scratch = workdir();
    let script = scratch.path().join("client.py");
    std::fs::write(&script, CLIENT).unwrap();
    let config_home = scratch.path().join("config");
    std::fs::create_dir(&config_home).unwrap();
    let config = json!({
        "toolhost": toolhost_bin(),
        "plugins": plugins,
        "workspace": workspace,
        "config_home": config_home,
        "status_file": scratch.path().join("status"),
    });
    let stdout_path = scratch.path().join("stdout");
    let stderr_path = scratch.path().join("stderr");
    let mut child = Command::new("python3")
        .arg(&script)
        .arg(config.to_string())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start python3");
    // A guard against a hung client, not a timing assertion.
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the MCP client did not finish; its stderr:\n{}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = std::fs::read_to_string(&stdout_path).unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(
        status.success(),
        "the MCP client failed ({status}); stderr:\n{stderr}"
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("the client printed no JSON ({e}):\n{stdout}\nstderr:\n{stderr}")
    })
}

fn text_result(is_error: bool, text: &str) -> Value {
    json!({"isError": is_error, "content": [{"type": "text", "text": text}]})
}

#[test]
fn a_real_mcp_client_lists_and_calls_the_tools() {
    let plugins = PluginDir::real();
    let workspace = workdir();
    std::fs::create_dir(workspace.path().join("src")).unwrap();
    std::fs::write(workspace.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(workspace.path().join("a.txt"), "hello\n").unwrap();
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG)
        .unwrap();
    std::fs::write(workspace.path().join("dot.png"), png).unwrap();

    let summary = run_client(plugins.path(), workspace.path());

    assert_eq!(
        summary["server"],
        json!({"name": "toolhost", "tools_capability": true})
    );

    // Every registered tool, with its spec's description, schema and hints.
    let (host, _ui) = in_process::host(plugins.path(), workspace.path());
    let expected_tools: Vec<Value> = host
        .registry()
        .tools()
        .map(|(name, tool)| {
            json!({
                "name": name,
                "title": tool.spec.title_or_name(),
                "description": tool.spec.description,
                "inputSchema": tool.spec.input_schema,
                "annotations": {
                    "title": tool.spec.title_or_name(),
                    "readOnlyHint": tool.spec.read_only,
                    "destructiveHint": tool.spec.destructive,
                    "idempotentHint": tool.spec.idempotent,
                    "openWorldHint": tool.spec.open_world,
                },
            })
        })
        .collect();
    assert_eq!(summary["tools"], Value::Array(expected_tools));
    let names: Vec<&str> = summary["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in [
        "read_file",
        "list_files",
        "write_to_file",
        "replace_in_file",
    ] {
        assert!(names.contains(&name), "{name} is not listed: {names:?}");
    }
    let read_file = summary["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .unwrap();
    assert_eq!(read_file["inputSchema"]["type"], "object");
    assert_eq!(read_file["inputSchema"]["required"], json!(["path"]));
    assert_eq!(
        read_file["annotations"],
        json!({"title": "Read file", "readOnlyHint": true, "destructiveHint": false,
               "idempotentHint": true, "openWorldHint": false})
    );
    let write = summary["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "write_to_file")
        .unwrap();
    assert_eq!(
        write["annotations"],
        json!({"title": "Write file", "readOnlyHint": false, "destructiveHint": true,
               "idempotentHint": true, "openWorldHint": false})
    );

    assert_eq!(
        summary["read_file"],
        text_result(false, "1 | fn main() {}\n\n(File has 1 lines total.)")
    );
    assert_eq!(
        summary["read_image"],
        json!({"isError": false, "content": [
            {"type": "text", "text": "Successfully read image"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
        ]})
    );
    assert_eq!(
        summary["list_files"],
        text_result(false, "a.txt\ndot.png\nsrc/")
    );
    assert_eq!(
        summary["missing_param"],
        text_result(
            true,
            // The client's model calls tools with JSON: no reminder of the XML format.
            &texts::tool_error(&texts::missing_param_error_native("path"))
        )
    );
    // No terminal to ask and writes are not auto-approved by default: denied, nothing written.
    assert_eq!(
        summary["denied_write"],
        text_result(
            true,
            &toolhost_tests::refused_by(
                "write_to_file",
                "nobody answered (the client cannot ask its user, or no answer came in time)",
                &["edit_files"]
            )
        )
    );
    assert!(!workspace.path().join("new.txt").exists());
    // An unknown name is a JSON-RPC "invalid params" error, as the MCP specification says.
    assert_eq!(
        summary["unknown_tool"],
        json!({"error": {"code": -32602, "message": "Unknown tool: no_such_tool"}})
    );
    // The server exited by itself, successfully, once the client closed its stdin.
    assert_eq!(summary["exit_status"], "0");
}

/// `toolhost mcp --watch`, spoken to line by line: a library dropped into the plugin directory
/// while the server runs shows up in the next `tools/list`.
#[test]
fn mcp_watch_picks_up_a_library_added_while_serving() {
    use std::io::{BufRead, BufReader, Write};

    let plugins = workdir();
    let workspace = workdir();
    std::fs::copy(
        toolhost_tests::library("read_file"),
        plugins.path().join("libread_file.so"),
    )
    .unwrap();
    let mut child = toolhost_tests::toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["mcp", "--watch", "--cwd"])
        .arg(workspace.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut next_id = 0;
    let mut request = |method: &str, params: Value| -> Value {
        next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params});
        writeln!(input, "{message}").unwrap();
        // Notifications (`tools/list_changed` after the swap) come between the answers.
        loop {
            let mut line = String::new();
            output.read_line(&mut line).unwrap();
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer.get("id").is_some() {
                assert_eq!(answer["id"], json!(next_id), "{answer}");
                return answer;
            }
        }
    };
    request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}}),
    );
    let tool_names = |answer: Value| -> Vec<String> {
        answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(tool_names(request("tools/list", json!({}))), ["read_file"]);

    let staging = plugins.path().join("liblist_files.staging");
    std::fs::copy(toolhost_tests::library("list_files"), &staging).unwrap();
    std::fs::rename(&staging, plugins.path().join("liblist_files.so")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut names = Vec::new();
    while Instant::now() < deadline {
        names = tool_names(request("tools/list", json!({})));
        if names.len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(names, ["list_files", "read_file"]);
    let _ = child.kill();
    let _ = child.wait();
}
