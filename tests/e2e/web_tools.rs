//! web_fetch and web_search through their real plugins, against an HTTP server on 127.0.0.1
//! that this module starts: HTML, JSON and text pages, a redirect chain and a loop, a slow page,
//! large pages, binary files, an HTTP proxy, and fake SearXNG and Cline-compatible endpoints
//! whose requests the tests check whole.
//!
//! No request leaves 127.0.0.1: every host is configured with `web.proxy = "none"` (or the test
//! server as the proxy), so proxy variables in the environment are never used. Tests that need
//! the Cline token run the `toolhost` binary with the variable in the child's environment only,
//! because the in-process tests share this process's environment.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tool_api::texts::{missing_param_error, tool_error};
use toolhost::CallOutcome;
use toolhost::ErrorKind;
use toolhost::Settings;
use toolhost_tests::{run, toolhost, workdir, PluginDir};

use crate::in_process::{self, Said};

/// The bearer token the fake Cline endpoints accept.
const TOKEN: &str = "workos:test-token";

/// The environment variable the CLI tests pass the token in.
const TOKEN_ENV: &str = "TOOLHOST_WEB_TEST_TOKEN";

const PAGE_HTML: &str = r#"<!doctype html>
<html><head><title>Runtime guide</title>
<style>body { font-family: sans-serif; }</style>
<script>window.analytics = "tracking";</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/blog">Blog</a> | <a href="/pricing">Pricing</a></nav>
<main><article>
<h1>Scheduling tasks</h1>
<p>The runtime spreads <em>tasks</em> over a pool of worker threads. A task that blocks a
thread stalls every other task queued on it, so blocking work belongs on the
<a href="/docs/blocking">blocking pool</a> instead.</p>
<h2>Spawning</h2>
<p>Call spawn with a future to run it in the background; keep the handle to await its output
or to abort it later when it is no longer needed by the caller.</p>
<pre><code>let handle = spawn(work());</code></pre>
<ul><li>Work stealing</li><li>Cooperative budgets</li></ul>
</article></main>
<aside>Sponsored: faster builds</aside>
<footer>Copyright Example Corp</footer>
<script src="/app.js"></script>
</body></html>"#;

/// The Markdown the direct backend makes of [`PAGE_HTML`] (links made absolute against the URL).
fn page_markdown(base: &str) -> String {
    format!(
        "## Scheduling tasks\n\nThe runtime spreads *tasks* over a pool of worker threads. A task \
         that blocks a thread stalls every other task queued on it, so blocking work belongs on \
         the [blocking pool]({base}/docs/blocking) instead.\n\n## Spawning\n\nCall spawn with a \
         future to run it in the background; keep the handle to await its output or to abort it \
         later when it is no longer needed by the caller.\n\n```\nlet handle = \
         spawn(work());\n```\n\n- Work stealing\n- Cooperative budgets"
    )
}

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

// ---------------------------------------------------------------------------------------------
// The test server
// ---------------------------------------------------------------------------------------------

/// A request as the server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    method: String,
    /// The request target as sent: a path, or an absolute URL when sent to a proxy.
    target: String,
    /// Header names lower-cased, without the transport's own (`host`, `content-length`).
    headers: BTreeMap<String, String>,
    body: String,
}

/// A reply.
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    delay: Option<Duration>,
}

impl Reply {
    fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("Content-Type", content_type.to_string())],
            body: body.into(),
            delay: None,
        }
    }

    fn redirect(to: &str) -> Self {
        Self {
            status: 302,
            headers: vec![("Location", to.to_string())],
            body: Vec::new(),
            delay: None,
        }
    }

    fn json(status: u16, value: &Value) -> Self {
        Self::new(status, "application/json", value.to_string())
    }
}

/// The server: one thread accepting, one thread per request (so a slow reply blocks nothing).
struct Server {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start() -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let server = server.clone();
            let seen = seen.clone();
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    let seen = seen.clone();
                    std::thread::spawn(move || handle(request, &seen));
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

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn targets(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.target).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn handle(mut request: tiny_http::Request, seen: &Mutex<Vec<Seen>>) {
    let mut body = String::new();
    let _ = request.as_reader().read_to_string(&mut body);
    let headers = request
        .headers()
        .iter()
        .map(|h| {
            (
                h.field.as_str().as_str().to_ascii_lowercase(),
                h.value.as_str().to_string(),
            )
        })
        .filter(|(name, _)| name != "host" && name != "content-length")
        .collect();
    let received = Seen {
        method: request.method().as_str().to_string(),
        target: request.url().to_string(),
        headers,
        body,
    };
    seen.lock().unwrap().push(received.clone());
    let reply = route(&received);
    if let Some(delay) = reply.delay {
        std::thread::sleep(delay);
    }
    let mut response = tiny_http::Response::from_data(reply.body).with_status_code(reply.status);
    for (name, value) in reply.headers {
        response.add_header(tiny_http::Header::from_bytes(name, value.as_bytes()).unwrap());
    }
    let _ = request.respond(response);
}

fn route(request: &Seen) -> Reply {
    let target = request.target.as_str();
    if target.starts_with("http://") {
        // Sent to us as a proxy: the absolute URL is the request target.
        return Reply::new(
            200,
            "text/plain",
            format!("served through the proxy for {target}"),
        );
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    match (request.method.as_str(), path) {
        ("GET", "/page.html") => Reply::new(200, "text/html; charset=utf-8", PAGE_HTML),
        ("GET", "/data.json") => Reply::new(
            200,
            "application/json",
            "{\"name\": \"toolhost\", \"tags\": [\"a\", \"b\"]}",
        ),
        ("GET", "/notes.txt") => Reply::new(200, "text/plain", "first line\nsecond line\n"),
        ("GET", "/latin1.txt") => {
            Reply::new(200, "text/plain; charset=iso-8859-1", b"caf\xe9".to_vec())
        }
        ("GET", "/hop/1") => Reply::redirect("/hop/2"),
        ("GET", "/hop/2") => Reply::redirect("/hop/3"),
        ("GET", "/hop/3") => Reply::redirect("/notes.txt"),
        ("GET", "/loop") => Reply::redirect("/loop"),
        ("GET", "/to-ftp") => Reply::redirect("ftp://127.0.0.1/file"),
        ("GET", "/slow") => Reply {
            delay: Some(Duration::from_secs(5)),
            ..Reply::new(200, "text/plain", "too late")
        },
        ("GET", "/large.txt") => Reply::new(200, "text/plain", "0123456789".repeat(30_000)),
        ("GET", "/image.png") => Reply::new(200, "image/png", PNG),
        ("GET", "/blob") => Reply::new(200, "application/octet-stream", PNG),
        ("GET", "/search") => searxng(query),
        ("POST", "/api/v1/search/webfetch") => cline_fetch(request),
        ("POST", "/api/v1/search/websearch") => cline_search(request),
        _ => Reply::new(404, "text/plain", "not found"),
    }
}

/// A SearXNG instance: `format=json` is required, as on a real one.
fn searxng(query: &str) -> Reply {
    if !query.ends_with("&format=json") {
        return Reply::new(403, "text/html", "<h1>403 Forbidden</h1>");
    }
    let results = if query.starts_with("q=nothing") {
        json!([])
    } else {
        json!([
            {"url": "https://tokio.rs/tokio/tutorial", "title": "Tokio tutorial", "content": "…", "engine": "duckduckgo"},
            {"url": "https://spam.example/tokio", "title": "Tokio deals", "content": "…"},
            {"url": "https://rust-lang.github.io/async-book/", "title": "Async book", "content": "…"},
            {"url": "https://ads.spam.example/x", "title": "More deals", "content": "…"},
        ])
    };
    Reply::json(
        200,
        &json!({"query": query, "number_of_results": 0, "results": results, "unresponsive_engines": []}),
    )
}

fn has_token(request: &Seen) -> bool {
    request.headers.get("authorization") == Some(&format!("Bearer {TOKEN}"))
}

/// Cline's fetch endpoint: refuses a wrong token, answers with the prompt applied.
fn cline_fetch(request: &Seen) -> Reply {
    if !has_token(request) {
        return Reply::json(401, &json!({"error": "unauthorized"}));
    }
    let body: Value = serde_json::from_str(&request.body).unwrap_or_default();
    let result = format!(
        "The page {} says: {}",
        body["Url"].as_str().unwrap_or("?"),
        body["Prompt"].as_str().unwrap_or("?")
    );
    Reply::json(
        200,
        &json!({"success": true, "data": {"bytes": 10, "fetchStatus": "success", "result": result, "durationMs": 5, "url": body["Url"]}}),
    )
}

/// Cline's search endpoint: refuses a wrong token; the query "nothing" finds nothing.
fn cline_search(request: &Seen) -> Reply {
    if !has_token(request) {
        return Reply::json(401, &json!({"error": "unauthorized"}));
    }
    let body: Value = serde_json::from_str(&request.body).unwrap_or_default();
    if body["query"] == "nothing" {
        return Reply::json(200, &json!({"data": {}}));
    }
    Reply::json(
        200,
        &json!({"data": {"results": [
            {"title": "Tokio tutorial", "url": "https://tokio.rs/tokio/tutorial"},
            {"title": "Async book", "url": "https://rust-lang.github.io/async-book/"},
        ]}}),
    )
}

// ---------------------------------------------------------------------------------------------
// Hosts
// ---------------------------------------------------------------------------------------------

fn plugins() -> PluginDir {
    let dir = PluginDir::empty();
    dir.add_library("web_fetch");
    dir.add_library("web_search");
    dir
}

/// Settings with web tools auto-approved, no proxy, a generous timeout, and `extra` appended
/// (sections of their own, such as `[web.fetch]`).
fn settings(extra: &str) -> Settings {
    settings_with(
        "[auto_approve]\nuse_web = true\n",
        "timeout_ms = 20000",
        extra,
    )
}

fn settings_with(approval: &str, web: &str, extra: &str) -> Settings {
    // Straight to the test's loopback servers: the egress policy has tests of its own.
    let text = format!("{approval}\n[web]\nproxy = \"none\"\negress = false\n{web}\n\n{extra}\n");
    Settings::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Runs one call on a fresh in-process host.
fn call(settings: Settings, tool: &str, params: Value) -> (CallOutcome, Vec<Said>) {
    let plugins = plugins();
    let cwd = workdir();
    let (host, ui) = in_process::host_with(plugins.path(), cwd.path(), settings);
    let outcome = host.call(tool, &params.to_string());
    let said = ui.said.lock().unwrap().clone();
    (outcome, said)
}

fn fetch(settings: Settings, url: &str, prompt: &str) -> CallOutcome {
    call(settings, "web_fetch", json!({"url": url, "prompt": prompt})).0
}

/// The model's text of a successful call (the web tools report request failures as text).
fn ok_text(outcome: &CallOutcome) -> String {
    assert!(!outcome.is_error(), "{}", outcome.model_text());
    outcome.model_text()
}

fn tool_said(said: &[Said]) -> Vec<(String, bool)> {
    said.iter()
        .filter(|s| s.kind == "tool")
        .map(|s| (s.text.clone(), s.partial))
        .collect()
}

fn fetch_payload(url: &str) -> String {
    json!({"tool": "webFetch", "path": url, "content": format!("Fetching URL: {url}"), "operationIsLocatedInWorkspace": false}).to_string()
}

fn search_payload(query: &str) -> String {
    json!({"tool": "webSearch", "path": query, "content": format!("Searching for: {query}"), "operationIsLocatedInWorkspace": false}).to_string()
}

/// `toolhost call` with a settings file, the token in the child's environment only.
fn cli_call(settings_toml: &str, token: &str, tool: &str, params: &Value) -> Value {
    let plugins = plugins();
    let cwd = workdir();
    let settings_file = cwd.path().join("settings.toml");
    std::fs::write(&settings_file, settings_toml).unwrap();
    let output = run(toolhost()
        .env(TOKEN_ENV, token)
        .arg("--plugins")
        .arg(plugins.path())
        .arg("--settings")
        .arg(&settings_file)
        .args(["call", tool, &params.to_string(), "--json", "--cwd"])
        .arg(cwd.path()));
    output.json()
}

fn cline_settings_toml(server: &Server, tool_section: &str) -> String {
    format!(
        "[auto_approve]\nuse_web = true\n\n[web]\nproxy = \"none\"\ntimeout_ms = 20000\n\n\
         [web.cline]\nbase_url = \"{}\"\ntoken_env = \"{TOKEN_ENV}\"\n\n{tool_section}\n",
        server.base
    )
}

/// The headers a request carried, with the task id (different on every CLI run: `<ms>-<pid>`)
/// checked and replaced by `<task>`.
fn cline_headers(seen: &Seen) -> BTreeMap<String, String> {
    let mut headers = seen.headers.clone();
    let task_id = headers.insert("x-task-id".to_string(), "<task>".to_string());
    let task_id = task_id.unwrap_or_default();
    let (millis, pid) = task_id.split_once('-').unwrap_or_default();
    assert!(
        !millis.is_empty()
            && !pid.is_empty()
            && (millis.to_string() + pid)
                .bytes()
                .all(|b| b.is_ascii_digit()),
        "x-task-id {task_id:?}"
    );
    headers
}

fn expected_cline_headers(token: &str) -> BTreeMap<String, String> {
    [
        ("accept", "*/*"),
        ("authorization", &format!("Bearer {token}")),
        ("content-type", "application/json"),
        ("user-agent", "Cline/3.89.2"),
        ("x-client-type", "toolhost"),
        ("x-client-version", "0.1.0"),
        ("x-core-version", "3.89.2"),
        ("x-is-multiroot", "false"),
        ("x-platform", std::env::consts::OS),
        ("x-platform-version", "unknown"),
        ("x-task-id", "<task>"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

// ---------------------------------------------------------------------------------------------
// web_fetch, direct backend
// ---------------------------------------------------------------------------------------------

#[test]
fn html_becomes_markdown_of_the_main_content_under_the_prompt() {
    let server = Server::start();
    let url = server.url("/page.html");
    let (outcome, said) = call(
        settings(""),
        "web_fetch",
        json!({"url": url, "prompt": "How should blocking work be run?"}),
    );
    assert_eq!(
        ok_text(&outcome),
        format!(
            "Prompt: How should blocking work be run?\nURL: {url}\nTitle: Runtime guide\n\n{}",
            page_markdown(&server.base)
        )
    );
    assert_eq!(outcome.description, format!("[web_fetch for '{url}']"));
    assert_eq!(tool_said(&said), vec![(fetch_payload(&url), false)]);
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (
            seen[0].method.as_str(),
            seen[0].target.as_str(),
            seen[0].headers.get("user-agent")
        ),
        (
            "GET",
            "/page.html",
            Some(&"Mozilla/5.0 (compatible; toolhost-web_fetch/0.1.0)".to_string())
        )
    );
}

#[test]
fn json_and_text_pass_through() {
    let server = Server::start();
    let json_url = server.url("/data.json");
    assert_eq!(
        ok_text(&fetch(settings(""), &json_url, "list the tags")),
        format!("Prompt: list the tags\nURL: {json_url}\n\n{{\"name\": \"toolhost\", \"tags\": [\"a\", \"b\"]}}")
    );
    let latin1 = server.url("/latin1.txt");
    assert_eq!(
        ok_text(&fetch(settings(""), &latin1, "read it")),
        format!("Prompt: read it\nURL: {latin1}\n\ncafé")
    );
}

#[test]
fn a_redirect_chain_is_followed_and_noted() {
    let server = Server::start();
    let start = server.url("/hop/1");
    assert_eq!(
        ok_text(&fetch(settings(""), &start, "second line?")),
        format!(
            "Prompt: second line?\nURL: {} (redirected from {start})\n\nfirst line\nsecond line",
            server.url("/notes.txt")
        )
    );
    assert_eq!(
        server.targets(),
        vec!["/hop/1", "/hop/2", "/hop/3", "/notes.txt"]
    );
}

#[test]
fn endless_and_non_http_redirects_fail_clearly() {
    let server = Server::start();
    assert_eq!(
        ok_text(&fetch(settings(""), &server.url("/loop"), "p")),
        "Error fetching web content: too many redirects (more than 10)"
    );
    assert_eq!(server.targets().len(), 11);
    assert_eq!(
        ok_text(&fetch(settings(""), &server.url("/to-ftp"), "p")),
        "Error fetching web content: the server redirected to ftp://127.0.0.1/file, which is not an http or https URL"
    );
}

#[test]
fn a_slow_page_times_out_with_clines_text() {
    let server = Server::start();
    let quick = settings_with("[auto_approve]\nuse_web = true\n", "timeout_ms = 300", "");
    assert_eq!(
        ok_text(&fetch(quick, &server.url("/slow"), "p")),
        "Error fetching web content: timeout of 300ms exceeded"
    );
}

#[test]
fn long_content_is_cut_at_max_chars_with_a_marker() {
    let server = Server::start();
    let url = server.url("/large.txt");
    let text = ok_text(&fetch(settings("[web.fetch]\nmax_chars = 25"), &url, "p"));
    assert_eq!(
        text,
        format!(
            "Prompt: p\nURL: {url}\n\n0123456789012345678901234\n\n[Content truncated: 25 of 300000 characters shown.]"
        )
    );
}

#[test]
fn large_downloads_stop_at_max_bytes_with_a_marker() {
    let server = Server::start();
    let url = server.url("/large.txt");
    let text = ok_text(&fetch(settings("[web.fetch]\nmax_bytes = 2048"), &url, "p"));
    assert_eq!(
        text,
        format!(
            "Prompt: p\nURL: {url}\n\n{}\n\n[Content truncated: only the first 2.0 KB of the page were downloaded.]",
            &"0123456789".repeat(205)[..2048]
        )
    );
}

#[test]
fn binary_content_is_refused() {
    let server = Server::start();
    let png = server.url("/image.png");
    assert_eq!(
        ok_text(&fetch(settings(""), &png, "describe the image")),
        format!("Error fetching web content: {png} is not a text page (image/png, 33 B); web_fetch only reads HTML, text and JSON.")
    );
    let blob = server.url("/blob");
    assert_eq!(
        ok_text(&fetch(settings(""), &blob, "p")),
        format!("Error fetching web content: {blob} is not a text page (application/octet-stream); web_fetch only reads HTML, text and JSON.")
    );
}

#[test]
fn a_non_200_answer_and_an_unreachable_host_are_reported() {
    let server = Server::start();
    assert_eq!(
        ok_text(&fetch(settings(""), &server.url("/missing"), "p")),
        "Error fetching web content: Request failed with status code 404"
    );
    // A port nobody listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    assert_eq!(
        ok_text(&fetch(settings(""), &format!("http://127.0.0.1:{port}/"), "p")),
        format!("Error fetching web content: could not connect to 127.0.0.1:{port}: Connection refused (os error 111)")
    );
}

#[test]
fn invalid_urls_and_other_schemes_are_mistakes() {
    let plugins = plugins();
    let cwd = workdir();
    let (host, _ui) = in_process::host_with(plugins.path(), cwd.path(), settings(""));
    let outcome = host.call(
        "web_fetch",
        &json!({"url": "example.com/docs", "prompt": "p"}).to_string(),
    );
    assert_eq!(
        outcome.model_text(),
        tool_error("Invalid URL 'example.com/docs': relative URL without a base. Give a complete URL that starts with https:// or http://.")
    );
    let outcome = host.call(
        "web_fetch",
        &json!({"url": "file:///etc/passwd", "prompt": "p"}).to_string(),
    );
    assert_eq!(
        outcome.model_text(),
        tool_error("Unsupported URL scheme 'file' in 'file:///etc/passwd': web_fetch only fetches http:// and https:// URLs.")
    );
    assert_eq!(host.task().mistakes(), 2);
    let outcome = host.call(
        "web_fetch",
        &json!({"url": "https://example.com"}).to_string(),
    );
    assert_eq!(
        outcome.model_text(),
        tool_error(&missing_param_error("prompt"))
    );
}

#[test]
fn the_proxy_setting_carries_requests() {
    let server = Server::start();
    // The test server is the proxy; the page's host is never resolved or contacted.
    let text = format!(
        "[auto_approve]\nuse_web = true\n\n[web]\nproxy = \"{}\"\ntimeout_ms = 20000\n",
        server.base
    );
    let proxied = Settings::from_toml(&text).unwrap();
    let url = "http://docs.example.test/guide";
    assert_eq!(
        ok_text(&fetch(proxied, url, "p")),
        format!("Prompt: p\nURL: {url}\n\nserved through the proxy for {url}")
    );
    assert_eq!(server.targets(), vec![url.to_string()]);
    // With the page's host in web.no_proxy the request goes straight to it.
    let bypass = Settings::from_toml(
        "[auto_approve]\nuse_web = true\n\n[web]\nproxy = \"http://127.0.0.1:9\"\nno_proxy = \"127.0.0.1\"\ntimeout_ms = 20000\n",
    )
    .unwrap();
    let notes = server.url("/notes.txt");
    assert_eq!(
        ok_text(&fetch(bypass, &notes, "p")),
        format!("Prompt: p\nURL: {notes}\n\nfirst line\nsecond line")
    );
}

// ---------------------------------------------------------------------------------------------
// web_fetch, Cline-compatible backend
// ---------------------------------------------------------------------------------------------

#[test]
fn the_cline_fetch_endpoint_gets_clines_request() {
    let server = Server::start();
    let toml = cline_settings_toml(&server, "[web.fetch]\nbackend = \"cline\"");
    let params = json!({"url": "https://docs.example.test/a", "prompt": "What is new?"});
    let out = cli_call(&toml, TOKEN, "web_fetch", &params);
    assert_eq!(
        out["text"],
        "The page https://docs.example.test/a says: What is new?"
    );
    assert_eq!(out["is_error"], false);
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].target.as_str()),
        ("POST", "/api/v1/search/webfetch")
    );
    assert_eq!(cline_headers(&seen[0]), expected_cline_headers(TOKEN));
    assert_eq!(
        serde_json::from_str::<Value>(&seen[0].body).unwrap(),
        json!({"Url": "https://docs.example.test/a", "Prompt": "What is new?"})
    );
    // The body keeps Cline's key order and capitals.
    assert_eq!(
        seen[0].body,
        r#"{"Url":"https://docs.example.test/a","Prompt":"What is new?"}"#
    );
}

#[test]
fn a_rejected_token_is_a_status_error() {
    let server = Server::start();
    let toml = cline_settings_toml(&server, "[web.fetch]\nbackend = \"cline\"");
    let params = json!({"url": "https://docs.example.test/a", "prompt": "p"});
    let out = cli_call(&toml, "workos:expired", "web_fetch", &params);
    assert_eq!(
        out["text"],
        "Error fetching web content: Request failed with status code 401"
    );
}

#[test]
fn without_a_token_the_cline_backend_gives_clines_signed_out_text() {
    let server = Server::start();
    let (outcome, said) = call(
        settings(&format!(
            "[web.fetch]\nbackend = \"cline\"\n\n[web.cline]\nbase_url = \"{}\"\ntoken_env = \"TOOLHOST_WEB_TEST_UNSET_VARIABLE\"",
            server.base
        )),
        "web_fetch",
        json!({"url": "https://docs.example.test/a", "prompt": "p"}),
    );
    assert_eq!(
        ok_text(&outcome),
        "Error fetching web content: Unauthorized: Please sign in to Cline before trying again."
    );
    let errors: Vec<&str> = said
        .iter()
        .filter(|s| s.kind == "error")
        .map(|s| s.text.as_str())
        .collect();
    assert_eq!(
        errors,
        vec!["web_fetch: the environment variable TOOLHOST_WEB_TEST_UNSET_VARIABLE (setting web.cline.token_env) is not set or empty, so the Cline-compatible endpoint cannot be used."]
    );
    assert_eq!(server.seen(), Vec::new());
}

// ---------------------------------------------------------------------------------------------
// web_search
// ---------------------------------------------------------------------------------------------

fn searxng_settings(server: &Server) -> Settings {
    settings(&format!("[web.search]\nsearxng_url = \"{}/\"", server.base))
}

#[test]
fn searxng_results_are_listed_like_clines() {
    let server = Server::start();
    let (outcome, said) = call(
        searxng_settings(&server),
        "web_search",
        json!({"query": "tokio tutorial", "blocked_domains": "[\"spam.example\"]"}),
    );
    assert_eq!(
        ok_text(&outcome),
        "Search completed (2 results found):\n\n1. Tokio tutorial\n   https://tokio.rs/tokio/tutorial\n\n2. Async book\n   https://rust-lang.github.io/async-book/\n\n"
    );
    assert_eq!(outcome.description, "[web_search for 'tokio tutorial']");
    assert_eq!(
        tool_said(&said),
        vec![(search_payload("tokio tutorial"), false)]
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (
            seen[0].method.as_str(),
            seen[0].target.as_str(),
            seen[0].headers.get("accept").map(String::as_str),
            seen[0].body.as_str(),
        ),
        (
            "GET",
            "/search?q=tokio+tutorial&format=json",
            Some("application/json"),
            ""
        )
    );
}

#[test]
fn allowed_domains_keep_only_those_sites() {
    let server = Server::start();
    let (outcome, _) = call(
        searxng_settings(&server),
        "web_search",
        json!({"query": "tokio", "allowed_domains": "[\"rust-lang.github.io\", \"tokio.r"}),
    );
    assert_eq!(
        ok_text(&outcome),
        "Search completed (1 results found):\n\n1. Async book\n   https://rust-lang.github.io/async-book/\n\n"
    );
}

#[test]
fn zero_results_is_clines_one_line() {
    let server = Server::start();
    let (outcome, _) = call(
        searxng_settings(&server),
        "web_search",
        json!({"query": "nothing"}),
    );
    assert_eq!(ok_text(&outcome), "Search completed (0 results found)");
}

#[test]
fn both_domain_filters_are_a_mistake_and_nothing_is_sent() {
    let server = Server::start();
    let plugins = plugins();
    let cwd = workdir();
    let (host, _ui) = in_process::host_with(plugins.path(), cwd.path(), searxng_settings(&server));
    let outcome = host.call(
        "web_search",
        &json!({"query": "q", "allowed_domains": "[\"a.com\"]", "blocked_domains": "[\"b.com\"]"})
            .to_string(),
    );
    assert_eq!(
        outcome.model_text(),
        tool_error("Cannot specify both allowed_domains and blocked_domains")
    );
    assert_eq!(host.task().mistakes(), 1);
    assert_eq!(server.seen(), Vec::new());
}

#[test]
fn a_search_without_a_backend_says_how_to_configure_one() {
    let (outcome, _) = call(settings(""), "web_search", json!({"query": "q"}));
    assert_eq!(
        outcome.result.as_ref().err().map(|e| e.kind),
        Some(ErrorKind::Unavailable)
    );
    assert_eq!(
        outcome.model_text(),
        tool_error("web_search has no search backend configured. In the settings file, set [web.search] backend = \"searxng\" with searxng_url = \"http://…\" (a SearXNG instance with the JSON format enabled), or backend = \"cline\" with base_url and token_env under [web.cline].")
    );
}

#[test]
fn the_cline_search_endpoint_gets_clines_request() {
    let server = Server::start();
    let toml = cline_settings_toml(&server, "[web.search]\nbackend = \"cline\"");
    let params = json!({"query": "tokio", "allowed_domains": "[\"tokio.rs\", \"github.io\"]", "blocked_domains": ""});
    let out = cli_call(&toml, TOKEN, "web_search", &params);
    assert_eq!(
        out["text"],
        "Search completed (2 results found):\n\n1. Tokio tutorial\n   https://tokio.rs/tokio/tutorial\n\n2. Async book\n   https://rust-lang.github.io/async-book/\n\n"
    );
    let out = cli_call(&toml, TOKEN, "web_search", &json!({"query": "nothing"}));
    assert_eq!(out["text"], "Search completed (0 results found)");
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for request in &seen {
        assert_eq!(
            (request.method.as_str(), request.target.as_str()),
            ("POST", "/api/v1/search/websearch")
        );
        assert_eq!(cline_headers(request), expected_cline_headers(TOKEN));
    }
    assert_eq!(
        seen[0].body,
        r#"{"query":"tokio","allowed_domains":["tokio.rs","github.io"]}"#
    );
    assert_eq!(seen[1].body, r#"{"query":"nothing"}"#);
}

// ---------------------------------------------------------------------------------------------
// Both tools
// ---------------------------------------------------------------------------------------------

#[test]
fn without_use_web_both_tools_are_denied_before_any_request() {
    let server = Server::start();
    let no_web = settings_with(
        "",
        "timeout_ms = 20000",
        &format!("[web.search]\nsearxng_url = \"{}\"", server.base),
    );
    let plugins = plugins();
    let cwd = workdir();
    let (host, ui) = in_process::host_with(plugins.path(), cwd.path(), no_web);
    let fetched = host.call(
        "web_fetch",
        &json!({"url": server.url("/page.html"), "prompt": "p"}).to_string(),
    );
    let searched = host.call("web_search", &json!({"query": "tokio"}).to_string());
    for (tool, outcome) in [("web_fetch", &fetched), ("web_search", &searched)] {
        assert_eq!(
            outcome.model_text(),
            toolhost_tests::nobody_to_ask(tool, &["use_web"])
        );
        assert_eq!(
            outcome.result.as_ref().err().map(|e| e.kind),
            Some(ErrorKind::Denied)
        );
    }
    assert_eq!(
        ui.of_kind("approval"),
        vec![
            "Let web_fetch run? denied (not auto-approved and no terminal to ask)",
            "Let web_search run? denied (not auto-approved and no terminal to ask)",
        ]
    );
    assert_eq!(server.seen(), Vec::new());
}

#[test]
fn partial_blocks_preview_the_call_without_a_closing_tag() {
    let plugins = plugins();
    let cwd = workdir();
    let (host, ui) = in_process::host_with(plugins.path(), cwd.path(), settings(""));
    let params = |pairs: &[(&str, &str)]| -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect()
    };
    host.call_partial(
        "web_fetch",
        &params(&[("url", "https://docs.example.test/a</ur")]),
    );
    host.call_partial("web_search", &params(&[("query", "tokio select <")]));
    let said = ui.said.lock().unwrap().clone();
    assert_eq!(
        tool_said(&said),
        vec![
            (fetch_payload("https://docs.example.test/a"), true),
            (search_payload("tokio select"), true),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// HTTPS with an extra CA (web.ca_file)
// ---------------------------------------------------------------------------------------------

/// `openssl s_server` serving a directory over TLS on 127.0.0.1 with a certificate signed by a
/// throwaway CA; killed when dropped.
struct TlsServer {
    child: std::process::Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl TlsServer {
    fn start() -> Self {
        let dir = workdir();
        let openssl = |args: &[&str]| {
            let output = std::process::Command::new("openssl")
                .args(args)
                .current_dir(dir.path())
                .output()
                .expect("the openssl command (Debian package openssl) runs");
            assert!(
                output.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        openssl(
            &[
                &["req", "-x509"][..],
                &ec,
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.pem",
                    "-days",
                    "1",
                    "-subj",
                    "/CN=toolhost test CA",
                ],
            ]
            .concat(),
        );
        openssl(
            &[
                &["req"][..],
                &ec,
                &[
                    "-keyout",
                    "leaf.key",
                    "-out",
                    "leaf.csr",
                    "-subj",
                    "/CN=127.0.0.1",
                ],
            ]
            .concat(),
        );
        std::fs::write(
            dir.path().join("leaf.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "1",
            "-extfile",
            "leaf.ext",
        ]);
        std::fs::write(dir.path().join("notes.txt"), "served over TLS\n").unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("openssl")
            .args([
                "s_server", "-quiet", "-WWW", "-cert", "leaf.pem", "-key", "leaf.key",
            ])
            .args(["-accept", &format!("127.0.0.1:{port}")])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let server = Self { child, port, dir };
        // Bounded wait for the listener (at most 10 s).
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("openssl s_server did not start listening on 127.0.0.1:{port}");
    }

    fn ca_file(&self) -> String {
        self.dir
            .path()
            .join("ca.pem")
            .to_string_lossy()
            .into_owned()
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn https_pages_verify_against_the_extra_ca() {
    let server = TlsServer::start();
    let url = format!("https://127.0.0.1:{}/notes.txt", server.port);
    let with_ca = settings_with(
        "[auto_approve]\nuse_web = true\n",
        &format!("timeout_ms = 20000\nca_file = \"{}\"", server.ca_file()),
        "",
    );
    assert_eq!(
        ok_text(&fetch(with_ca, &url, "p")),
        format!("Prompt: p\nURL: {url}\n\nserved over TLS")
    );
    // Without the CA the system's roots do not know the certificate.
    assert_eq!(
        ok_text(&fetch(settings(""), &url, "p")),
        format!(
            "Error fetching web content: could not connect to 127.0.0.1:{}: invalid peer certificate: UnknownIssuer",
            server.port
        )
    );
}
