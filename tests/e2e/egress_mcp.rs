//! MCP servers over HTTP are reached through the host's egress proxy: the server the user
//! configured is allowed exactly (a loopback one too, by its address or as `localhost`),
//! decided by the same `[egress]` policy (a deny rule refuses it, and the model reads why),
//! and every connection is logged, under the call's task and tool or, when a tool listing
//! started the server, as the listing's. The fixture server is tests/fixtures/mcp_http_server.py
//! on 127.0.0.1; `HOME`, `XDG_CONFIG_HOME`, `XDG_STATE_HOME` and `TMPDIR` point inside the
//! test's directory.

use std::process::Command;

use serde_json::{json, Value};
use toolhost_tests::{run, Home, Run};

use crate::mcp_remote::{entry, HttpServer, Kind};

/// A user whose MCP settings name one server, `remote`, at `url`.
struct Scene(Home);

impl Scene {
    fn new(kind: Kind, url: &str, settings: &str) -> Self {
        let home = Home::new("", &["use_mcp_tool"]);
        let servers = home.base.join("cline_mcp_settings.json");
        let file = json!({"mcpServers": {"remote": entry(kind, url, json!({}))}});
        std::fs::write(&servers, file.to_string()).unwrap();
        let settings = format!(
            "[auto_approve]\nuse_mcp = true\n[mcp]\nsettings_file = {:?}\n{settings}",
            servers.display().to_string()
        );
        std::fs::write(&home.settings, settings).unwrap();
        Scene(home)
    }

    fn toolhost(&self) -> Command {
        let mut command = self.0.toolhost();
        command.env("XDG_STATE_HOME", self.0.home.join(".local/state"));
        command
    }

    /// `use_mcp_tool` of the server's `echo`.
    fn echo(&self, text: &str) -> Run {
        let params = json!({
            "server_name": "remote",
            "tool_name": "echo",
            "arguments": json!({"text": text}).to_string(),
        });
        let mut command = self.toolhost();
        command
            .args(["call", "use_mcp_tool", &params.to_string(), "--cwd"])
            .arg(&self.0.ws);
        run(&mut command)
    }

    /// The egress log's entries.
    fn log(&self) -> Vec<Value> {
        let mut command = self.toolhost();
        command.args(["egress", "log", "--json"]);
        let result = run(&mut command);
        assert_eq!(result.code, 0, "{}{}", result.stdout, result.stderr);
        result
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The log's entries for connections to `target`, as (tool, verdict, why).
fn entries_for(log: &[Value], target: &str) -> Vec<(String, String, String)> {
    log.iter()
        .filter(|entry| entry["target"] == target)
        .map(|entry| {
            let field = |name: &str| entry[name].as_str().unwrap_or_default().to_string();
            (field("tool"), field("verdict"), field("why"))
        })
        .collect()
}

fn a_configured_server_is_reached_through_the_proxy_and_logged(kind: Kind) {
    let server = HttpServer::start(kind, &[]);
    let scene = Scene::new(kind, &server.url, "");
    let result = scene.echo("through the proxy");
    assert_eq!(result.code, 0, "{}{}", result.stdout, result.stderr);
    assert_eq!(result.stdout.trim(), "echo: through the proxy");
    let log = scene.log();
    let target = format!("127.0.0.1:{}", server.port());
    let entries = entries_for(&log, &target);
    assert!(
        !entries.is_empty(),
        "no connection to {target} logged: {log:?}"
    );
    for (tool, verdict, why) in entries {
        assert_eq!(
            (tool.as_str(), verdict.as_str()),
            ("use_mcp_tool", "allowed")
        );
        assert!(why.contains("the tool's configured endpoint"), "{why}");
    }
}

#[test]
fn a_configured_streamable_http_server_is_reached_through_the_proxy_and_logged() {
    a_configured_server_is_reached_through_the_proxy_and_logged(Kind::StreamableHttp);
}

#[test]
fn a_configured_sse_server_is_reached_through_the_proxy_and_logged() {
    a_configured_server_is_reached_through_the_proxy_and_logged(Kind::Sse);
}

#[test]
fn a_configured_localhost_server_is_allowed_on_its_port() {
    let server = HttpServer::start(Kind::StreamableHttp, &[]);
    let url = server.url.replace("127.0.0.1", "localhost");
    let scene = Scene::new(Kind::StreamableHttp, &url, "");
    let result = scene.echo("by name");
    assert_eq!(result.stdout.trim(), "echo: by name", "{}", result.stderr);
    let target = format!("localhost:{}", server.port());
    let entries = entries_for(&scene.log(), &target);
    assert!(
        entries.iter().any(|(_, verdict, _)| verdict == "allowed"),
        "{entries:?}"
    );
}

#[test]
fn a_deny_rule_refuses_a_configured_server_and_the_model_reads_why() {
    let server = HttpServer::start(Kind::StreamableHttp, &[]);
    let scene = Scene::new(
        Kind::StreamableHttp,
        &server.url,
        "[egress]\ndeny = [\"127.0.0.1\"]\n",
    );
    let result = scene.echo("never");
    assert_eq!(result.code, 1, "{}{}", result.stdout, result.stderr);
    assert!(
        result.stdout.contains("could not be started")
            && result.stdout.contains("egress.deny")
            && result
                .stdout
                .contains("use_mcp_tool may not connect to 127.0.0.1"),
        "{}",
        result.stdout
    );
    let target = format!("127.0.0.1:{}", server.port());
    let entries = entries_for(&scene.log(), &target);
    assert!(
        !entries.is_empty() && entries.iter().all(|(_, verdict, _)| verdict == "denied"),
        "{entries:?}"
    );
}

#[test]
fn a_server_a_tool_listing_starts_is_reached_through_the_proxy_as_the_listings() {
    let server = HttpServer::start(Kind::StreamableHttp, &[]);
    let scene = Scene::new(Kind::StreamableHttp, &server.url, "");
    let mut command = scene.toolhost();
    command.args(["mcp-servers"]);
    let listed = run(&mut command);
    assert!(
        listed.stdout.contains("remote [connected]"),
        "{}{}",
        listed.stdout,
        listed.stderr
    );
    let target = format!("127.0.0.1:{}", server.port());
    let entries = entries_for(&scene.log(), &target);
    assert!(
        !entries.is_empty()
            && entries
                .iter()
                .all(|(tool, verdict, _)| tool == "(tool listing)" && verdict == "allowed"),
        "{entries:?}"
    );
}
