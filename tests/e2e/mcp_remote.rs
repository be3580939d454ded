//! MCP servers reached over HTTP: streamable HTTP and the legacy SSE transport, through the real
//! use_mcp_tool plugin against real servers (tests/fixtures/mcp_http_server.py, built on the MCP
//! Python SDK and served by uvicorn on 127.0.0.1).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};
use toolhost_tests::workspace_root;

use crate::mcp_client::{call, failed, setup, use_tool, Setup};

/// The two HTTP transports, as the fixture server and the settings file name them.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    StreamableHttp,
    Sse,
}

impl Kind {
    fn server_arg(self) -> &'static str {
        match self {
            Kind::StreamableHttp => "streamable-http",
            Kind::Sse => "sse",
        }
    }

    fn settings_type(self) -> &'static str {
        match self {
            Kind::StreamableHttp => "streamableHttp",
            Kind::Sse => "sse",
        }
    }
}

/// A running fixture server, killed when dropped.
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) url: String,
}

impl HttpServer {
    /// Starts the fixture and waits until it prints its URL (it does once it accepts connections).
    pub(crate) fn start(kind: Kind, options: &[&str]) -> HttpServer {
        let mut child = Command::new("python3")
            .arg(workspace_root().join("tests/fixtures/mcp_http_server.py"))
            .arg(kind.server_arg())
            .args(options)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let server = HttpServer {
            child,
            url: line.trim().to_string(),
        };
        assert!(
            server.url.starts_with("http://127.0.0.1:"),
            "the fixture server did not start (is the MCP Python SDK 2.x installed?): {line:?}"
        );
        server
    }

    /// `host:port` of its URL, to start a successor at the same address.
    pub(crate) fn port(&self) -> String {
        let rest = self.url.trim_start_matches("http://127.0.0.1:");
        rest[..rest.find('/').unwrap()].to_string()
    }

    /// Waits for the process to end (after a tool made it exit).
    fn wait_exit(&mut self) {
        self.child.wait().unwrap();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An entry of `kind` for `url`, with extra fields.
pub(crate) fn entry(kind: Kind, url: &str, extra: Value) -> Value {
    let mut entry = json!({"type": kind.settings_type(), "url": url});
    if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        entry.extend(extra.clone());
    }
    entry
}

fn settings_with(servers: Value) -> Setup {
    setup(move |_| servers)
}

const TOKEN: &str = "Bearer remote-test-token";

fn calls_resources_and_headers(kind: Kind) {
    // The server refuses every request (the SSE GET and POSTs alike) without the header.
    let server = HttpServer::start(
        kind,
        &["--require-header", &format!("Authorization: {TOKEN}")],
    );
    let setup = settings_with(json!({
        "remote": entry(kind, &server.url, json!({"headers": {"Authorization": TOKEN}})),
        "anonymous": entry(kind, &server.url, json!({})),
    }));
    let (host, ui) = setup.host(true);
    assert_eq!(
        use_tool(&host, "remote", "echo", Some(r#"{"text": "hello"}"#)).model_text(),
        "echo: hello"
    );
    assert_eq!(
        use_tool(&host, "remote", "add", Some(r#"{"a": 2, "b": 40}"#)).model_text(),
        "42"
    );
    assert_eq!(
        use_tool(&host, "remote", "whoami", None).model_text(),
        TOKEN
    );
    let image = use_tool(&host, "remote", "image", None);
    assert_eq!(image.model_text(), "(No response)");
    let images = image.images();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].media_type, "image/png");
    assert!(
        images[0].data.starts_with("iVBORw0KGgo"),
        "{}",
        images[0].data
    );
    let resource = call(
        &host,
        "access_mcp_resource",
        json!({"server_name": "remote", "uri": "note://hello"}),
    );
    assert_eq!(resource.model_text(), "Hello from a note.");
    assert_eq!(
        ui.of_kind("mcp_server_response").last().cloned(),
        Some("Hello from a note.".to_string())
    );
    // Without the header the server answers 401, on the first request of either transport.
    let refused = match kind {
        Kind::Sse => "HTTP 401 Unauthorized: missing or wrong authorization",
        Kind::StreamableHttp => {
            "unexpected server response: HTTP 401 Unauthorized: missing or wrong authorization"
        }
    };
    assert_eq!(
        use_tool(&host, "anonymous", "echo", Some(r#"{"text": "x"}"#)).model_text(),
        failed(&format!(
            "MCP server \"anonymous\" could not be started: {refused}"
        ))
    );
}

#[test]
fn streamable_http_calls_resources_and_headers() {
    calls_resources_and_headers(Kind::StreamableHttp);
}

#[test]
fn sse_calls_resources_and_headers() {
    calls_resources_and_headers(Kind::Sse);
}

fn a_slow_tool_times_out(kind: Kind) {
    let server = HttpServer::start(kind, &[]);
    let setup = settings_with(json!({"slow": entry(kind, &server.url, json!({"timeout": 2}))}));
    let (host, _) = setup.host(true);
    assert_eq!(
        use_tool(&host, "slow", "sleep", Some(r#"{"seconds": 120}"#)).model_text(),
        failed("MCP error -32001: Request timed out")
    );
    // The connection survives a timed-out call.
    assert_eq!(
        use_tool(&host, "slow", "echo", Some(r#"{"text": "still here"}"#)).model_text(),
        "echo: still here"
    );
}

#[test]
fn streamable_http_a_slow_tool_times_out() {
    a_slow_tool_times_out(Kind::StreamableHttp);
}

#[test]
fn sse_a_slow_tool_times_out() {
    a_slow_tool_times_out(Kind::Sse);
}

fn a_server_that_exits_mid_call(kind: Kind, error: &str) {
    let mut server = HttpServer::start(kind, &[]);
    let setup = settings_with(json!({"fragile": entry(kind, &server.url, json!({}))}));
    let (host, _) = setup.host(true);
    assert_eq!(
        use_tool(&host, "fragile", "echo", Some(r#"{"text": "one"}"#)).model_text(),
        "echo: one"
    );
    assert_eq!(
        use_tool(&host, "fragile", "crash", None).model_text(),
        failed(error)
    );
    server.wait_exit();
    // A new server at the same address: the next call connects to it.
    let successor = HttpServer::start(kind, &["--port", &server.port()]);
    assert_eq!(successor.url, server.url);
    assert_eq!(
        use_tool(&host, "fragile", "echo", Some(r#"{"text": "two"}"#)).model_text(),
        "echo: two"
    );
}

/// A server that went away between calls: the call finds the connection lost and reconnects
/// with backoff while the server restarts. A call of a tool annotated read-only is made again
/// on the new connection. Any other call lost with the connection fails, and the next one
/// reconnects; over SSE the closed event stream may be seen first, and the call then waits for
/// the reconnection and is sent once (`thirds`: the answers the third call may get). The
/// streamable HTTP server offers no event stream (`--get-404`), so its loss shows only when a
/// call is sent.
fn a_server_restarted_between_calls(kind: Kind, options: &[&str], thirds: &[String]) {
    let server = HttpServer::start(kind, options);
    let setup = settings_with(json!({"restarting": entry(kind, &server.url, json!({}))}));
    let (host, _) = setup.host(true);
    let call = |tool: &str, text: &str| {
        let arguments = json!({ "text": text }).to_string();
        use_tool(&host, "restarting", tool, Some(&arguments)).model_text()
    };
    assert_eq!(call("echo", "one"), "echo: one");
    let port = server.port();
    let restart_later = |port: String| {
        let mut options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
        options.extend(["--port".to_string(), port]);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(700));
            let options: Vec<&str> = options.iter().map(String::as_str).collect();
            HttpServer::start(kind, &options)
        })
    };
    drop(server);
    let successor = restart_later(port.clone());
    assert_eq!(
        call("peek", "two"),
        "peek: two",
        "made again once the server was back"
    );
    drop(successor.join().unwrap());
    let successor = restart_later(port);
    let third = call("echo", "three");
    assert!(thirds.contains(&third), "{third}");
    let _server = successor.join().unwrap();
    assert_eq!(call("echo", "four"), "echo: four");
}

#[test]
fn streamable_http_a_server_restarted_between_calls() {
    // A call that may not be made twice is not.
    let thirds = [failed("MCP error -32000: Connection closed")];
    a_server_restarted_between_calls(Kind::StreamableHttp, &["--get-404"], &thirds);
}

#[test]
fn sse_a_server_restarted_between_calls() {
    let thirds = [
        "echo: three".to_string(),
        failed("MCP error -32000: Connection closed"),
    ];
    a_server_restarted_between_calls(Kind::Sse, &[], &thirds);
}

#[test]
fn streamable_http_a_server_that_exits_mid_call() {
    a_server_that_exits_mid_call(Kind::StreamableHttp, "MCP error -32000: Connection closed");
}

#[test]
fn sse_a_server_that_exits_mid_call() {
    a_server_that_exits_mid_call(Kind::Sse, "MCP error -32000: Connection closed");
}

#[test]
fn a_url_without_type_is_sse() {
    let server = HttpServer::start(Kind::Sse, &[]);
    let setup = settings_with(json!({
        "untyped": {"url": &server.url},
        "legacy": {"transportType": "sse", "url": &server.url},
    }));
    let (host, _) = setup.host(true);
    for name in ["untyped", "legacy"] {
        assert_eq!(
            use_tool(&host, name, "echo", Some(r#"{"text": "sse"}"#)).model_text(),
            "echo: sse"
        );
    }
}

#[test]
fn legacy_http_is_streamable_http_and_a_get_404_is_no_stream() {
    // Many servers answer the optional GET stream with 404 (Cline rewrites it to 405).
    let server = HttpServer::start(Kind::StreamableHttp, &["--get-404"]);
    let setup = settings_with(json!({"legacy": {"transportType": "http", "url": &server.url}}));
    let (host, _) = setup.host(true);
    assert_eq!(
        use_tool(&host, "legacy", "add", Some(r#"{"a": 1, "b": 1}"#)).model_text(),
        "2"
    );
    assert_eq!(
        use_tool(&host, "legacy", "echo", Some(r#"{"text": "again"}"#)).model_text(),
        "echo: again"
    );
}

#[test]
fn an_unreachable_url_cannot_be_started() {
    // Port 1 on the loopback: nothing listens there, the connection is refused. The server's
    // connections go through the host's egress proxy, which says why it answered 502.
    let setup = settings_with(json!({
        "gone-http": entry(Kind::StreamableHttp, "http://127.0.0.1:1/mcp", json!({})),
        "gone-sse": entry(Kind::Sse, "http://127.0.0.1:1/sse", json!({})),
    }));
    let (host, _) = setup.host(true);
    let refused = "egress: 127.0.0.1:1 cannot be reached: Connection refused (os error 111)";
    assert_eq!(
        use_tool(&host, "gone-http", "echo", None).model_text(),
        failed(&format!(
            "MCP server \"gone-http\" could not be started: HTTP 502\n{refused}"
        ))
    );
    assert_eq!(
        use_tool(&host, "gone-sse", "echo", None).model_text(),
        failed(&format!(
            "MCP server \"gone-sse\" could not be started: HTTP 502 Bad Gateway: {refused}"
        ))
    );
}

/// A remote server's tools are tools of their own too (`{server}0mcp0{tool}`), listed with its
/// schema and called through the host like a plugin tool.
fn remote_tools_are_native_tools(kind: Kind) {
    let server = HttpServer::start(kind, &[]);
    let setup = settings_with(json!({"remote": entry(kind, &server.url, json!({}))}));
    let (host, _ui) = setup.host(true);
    let names: Vec<String> = host
        .tools()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name.starts_with("remote0mcp0"))
        .collect();
    for expected in ["remote0mcp0add", "remote0mcp0echo", "remote0mcp0whoami"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    let add = host.lookup("remote0mcp0add").expect("resolved by name");
    assert_eq!(add.spec.input_schema["required"], json!(["a", "b"]));
    assert_eq!(
        call(&host, "remote0mcp0add", json!({"a": 2, "b": 40})).model_text(),
        "42"
    );
}

#[test]
fn streamable_http_tools_are_native_tools() {
    remote_tools_are_native_tools(Kind::StreamableHttp);
}

#[test]
fn sse_tools_are_native_tools() {
    remote_tools_are_native_tools(Kind::Sse);
}
