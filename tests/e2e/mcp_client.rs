//! use_mcp_tool, access_mcp_resource and load_mcp_documentation through the real plugin, against
//! real stdio MCP servers: toolhost's own `toolhost mcp` serving read_file, and small Python
//! scripts that speak JSON-RPC by hand to hang, exit mid-call or never answer.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tool_api::texts::tool_error;
use toolhost::CallOutcome;
use toolhost::ErrorKind;
use toolhost::Settings;
use toolhost_tests::{run, toolhost, toolhost_bin, workdir, PluginDir};

use crate::in_process::{self, RecordingUi};

/// A server by hand: answers initialize and tools/list; `tools/call` of `ping` answers "pong",
/// of anything else does what the mode says (`hang`: never answer, `exit`: exit at once).
/// Mode `silent` never answers anything. With a second argument it writes its pid there.
const FAKE_SERVER: &str = r#"
import json, os, sys
mode = sys.argv[1]
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write(str(os.getpid()))
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or mode == "silent":
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "fake", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "ping", "inputSchema": {"type": "object"}},
                            {"name": "work", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call" and msg["params"]["name"] == "ping":
        result = {"content": [{"type": "text", "text": "pong"}]}
    elif method == "tools/call" and mode == "exit":
        sys.exit(3)
    elif method == "tools/call":
        continue
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

/// A workspace with a file, the plugin directories, and an MCP settings file.
pub(crate) struct Setup {
    _dirs: Vec<tempfile::TempDir>,
    workspace: PathBuf,
    plugins: PluginDir,
    /// The plugins of toolhost's own MCP server (read_file).
    server_plugins: PluginDir,
    settings_file: PathBuf,
    script: PathBuf,
}

pub(crate) fn setup(servers: impl FnOnce(&Setup) -> Value) -> Setup {
    let workspace = workdir();
    std::fs::write(
        workspace.path().join("notes.txt"),
        "first line\nsecond line\n",
    )
    .unwrap();
    let config = workdir();
    let server_plugins = PluginDir::empty();
    server_plugins.add_library("read_file");
    let plugins = PluginDir::empty();
    plugins.add_library("use_mcp_tool");
    let script = config.path().join("fake_server.py");
    std::fs::write(&script, FAKE_SERVER).unwrap();
    let setup = Setup {
        workspace: workspace.path().to_path_buf(),
        settings_file: config.path().join("cline_mcp_settings.json"),
        script,
        plugins,
        server_plugins,
        _dirs: vec![workspace, config],
    };
    let toolhost_entry = json!({
        "command": toolhost_bin(),
        "args": ["--plugins", setup.server_plugins.path(), "mcp", "--cwd", &setup.workspace],
    });
    let mut entries = servers(&setup);
    entries["toolhost"] = toolhost_entry;
    std::fs::write(
        &setup.settings_file,
        serde_json::to_string_pretty(&json!({ "mcpServers": entries })).unwrap(),
    )
    .unwrap();
    setup
}

impl Setup {
    fn fake(&self, mode: &str, extra: Value) -> Value {
        let mut entry = json!({"command": "python3", "args": [&self.script, mode]});
        if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
            entry.extend(extra.clone());
        }
        entry
    }

    fn settings_toml(&self, use_mcp: bool) -> String {
        format!(
            "[auto_approve]\nuse_mcp = {use_mcp}\n[mcp]\nsettings_file = {:?}\nservers_dir = {:?}\n",
            self.settings_file.display().to_string(),
            self.workspace.join("mcp-servers").display().to_string(),
        )
    }

    pub(crate) fn host(&self, use_mcp: bool) -> (std::sync::Arc<toolhost::Host>, RecordingUi) {
        in_process::host_with(
            self.plugins.path(),
            &self.workspace,
            Settings::from_toml(&self.settings_toml(use_mcp)).unwrap(),
        )
    }
}

pub(crate) fn call(host: &toolhost::Host, tool: &str, params: Value) -> CallOutcome {
    host.call(tool, &params.to_string())
}

pub(crate) fn use_tool(
    host: &toolhost::Host,
    server: &str,
    tool: &str,
    arguments: Option<&str>,
) -> CallOutcome {
    let mut params = json!({"server_name": server, "tool_name": tool});
    if let Some(arguments) = arguments {
        params["arguments"] = json!(arguments);
    }
    call(host, "use_mcp_tool", params)
}

pub(crate) fn failed(message: &str) -> String {
    tool_error(&format!("Error executing MCP tool: {message}"))
}

fn no_servers(_: &Setup) -> Value {
    json!({})
}

#[test]
fn read_file_through_toolhosts_own_mcp_server() {
    let setup = setup(no_servers);
    let (host, ui) = setup.host(true);
    let outcome = use_tool(
        &host,
        "toolhost",
        "read_file",
        Some(r#"{"path": "notes.txt"}"#),
    );
    // The same text read_file gives directly.
    let direct = PluginDir::empty();
    direct.add_library("read_file");
    let (reader, _) = in_process::host(direct.path(), &setup.workspace);
    let expected = call(&reader, "read_file", json!({"path": "notes.txt"}));
    assert!(!expected.is_error(), "{}", expected.model_text());
    assert!(!outcome.is_error(), "{}", outcome.model_text());
    assert_eq!(outcome.model_text(), expected.model_text());
    assert!(outcome.model_text().contains("second line"));
    assert_eq!(
        ui.of_kind("mcp_server_request_started"),
        vec![String::new()]
    );
    assert_eq!(
        ui.of_kind("mcp_server_response"),
        vec![expected.model_text()]
    );
    assert_eq!(outcome.description, "[use_mcp_tool for 'toolhost']");
    // The server stays up: a second call reuses it, and the guide names it.
    // (toolhost's server keeps one task, so read_file notices the repeated read.)
    let again = use_tool(
        &host,
        "toolhost",
        "read_file",
        Some(r#"{"path": "notes.txt"}"#),
    );
    assert_eq!(
        again.model_text(),
        format!(
            "[File already read] The file 'notes.txt' was already read earlier in this conversation. Returning content:\n{}",
            expected.model_text()
        )
    );
    let docs = call(&host, "load_mcp_documentation", json!({})).model_text();
    assert!(
        docs.contains("Servers connected right now: toolhost\n"),
        "{docs}"
    );
    assert!(docs.contains(&setup.settings_file.display().to_string()));
    assert!(setup.workspace.join("mcp-servers").is_dir());
}

#[test]
fn unknown_servers_and_tools_are_reported() {
    let setup = setup(|s| json!({"off": s.fake("hang", json!({"disabled": true}))}));
    let (host, _) = setup.host(true);
    assert_eq!(
        use_tool(&host, "nope", "read_file", None).model_text(),
        failed("No connection found for server: nope. Please make sure to use MCP servers available under 'Connected MCP Servers'.")
    );
    assert_eq!(
        use_tool(&host, "off", "ping", None).model_text(),
        failed("Server \"off\" is disabled and cannot be used")
    );
    assert_eq!(
        use_tool(&host, "toolhost", "no_such_tool", Some("{}")).model_text(),
        failed("MCP error -32602: Unknown tool: no_such_tool")
    );
}

#[test]
fn invalid_json_arguments_are_a_mistake() {
    let setup = setup(no_servers);
    let (host, ui) = setup.host(true);
    for bad in ["{not json", "[1, 2]"] {
        let outcome = use_tool(&host, "toolhost", "read_file", Some(bad));
        assert_eq!(
            outcome.result.as_ref().unwrap_err().kind,
            ErrorKind::InvalidParams
        );
        assert_eq!(
            outcome.model_text(),
            tool_error("Invalid JSON argument used with toolhost for read_file. Please retry with a properly formatted JSON argument.")
        );
    }
    assert_eq!(
        ui.of_kind("error"),
        vec!["Cline tried to use read_file with an invalid JSON argument. Retrying..."; 2]
    );
    assert!(ui.of_kind("mcp_server_request_started").is_empty());
}

#[test]
fn a_server_that_cannot_start_is_an_error() {
    let setup = setup(|_| json!({"ghost": {"command": "/nonexistent/mcp-server-binary"}}));
    let (host, _) = setup.host(true);
    assert_eq!(
        use_tool(&host, "ghost", "anything", None).model_text(),
        failed("MCP server \"ghost\" could not be started: No such file or directory (os error 2)")
    );
}

#[test]
fn servers_that_hang_hit_their_timeout() {
    let setup = setup(|s| {
        json!({
            "hangs": s.fake("hang", json!({"timeout": 1})),
            "silent": s.fake("silent", json!({"timeout": 1})),
        })
    });
    let (host, _) = setup.host(true);
    assert_eq!(
        use_tool(&host, "hangs", "work", None).model_text(),
        failed("MCP error -32001: Request timed out")
    );
    // The connection survives a timed-out call.
    assert_eq!(use_tool(&host, "hangs", "ping", None).model_text(), "pong");
    assert_eq!(
        use_tool(&host, "silent", "ping", None).model_text(),
        failed("MCP server \"silent\" could not be started: no answer to initialize within 1 s")
    );
}

#[test]
fn a_server_that_exits_mid_call_is_restarted_on_the_next_call() {
    let setup = setup(|s| json!({"dies": s.fake("exit", json!({}))}));
    let (host, _) = setup.host(true);
    assert_eq!(use_tool(&host, "dies", "ping", None).model_text(), "pong");
    assert_eq!(
        use_tool(&host, "dies", "work", None).model_text(),
        failed("MCP error -32000: Connection closed")
    );
    assert_eq!(use_tool(&host, "dies", "ping", None).model_text(), "pong");
}

#[test]
fn approval_comes_from_use_mcp_or_the_servers_auto_approve_list() {
    let setup = setup(|s| json!({"trusted": s.fake("hang", json!({"autoApprove": ["ping"]}))}));
    let (host, ui) = setup.host(false);
    assert_eq!(
        use_tool(
            &host,
            "toolhost",
            "read_file",
            Some(r#"{"path":"notes.txt"}"#)
        )
        .model_text(),
        toolhost_tests::nobody_to_ask("use_mcp_tool", &["use_mcp"])
    );
    assert_eq!(
        call(
            &host,
            "access_mcp_resource",
            json!({"server_name": "toolhost", "uri": "file:///x"})
        )
        .model_text(),
        toolhost_tests::nobody_to_ask("access_mcp_resource", &["use_mcp"])
    );
    assert!(ui.of_kind("mcp_server_request_started").is_empty());
    // Listed in autoApprove: no question, the payload is shown.
    assert_eq!(
        use_tool(&host, "trusted", "ping", Some("{}")).model_text(),
        "pong"
    );
    assert_eq!(
        ui.of_kind("use_mcp_server"),
        vec![
            r#"{"type":"use_mcp_tool","serverName":"trusted","toolName":"ping","arguments":"{}"}"#
        ]
    );
    assert_eq!(
        use_tool(&host, "trusted", "work", None).model_text(),
        toolhost_tests::nobody_to_ask("use_mcp_tool", &["use_mcp"])
    );
}

#[test]
fn resources_of_a_server_without_them() {
    let setup = setup(no_servers);
    let (host, _) = setup.host(true);
    let outcome = call(
        &host,
        "access_mcp_resource",
        json!({"server_name": "toolhost", "uri": "file:///notes.txt"}),
    );
    assert_eq!(outcome.result.as_ref().unwrap_err().kind, ErrorKind::Failed);
    assert_eq!(
        outcome.model_text(),
        tool_error("Error executing access_mcp_resource: MCP server \"toolhost\" does not provide resources")
    );
    assert_eq!(outcome.description, "[access_mcp_resource for 'toolhost']");
}

#[test]
fn the_guide_says_when_no_server_runs() {
    let setup = setup(no_servers);
    let (host, ui) = setup.host(true);
    let outcome = call(&host, "load_mcp_documentation", json!({}));
    let text = outcome.model_text();
    assert!(
        text.contains("Servers connected right now: (None running currently)\n"),
        "{text}"
    );
    assert!(text.contains(&format!(
        "Create new servers under `{}`",
        setup.workspace.join("mcp-servers").display()
    )));
    assert_eq!(ui.of_kind("load_mcp_documentation"), vec![String::new()]);
}

fn alive(pid: &str) -> bool {
    // A zombie has exited; only a running process counts.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.split_whitespace().nth(2) != Some("Z"))
}

#[test]
fn the_plugins_shutdown_stops_its_servers() {
    let pid_file = workdir();
    let pid_path: PathBuf = pid_file.path().join("pid");
    let pid_arg = pid_path.clone();
    let setup = setup(
        move |s| json!({"fake": {"command": "python3", "args": [&s.script, "hang", &pid_arg]}}),
    );
    let settings = setup.workspace.join("settings.toml");
    std::fs::write(&settings, setup.settings_toml(true)).unwrap();
    let result = run(toolhost()
        .arg("--settings")
        .arg(&settings)
        .arg("--plugins")
        .arg(setup.plugins.path())
        .args(["call", "use_mcp_tool"])
        .arg(json!({"server_name": "fake", "tool_name": "ping"}).to_string())
        .arg("--cwd")
        .arg(&setup.workspace));
    assert_eq!(result.stdout.trim_end(), "pong", "{}", result.stderr);
    let pid = std::fs::read_to_string(Path::new(&pid_path)).unwrap();
    assert!(!alive(pid.trim()), "server {pid} outlived toolhost");
}

/// The reference server's entry script, installed by `cargo xtask test` (see
/// xtask/src/requirements.rs).
pub(crate) fn server_everything() -> PathBuf {
    let script = toolhost_tests::target_dir()
        .parent()
        .unwrap()
        .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.is_file(),
        "{} is missing: run `cargo xtask test` once, or `npm install --prefix target/node @modelcontextprotocol/server-everything`",
        script.display()
    );
    script
}

#[test]
fn the_reference_server_everything() {
    let script = server_everything();
    let setup =
        setup(move |_| json!({"everything": {"command": "node", "args": [script, "stdio"]}}));
    let (host, ui) = setup.host(true);
    assert_eq!(
        use_tool(
            &host,
            "everything",
            "echo",
            Some(r#"{"message": "hi from toolhost"}"#)
        )
        .model_text(),
        "Echo: hi from toolhost"
    );
    // Text items joined by a blank line, the image as an image block.
    let image = use_tool(&host, "everything", "get-tiny-image", None);
    assert_eq!(
        image.model_text(),
        "Here's the image you requested:\n\nThe image above is the MCP logo."
    );
    let images = image.images();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].media_type, "image/png");
    assert!(images[0].data.starts_with("iVBORw0KGgo"));
    let shown = ui.of_kind("mcp_server_response");
    assert!(shown[1].starts_with(
        "Here's the image you requested:\n\nThe image above is the MCP logo.\n\ndata:image/png;base64,iVBORw0KGgo"
    ));
    let resource = call(
        &host,
        "access_mcp_resource",
        json!({"server_name": "everything", "uri": "demo://resource/dynamic/text/1"}),
    );
    let text = resource.model_text();
    assert!(
        text.starts_with("Resource 1: This is a plaintext resource created at "),
        "{text}"
    );
    assert_eq!(
        resource.description,
        "[access_mcp_resource for 'everything']"
    );
}
