//! One dispatch for every kind of tool: the tools of MCP servers (Cline's native naming,
//! `{server}0mcp0{tool}`) and the HTTP tools declared in the settings are listed by
//! `toolhost tools` and `schema`, and called like plugin tools through the same approval path.
//! Real components: toolhost's own `toolhost mcp` as the MCP server, a loopback HTTP server.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolhost_tests::{run, toolhost, toolhost_bin, workdir, PluginDir, Run};

/// A workspace, the plugins (the MCP client and the HTTP tools), toolhost's own MCP server
/// serving read_file, and settings pointing at them.
struct Setup {
    _dirs: Vec<tempfile::TempDir>,
    workspace: PathBuf,
    plugins: PluginDir,
    /// Kept alive for the server's sake.
    _server_plugins: PluginDir,
    settings: PathBuf,
}

impl Setup {
    /// `auto_approve`: the `autoApprove` list of the `self` server; `toml`: more settings.
    fn new(auto_approve: &[&str], toml: &str) -> Self {
        let workspace = workdir();
        std::fs::write(workspace.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
        let config = workdir();
        let server_plugins = PluginDir::empty();
        server_plugins.add_library("read_file");
        let plugins = PluginDir::empty();
        plugins
            .add_library("use_mcp_tool")
            .add_library("http_tools")
            .add_library("list_files");
        let mcp_settings = config.path().join("cline_mcp_settings.json");
        let servers = json!({"mcpServers": {
            "self": {
                "command": toolhost_bin(),
                "args": ["--plugins", server_plugins.path(), "mcp", "--cwd", workspace.path()],
                "autoApprove": auto_approve,
            },
            "broken server": {"command": config.path().join("no-such-program")},
            "off": {"command": "true", "disabled": true},
        }});
        std::fs::write(&mcp_settings, servers.to_string()).unwrap();
        let settings = config.path().join("toolhost.toml");
        std::fs::write(
            &settings,
            format!(
                "[mcp]\nsettings_file = {:?}\n{toml}",
                mcp_settings.display().to_string()
            ),
        )
        .unwrap();
        Self {
            workspace: workspace.path().to_path_buf(),
            plugins,
            _server_plugins: server_plugins,
            settings,
            _dirs: vec![workspace, config],
        }
    }

    fn toolhost(&self, args: &[&str]) -> Run {
        run(toolhost()
            .arg("--plugins")
            .arg(self.plugins.path())
            .arg("--settings")
            .arg(&self.settings)
            .args(args))
    }

    fn call(&self, tool: &str, params: Value, extra: &[&str]) -> Value {
        let params = params.to_string();
        let cwd = self.workspace.display().to_string();
        let mut args = vec![
            "call",
            tool,
            params.as_str(),
            "--json",
            "--cwd",
            cwd.as_str(),
        ];
        args.extend_from_slice(extra);
        let run = self.toolhost(&args);
        let json = run.json();
        // A tool error exits with 1, a result with 0.
        let expected = i32::from(json["is_error"] == json!(true));
        assert_eq!(run.code, expected, "{run:?}");
        json
    }
}

/// The native name `mcp-servers` reports for `tool` of `server`.
fn native_name_of(report: &Value, server: &str, tool: &str) -> Option<String> {
    report["servers"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == server)?["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == tool)?["native_name"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn mcp_server_tools_are_listed_and_in_the_schemas() {
    let setup = Setup::new(&[], "");
    let listed = setup.toolhost(&["tools", "--json"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    let tools = listed.json()["tools"].as_array().unwrap().clone();
    let mcp: Vec<(&str, &str, bool)> = tools
        .iter()
        .filter(|t| t["name"].as_str().unwrap().contains("0mcp0"))
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                t["plugin"].as_str().unwrap(),
                t["run_time"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(mcp, vec![("self0mcp0read_file", "use_mcp_tool", true)]);

    let schema = setup.toolhost(&["schema", "--format", "openai"]);
    let functions: Vec<Value> = serde_json::from_str(&schema.stdout).unwrap();
    let read = functions
        .iter()
        .find(|f| f["function"]["name"] == "self0mcp0read_file")
        .expect("the MCP tool is in the schema");
    let description = read["function"]["description"].as_str().unwrap();
    assert!(description.starts_with("self: "), "{description}");
    assert_eq!(
        read["function"]["parameters"]["required"],
        json!(["path"]),
        "the server's own input schema"
    );
}

#[test]
fn an_mcp_tool_is_called_by_its_own_name_through_the_approval_path() {
    let setup = Setup::new(&[], "");
    // Not auto-approved, and nobody to ask: denied, as a plugin tool would be.
    let denied = setup.call("self0mcp0read_file", json!({"path": "notes.txt"}), &[]);
    assert_eq!(
        denied,
        json!({"is_error": true, "text": toolhost_tests::nobody_to_ask("self0mcp0read_file", &["use_mcp"]), "images": [], "error_kind": "denied"})
    );
    let approved = setup.call(
        "self0mcp0read_file",
        json!({"path": "notes.txt"}),
        &["--yes"],
    );
    assert_eq!(
        approved,
        json!({"is_error": false, "text": "1 | alpha\n2 | beta\n\n(File has 2 lines total.)", "images": []})
    );
}

#[test]
fn the_servers_auto_approve_list_applies_to_native_calls() {
    let setup = Setup::new(&["read_file"], "");
    let result = setup.call("self0mcp0read_file", json!({"path": "notes.txt"}), &[]);
    assert_eq!(result["is_error"], json!(false), "{result}");
    assert_eq!(
        result["text"],
        json!("1 | alpha\n2 | beta\n\n(File has 2 lines total.)")
    );
}

#[test]
fn missing_required_arguments_are_the_hosts_missing_parameter_error() {
    let setup = Setup::new(&["read_file"], "");
    let result = setup.call("self0mcp0read_file", json!({}), &[]);
    assert_eq!(result["is_error"], json!(true));
    assert_eq!(
        result["text"],
        json!(tool_api::texts::tool_error(
            &tool_api::texts::missing_param_error("path")
        ))
    );
}

#[test]
fn a_server_that_cannot_start_is_a_readable_error_and_harms_no_other() {
    let setup = Setup::new(&["read_file"], "");
    let report = setup.toolhost(&["mcp-servers", "--json"]);
    assert_eq!(report.code, 0, "{report:?}");
    let report = report.json();
    let statuses: Vec<(&str, &str)> = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("broken server", "failed"),
            ("off", "disabled"),
            ("self", "connected")
        ]
    );
    let broken = &report["servers"][0];
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .starts_with("MCP server \"broken server\" could not be started: "),
        "{broken}"
    );
    assert_eq!(
        native_name_of(&report, "self", "read_file").as_deref(),
        Some("self0mcp0read_file")
    );
    assert_eq!(
        report["servers"][2]["tools"][0]["auto_approve"],
        json!(true)
    );

    let listed = setup.toolhost(&["mcp-servers"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    for line in [
        "broken server [failed]",
        "self [connected]",
        "self0mcp0read_file [auto-approved]",
    ] {
        assert!(listed.stdout.contains(line), "{}", listed.stdout);
    }

    // Not a plain identifier: a hashed key, the same in every run.
    let key = broken["key"].as_str().unwrap().to_string();
    assert!(key.starts_with('c') && key.len() == 6, "{key}");
    let again = setup.toolhost(&["mcp-servers", "--json"]).json();
    assert_eq!(again["servers"][0]["key"], json!(key));
    // A call by name on the broken server reaches the client and says why it failed.
    let result = setup.call(&format!("{key}0mcp0anything"), json!({}), &["--yes"]);
    let text = result["text"].as_str().unwrap();
    assert_eq!(result["is_error"], json!(true), "{result}");
    assert!(
        text.starts_with(
            &tool_api::texts::tool_error(
                "Error executing MCP tool: MCP server \"broken server\" could not be started: "
            )[..80]
        ),
        "{text}"
    );
    // The working server is unaffected.
    let fine = setup.call("self0mcp0read_file", json!({"path": "notes.txt"}), &[]);
    assert_eq!(fine["is_error"], json!(false), "{fine}");
}

#[test]
fn unknown_mcp_tools_are_unknown_tools() {
    let setup = Setup::new(&["read_file"], "");
    let run = setup.toolhost(&["call", "self0mcp0no_such_tool", "{}"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("no tool named 'self0mcp0no_such_tool' is loaded"),
        "{}",
        run.stderr
    );
}

/// What the loopback server saw of one request: path, body, `Authorization` header.
type Seen = (String, String, Option<String>);

/// A loopback server answering POSTs: it records each body and the `Authorization` header,
/// and answers by path (`/echo`: the body back, `/fail`: 500, `/big`: 300 000 characters).
struct HttpServer {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HttpServer {
    fn start() -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (server, seen) = (server.clone(), seen.clone());
            std::thread::spawn(move || {
                while let Ok(mut request) = server.recv() {
                    let mut body = String::new();
                    let _ = request.as_reader().read_to_string(&mut body);
                    let auth = request
                        .headers()
                        .iter()
                        .find(|h| h.field.equiv("Authorization"))
                        .map(|h| h.value.to_string());
                    let path = request.url().to_string();
                    seen.lock()
                        .unwrap()
                        .push((path.clone(), body.clone(), auth));
                    let response = match path.as_str() {
                        "/echo" => tiny_http::Response::from_string(format!("received {body}")),
                        "/big" => tiny_http::Response::from_string("x".repeat(300_000)),
                        _ => tiny_http::Response::from_string("boom").with_status_code(500),
                    };
                    let _ = request.respond(response);
                }
            })
        };
        Self {
            base: format!("http://127.0.0.1:{port}"),
            seen,
            server,
            thread: Some(thread),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn http_settings(server: &HttpServer) -> String {
    format!(
        r#"[auto_approve]
use_web = true
[web.fetch]
max_chars = 1000
[http_tools.echo_ticket]
description = "Echoes a ticket."
url = "{base}/echo"
parameters = {{ type = "object", properties = {{ id = {{ type = "integer" }} }}, required = ["id"] }}
bearer_token_env = "TOOLHOST_HTTP_TOOL_TEST_TOKEN"
[http_tools.failing]
url = "{base}/fail"
[http_tools.big]
url = "{base}/big"
[http_tools.no_url]
description = "Declared without a URL."
"#,
        base = server.base
    )
}

#[test]
fn http_tools_are_listed_and_post_their_arguments() {
    let server = HttpServer::start();
    let setup = Setup::new(&[], &http_settings(&server));
    let schema = setup.toolhost(&["schema", "--format", "anthropic"]);
    let tools: Vec<Value> = serde_json::from_str(&schema.stdout).unwrap();
    let echo = tools
        .iter()
        .find(|t| t["name"] == "echo_ticket")
        .expect("listed");
    assert_eq!(echo["description"], json!("Echoes a ticket."));
    assert_eq!(echo["input_schema"]["required"], json!(["id"]));

    let run = run(toolhost()
        .env("TOOLHOST_HTTP_TOOL_TEST_TOKEN", "t0ken")
        .arg("--plugins")
        .arg(setup.plugins.path())
        .arg("--settings")
        .arg(&setup.settings)
        // A string the schema says is an integer: coerced by the host, as for plugin tools.
        .args(["call", "echo_ticket", r#"{"id": "42"}"#, "--json"]));
    assert_eq!(
        run.json(),
        json!({"is_error": false, "text": "received {\"id\":42}", "images": []})
    );
    assert_eq!(
        server.seen.lock().unwrap().clone(),
        vec![(
            "/echo".to_string(),
            r#"{"id":42}"#.to_string(),
            Some("Bearer t0ken".to_string())
        )]
    );
}

#[test]
fn http_tool_faults_are_readable_tool_errors() {
    let server = HttpServer::start();
    let setup = Setup::new(&[], &http_settings(&server));
    let failing = setup.call("failing", json!({}), &[]);
    assert_eq!(failing["is_error"], json!(true));
    assert_eq!(
        failing["text"],
        json!(tool_api::texts::tool_error(
            "The HTTP tool failing failed: Request failed with status code 500"
        ))
    );
    let no_url = setup.call("no_url", json!({}), &[]);
    assert_eq!(
        no_url["text"],
        json!(tool_api::texts::tool_error(
            "The HTTP tool no_url cannot be used: the setting http_tools.no_url.url is missing."
        ))
    );
    // No token in the environment: refused before anything is sent.
    let no_token = setup.call("echo_ticket", json!({"id": 1}), &[]);
    assert_eq!(
        no_token["text"],
        json!(tool_api::texts::tool_error(
            "The HTTP tool echo_ticket cannot be used: the environment variable TOOLHOST_HTTP_TOOL_TEST_TOKEN (setting http_tools.echo_ticket.bearer_token_env) is not set or empty."
        ))
    );
    let big = setup.call("big", json!({}), &[]);
    assert_eq!(
        big["text"],
        json!(format!(
            "{}\n\n[Content truncated: 1000 of 300000 characters shown.]",
            "x".repeat(1000)
        ))
    );
    let paths: Vec<String> = server
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.0.clone())
        .collect();
    assert_eq!(paths, vec!["/fail", "/big"]);
}

#[test]
fn http_tools_need_web_approval() {
    let server = HttpServer::start();
    let settings = http_settings(&server).replace("use_web = true", "use_web = false");
    let setup = Setup::new(&[], &settings);
    let denied = setup.call("big", json!({}), &[]);
    assert_eq!(denied["error_kind"], json!("denied"), "{denied}");
    assert!(server.seen.lock().unwrap().is_empty());
}

/// `toolhost mcp` lists registered tools only (a toolhost serving itself would start itself
/// again and again), but dispatches a run-time name it is called with.
#[test]
fn toolhost_mcp_dispatches_run_time_names() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let server = HttpServer::start();
    let setup = Setup::new(&[], &http_settings(&server));
    let mut child = toolhost()
        .arg("--plugins")
        .arg(setup.plugins.path())
        .arg("--settings")
        .arg(&setup.settings)
        .args(["mcp", "--cwd"])
        .arg(&setup.workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut request = |id: u64, method: &str, params: Value| -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(input, "{message}").unwrap();
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "1"}}),
    );
    let listed = request(2, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"big"), "{names:?}");
    assert!(names.contains(&"list_files"), "{names:?}");
    let called = request(3, "tools/call", json!({"name": "big", "arguments": {}}));
    let text = called["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.ends_with("[Content truncated: 1000 of 300000 characters shown.]"),
        "{called}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
