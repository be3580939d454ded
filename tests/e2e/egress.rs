//! Commands reach the network only through the host's egress proxy, attacked from inside
//! `execute_command`: a loopback HTTP server of the test's own stands for the user's
//! network. Allowed by an exact rule, plain HTTP and CONNECT reach it through the proxy and
//! are logged; a raw socket reaches nothing (the command's loopback is its own); a denied
//! name (decided before anything resolves it), a name that resolves to loopback, an IP
//! literal, a decimal IP, a port nobody allowed and a host nobody could be asked about are
//! all refused, each with the setting that would allow it. curl, git (a clone over HTTPS) and
//! pip (a download from an index) and npm (an install from a registry) reach a loopback HTTPS server through the proxy unchanged
//! when a rule allows it, and not otherwise. The web tools' requests go through the same
//! policy. `network = "direct"` shows what the proxy holds back.
//!
//! `HOME`, `XDG_CONFIG_HOME`, `XDG_STATE_HOME` and `TMPDIR` point inside the test's
//! directory: nothing outside it is read.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolhost_tests::session::{Frontend, Session};
use toolhost_tests::{run, Home, Run};

/// An HTTP server on 127.0.0.1 that answers every request with `hello-egress` and counts
/// the connections it accepted.
struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                        if line == "\r\n" {
                            break;
                        }
                        line.clear();
                    }
                    let mut stream = stream;
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\nconnection: close\r\n\r\nhello-egress",
                    );
                });
            }
        });
        Server { port, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// A client run inside the sandbox: `get URL` (a plain request through `$HTTP_PROXY`),
/// `tunnel HOST PORT` (CONNECT through it, then a request), `direct HOST PORT` (a raw TCP
/// connection, no proxy). Prints `CLIENT: ` and `OK <body>`, `HTTP <status> <body>` or
/// `ERR <error>`.
const CLIENT: &str = r#"
import http.client, os, socket, sys, urllib.parse, urllib.request
mode = sys.argv[1]
proxy = urllib.parse.urlsplit(os.environ.get("HTTP_PROXY", "http://127.0.0.1:1"))
try:
    if mode == "direct":
        socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=5).close()
        print("CLIENT: OK connected")
    else:
        conn = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=20)
        if mode == "tunnel":
            conn.set_tunnel(sys.argv[2], int(sys.argv[3]))
            conn.request("GET", "/")
        else:
            conn.request("GET", sys.argv[2])
        response = conn.getresponse()
        body = response.read().decode(errors="replace").strip()
        print("CLIENT: " + ("OK " if response.status == 200 else "HTTP %d " % response.status) + body)
except Exception as e:
    print("CLIENT: ERR %s" % e)
"#;

/// The test's user, whose egress log stays in its home.
struct Scene(Home);

impl std::ops::Deref for Scene {
    type Target = Home;

    fn deref(&self) -> &Home {
        &self.0
    }
}

impl Scene {
    fn new(settings: &str) -> Self {
        let settings = format!("[auto_approve]\nexecute_safe_commands = true\n{settings}");
        let libraries = [
            "execute_command",
            "web_fetch",
            "http_tools",
            "browser_action",
        ];
        let home = Home::new(&settings, &libraries);
        std::fs::write(home.ws.join("client.py"), CLIENT).unwrap();
        Scene(home)
    }

    fn toolhost(&self) -> Command {
        let mut command = self.0.toolhost();
        command.env("XDG_STATE_HOME", self.home.join(".local/state"));
        command
    }

    /// Runs `script` as a command the model marks as safe; nobody can be asked.
    fn execute(&self, script: &str) -> Run {
        let params = json!({"command": script, "requires_approval": "false"});
        let mut command = self.toolhost();
        command
            .args(["call", "execute_command", &params.to_string(), "--cwd"])
            .arg(&self.ws);
        run(&mut command)
    }

    /// Calls `tool` with `params`, approving it; the result's JSON.
    fn call(&self, tool: &str, params: Value) -> Value {
        let mut command = self.toolhost();
        command
            .args([
                "call",
                tool,
                &params.to_string(),
                "--yes",
                "--json",
                "--cwd",
            ])
            .arg(&self.ws);
        run(&mut command).json()
    }

    /// The client's line for `args`, and the whole output.
    fn client(&self, args: &str) -> (String, String) {
        let result = self.execute(&format!("python3 client.py {args}"));
        let line = result
            .stdout
            .split("CLIENT: ")
            .nth(1)
            .and_then(|rest| rest.lines().next())
            .unwrap_or_else(|| panic!("no client line: {}{}", result.stdout, result.stderr))
            .to_string();
        (line, result.stdout)
    }

    /// `toolhost serve --ask`: the test is the client that answers.
    fn serve(&self) -> Session {
        let ws = self.ws.to_str().unwrap();
        Session::start(self.toolhost(), Frontend::Serve, &["--ask", "--cwd", ws])
    }

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

/// Runs the client with `args` through `serve`, answering each question with `answers` in
/// turn; returns the questions' texts and the result's text.
fn client_asked(
    serve: &mut Session,
    id: u64,
    args: &str,
    answers: &[Value],
) -> (Vec<String>, String) {
    let params =
        json!({"command": format!("python3 client.py {args}"), "requires_approval": "false"});
    serve.send(&json!({"id": id, "tool": "execute_command", "params": params}));
    let mut questions = Vec::new();
    let mut answers = answers.iter();
    loop {
        let line = serve.read_answer();
        if let Some(ask) = line.get("ask") {
            questions.push(ask["text"].as_str().unwrap_or_default().to_string());
            let mut answer = answers
                .next()
                .expect("an answer for every question")
                .clone();
            answer["answer"] = ask["id"].clone();
            serve.send(&answer);
        } else if line["id"] == id {
            return (
                questions,
                line["text"].as_str().unwrap_or_default().to_string(),
            );
        }
    }
}

#[test]
fn a_host_no_rule_names_is_asked_about_no_forgets_and_always_is_written_down() {
    let scene = Scene::new("[egress]\nallowed_file = \"ALLOWED\"\n");
    let allowed = scene.base.join("allowed.txt");
    let settings = std::fs::read_to_string(&scene.settings).unwrap();
    let settings = settings.replace("ALLOWED", allowed.to_str().unwrap());
    std::fs::write(&scene.settings, settings).unwrap();
    let mut serve = scene.serve();
    let no = json!({"response": "no"});
    let (questions, text) = client_asked(&mut serve, 1, "get http://asked.invalid/", &[no]);
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(
        questions[0].contains("execute_command wants to connect to asked.invalid:80"),
        "{questions:?}"
    );
    assert!(text.contains("CLIENT: HTTP 403"), "{text}");
    assert!(text.contains("refused by the user"), "{text}");
    assert!(!allowed.exists());
    // Asked again (a refusal is not remembered); "always" is written down.
    let always = json!({"response": "message", "text": "always"});
    let (questions, text) = client_asked(&mut serve, 2, "get http://asked.invalid/", &[always]);
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(
        text.contains("asked.invalid:80 cannot be resolved"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&allowed).unwrap(),
        "asked.invalid:80\n"
    );
    // Not asked again, in this host or the next.
    let (questions, _) = client_asked(&mut serve, 3, "get http://asked.invalid/", &[]);
    assert!(questions.is_empty(), "{questions:?}");
    drop(serve);
    let mut next = scene.serve();
    let (questions, text) = client_asked(&mut next, 1, "get http://asked.invalid/", &[]);
    assert!(questions.is_empty(), "{questions:?}");
    assert!(text.contains("cannot be resolved"), "{text}");
    // A yes holds for the task, and opens no internal address.
    let yes = json!({"response": "yes"});
    let (questions, text) = client_asked(&mut next, 2, "get http://127.0.0.1:9/", &[yes]);
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(text.contains("a loopback address"), "{text}");
    let verdicts: Vec<String> = scene
        .log()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["verdict"].as_str().unwrap(),
                e["target"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            "denied asked.invalid:80",
            "failed asked.invalid:80",
            "failed asked.invalid:80",
            "failed asked.invalid:80",
            "denied 127.0.0.1:9",
        ]
    );
}

#[test]
fn an_exact_rule_lets_plain_http_and_connect_through_the_proxy_and_both_are_logged() {
    let server = Server::start();
    let port = server.port;
    let scene = Scene::new(&format!("[egress]\nallow = [\"127.0.0.1:{port}\"]\n"));
    let (line, _) = scene.client(&format!("get http://127.0.0.1:{port}/page"));
    assert_eq!(line, "OK hello-egress");
    let (line, _) = scene.client(&format!("tunnel 127.0.0.1 {port}"));
    assert_eq!(line, "OK hello-egress");
    assert_eq!(server.accepted(), 2);
    let log = scene.log();
    assert_eq!(log.len(), 2, "{log:?}");
    for entry in &log {
        assert_eq!(entry["verdict"], "allowed", "{entry}");
        assert_eq!(entry["tool"], "execute_command");
        assert_eq!(entry["target"], format!("127.0.0.1:{port}"));
        assert!(
            entry["why"].as_str().unwrap().contains("egress.allow"),
            "{entry}"
        );
        assert!(entry["received"].as_u64().unwrap() >= 12, "{entry}");
    }
}

#[test]
fn a_raw_socket_reaches_neither_the_users_loopback_nor_the_machines_addresses() {
    let server = Server::start();
    let port = server.port;
    let scene = Scene::new("");
    let (line, _) = scene.client(&format!("direct 127.0.0.1 {port}"));
    assert!(line.starts_with("ERR"), "{line}");
    // The machine's own addresses (what `hostname -I` lists), each with a server of its own.
    let own = Command::new("hostname").arg("-I").output();
    let own = own.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    for address in own.unwrap_or_default().split_whitespace() {
        let Ok(listener) = TcpListener::bind((address, 0)) else {
            continue;
        };
        let own_port = listener.local_addr().unwrap().port();
        let (line, _) = scene.client(&format!("direct {address} {own_port}"));
        assert!(line.starts_with("ERR"), "{address}: {line}");
    }
    assert_eq!(server.accepted(), 0);
    // The defence switched off: with the network direct, the same socket arrives.
    let direct = Scene::new("[execute_command]\nnetwork = \"direct\"\n");
    let (line, _) = direct.client(&format!("direct 127.0.0.1 {port}"));
    assert_eq!(line, "OK connected");
    assert_eq!(server.accepted(), 1);
}

#[test]
fn refused_targets_name_who_refused_and_the_setting_that_allows_them() {
    let server = Server::start();
    let other = Server::start();
    let port = server.port;
    let scene = Scene::new(&format!(
        "[egress]\nallow = [\"127.0.0.1:{port}\", \"localhost\"]\ndeny = [\"*.invalid\"]\n"
    ));
    // A denied name: refused by the rule before it is resolved (it could not be).
    let (line, output) = scene.client("get http://leak.invalid/secret");
    assert!(line.starts_with("HTTP 403"), "{line}");
    assert!(
        output.contains("\"*.invalid\" of the setting egress.deny"),
        "{output}"
    );
    assert!(
        output.contains("only taking it out of egress.deny"),
        "{output}"
    );
    assert!(!output.contains("cannot be resolved"), "{output}");
    // A port nobody allowed, on the allowed address: nobody to ask.
    let (line, output) = scene.client(&format!("tunnel 127.0.0.1 {}", other.port));
    assert!(line.starts_with("ERR"), "{line}");
    assert!(output.contains("nobody to ask"), "{output}");
    let setting = format!(
        "egress.allow = [\"127.0.0.1:{}\"] in the settings",
        other.port
    );
    assert!(output.contains(&setting), "{output}");
    // An allowed name that resolves to loopback: only an exact address rule reaches it.
    let (line, output) = scene.client(&format!("get http://localhost:{}/", other.port));
    assert!(line.starts_with("HTTP 403"), "{line}");
    assert!(output.contains("a loopback address"), "{output}");
    // The same loopback as a decimal number.
    let (line, _) = scene.client(&format!("get http://2130706433:{}/", other.port));
    assert!(line.starts_with("HTTP 403"), "{line}");
    // The metadata address.
    let (line, _) = scene.client("get http://169.254.169.254/latest/meta-data/");
    assert!(line.starts_with("HTTP 403"), "{line}");
    assert_eq!(other.accepted(), 0);
    assert_eq!(server.accepted(), 0);
    let log = scene.log();
    assert_eq!(log.len(), 5, "{log:?}");
    assert!(log.iter().all(|e| e["verdict"] == "denied"), "{log:?}");
}

#[test]
fn the_policy_report_lists_the_egress_rules_in_order() {
    let scene = Scene::new("[egress]\nallow = [\"example.com:443\"]\ndeny = [\"*.invalid\"]\n");
    let mut command = scene.toolhost();
    command.args(["policy", "sandbox", "--cwd"]).arg(&scene.ws);
    let result = run(&mut command);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let text = result.stdout;
    assert!(text.contains("network = proxy"), "{text}");
    let deny = text.find("deny *.invalid").expect("the deny rule");
    let allow = text.find("allow example.com:443").expect("the allow rule");
    let registry = text.find("allow crates.io").expect("the registries");
    assert!(deny < allow && allow < registry, "{text}");
    let bad = Scene::new("[egress]\nallow = [\"exa mple.com\"]\n");
    let mut command = bad.toolhost();
    command.args(["policy", "sandbox", "--cwd"]).arg(&bad.ws);
    let result = run(&mut command);
    assert_ne!(result.code, 0);
    assert!(result.stderr.contains("egress.allow"), "{}", result.stderr);
}

#[test]
fn the_web_tools_requests_go_through_the_same_policy_and_log() {
    let server = Server::start();
    let port = server.port;
    let scene = Scene::new(&format!(
        "[http_tools.ticket]\nurl = \"http://127.0.0.1:{port}/ticket\"\n\
         parameters = {{ type = \"object\", properties = {{ id = {{ type = \"integer\" }} }} }}\n"
    ));
    // web_fetch of the loopback: refused by the address check, plain HTTP and CONNECT alike,
    // each saying which setting allows it.
    let page = format!("http://127.0.0.1:{port}/page");
    let refused = scene.call("web_fetch", json!({"url": page, "prompt": "p"}));
    let text = refused["text"].as_str().unwrap();
    assert!(!text.contains("hello-egress"), "{refused}");
    assert!(text.contains("a loopback address"), "{refused}");
    assert!(
        text.contains(&format!("egress.allow = [\"127.0.0.1:{port}\"]")),
        "{refused}"
    );
    let tunnel = scene.call(
        "web_fetch",
        json!({"url": format!("https://127.0.0.1:{port}/"), "prompt": "p"}),
    );
    assert!(
        tunnel["text"]
            .as_str()
            .unwrap()
            .contains("a loopback address"),
        "{tunnel}"
    );
    assert_eq!(server.accepted(), 0);
    // A declared HTTP tool's URL is configured, so it is allowed.
    let ticket = scene.call("ticket", json!({"id": 7}));
    assert!(
        ticket["text"].as_str().unwrap().contains("hello-egress"),
        "{ticket}"
    );
    assert_eq!(server.accepted(), 1);
    let log = scene.log();
    let seen: Vec<(String, String)> = log
        .iter()
        .map(|e| {
            (
                e["tool"].as_str().unwrap().into(),
                e["verdict"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("web_fetch".to_string(), "denied".to_string()),
            ("web_fetch".to_string(), "denied".to_string()),
            ("ticket".to_string(), "allowed".to_string()),
        ]
    );
    assert!(
        log[2]["why"]
            .as_str()
            .unwrap()
            .contains("configured endpoint"),
        "{log:?}"
    );
    // Allowed by an exact rule, web_fetch reads the page.
    let allowed = Scene::new(&format!("[egress]\nallow = [\"127.0.0.1:{port}\"]\n"));
    let fetched = allowed.call("web_fetch", json!({"url": page, "prompt": "p"}));
    assert!(
        fetched["text"].as_str().unwrap().contains("hello-egress"),
        "{fetched}"
    );
}

/// An HTTPS server on 127.0.0.1 (a certificate made for the test) serving `dir`; its port.
struct HttpsServer {
    child: std::process::Child,
    port: u16,
}

const HTTPS_SERVER: &str = r#"
import http.server, ssl, sys, functools
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[2], sys.argv[3])
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

impl HttpsServer {
    fn start(dir: &std::path::Path, cert: &std::path::Path, key: &std::path::Path) -> Self {
        let mut child = Command::new("python3")
            .args(["-c", HTTPS_SERVER])
            .arg(dir)
            .arg(cert)
            .arg(key)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        HttpsServer {
            child,
            port: line.trim().parse().unwrap(),
        }
    }
}

impl Drop for HttpsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Makes a wheel of `toolhost-probe` 1.0 (metadata only) in `dir`.
const WHEEL: &str = r#"
import sys, zipfile
name = "toolhost_probe-1.0.dist-info"
with zipfile.ZipFile(sys.argv[1] + "/toolhost_probe-1.0-py3-none-any.whl", "w") as wheel:
    wheel.writestr(name + "/METADATA", "Metadata-Version: 2.1\nName: toolhost-probe\nVersion: 1.0\n")
    wheel.writestr(name + "/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    wheel.writestr(name + "/RECORD", "")
"#;

/// Makes an npm registry's files for `toolhost-probe` 1.0.0 under `dir`, for the registry at
/// `sys.argv[2]`: the package document (served as the directory's index) and its tarball.
const NPM_PACKAGE: &str = r#"
import base64, hashlib, io, json, os, sys, tarfile
root, registry = sys.argv[1], sys.argv[2]
os.makedirs(root + "/toolhost-probe/-", exist_ok=True)
manifest = {"name": "toolhost-probe", "version": "1.0.0"}
buffer = io.BytesIO()
with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
    data = json.dumps(manifest).encode()
    info = tarfile.TarInfo("package/package.json")
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
tarball = buffer.getvalue()
open(root + "/toolhost-probe/-/toolhost-probe-1.0.0.tgz", "wb").write(tarball)
integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
version = dict(manifest, dist={
    "tarball": registry + "toolhost-probe/-/toolhost-probe-1.0.0.tgz",
    "integrity": integrity,
})
document = {"name": "toolhost-probe", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": version}}
open(root + "/toolhost-probe/index.html", "w").write(json.dumps(document))
"#;

fn sh(command: &str, dir: &std::path::Path) {
    let status = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "{command}");
}

#[test]
fn curl_git_pip_and_npm_reach_an_allowed_https_server_through_the_proxy_unchanged() {
    let site = toolhost_tests::workdir();
    let root = site.path().canonicalize().unwrap();
    let served = root.join("served");
    std::fs::create_dir_all(served.join("simple/toolhost-probe")).unwrap();
    sh(
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 \
         -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost 2>/dev/null",
        &root,
    );
    std::fs::write(served.join("file.txt"), "served-over-https\n").unwrap();
    sh(
        "git init -q work && cd work && echo cloned-readme > README && git add README && \
         git -c user.name=t -c user.email=t@t commit -qm one && cd .. && \
         git clone -q --bare work served/repo.git && cd served/repo.git && git update-server-info",
        &root,
    );
    sh(
        &format!("python3 -c '{WHEEL}' served/simple/toolhost-probe"),
        &root,
    );
    std::fs::write(
        served.join("simple/toolhost-probe/index.html"),
        "<a href=\"toolhost_probe-1.0-py3-none-any.whl\">toolhost_probe-1.0-py3-none-any.whl</a>\n",
    )
    .unwrap();
    let server = HttpsServer::start(&served, &root.join("cert.pem"), &root.join("key.pem"));
    let port = server.port;
    // npm through a proxy checks an IP literal's certificate against `localhost`: the
    // registry is named.
    let registry = format!("https://localhost:{port}/");
    sh(
        &format!("python3 -c '{NPM_PACKAGE}' served {registry}"),
        &root,
    );
    let script = format!(
        "unset NO_PROXY no_proxy; \
         curl -sS --cacert cert.pem https://127.0.0.1:{port}/file.txt; \
         GIT_SSL_CAINFO=cert.pem git clone -q https://127.0.0.1:{port}/repo.git clone && cat clone/README; \
         python3 -m pip download -q --no-deps --no-cache-dir --disable-pip-version-check --retries 0 \
           --trusted-host 127.0.0.1 \
           --index-url https://127.0.0.1:{port}/simple/ toolhost-probe==1.0 -d dl && ls dl; \
         npm install --no-audit --no-fund --fetch-retries 0 --registry {registry} \
           --cafile cert.pem --cache ./npm-cache --prefix npm toolhost-probe@1.0.0 >/dev/null 2>npm.err; \
         cat npm/node_modules/toolhost-probe/package.json; echo; tail -c 600 npm.err; \
         echo probes-done"
    );
    // The certificate in the workspace: the test's directory is in /tmp, which the sandbox
    // replaces with its own.
    let cert = std::fs::read(root.join("cert.pem")).unwrap();
    let allowed = Scene::new(&format!(
        "[egress]\nallow = [\"127.0.0.1:{port}\", \"localhost:{port}\"]\n"
    ));
    std::fs::write(allowed.ws.join("cert.pem"), &cert).unwrap();
    let result = allowed.execute(&script);
    let text = result.stdout;
    assert!(text.contains("probes-done"), "{text}");
    for expected in [
        "served-over-https",
        "cloned-readme",
        "toolhost_probe-1.0-py3-none-any.whl",
        r#"{"name": "toolhost-probe", "version": "1.0.0"}"#,
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    let log = allowed.log();
    assert!(log.len() >= 3, "{log:?}");
    assert!(log.iter().all(|e| e["verdict"] == "allowed"), "{log:?}");
    // Without the rule, each of them is refused, and says so.
    let refused = Scene::new("");
    std::fs::write(refused.ws.join("cert.pem"), &cert).unwrap();
    let text = refused.execute(&script).stdout;
    assert!(text.contains("probes-done"), "{text}");
    assert!(!text.contains("served-over-https"), "{text}");
    assert!(!text.contains("cloned-readme"), "{text}");
    assert!(
        !text.contains("toolhost_probe-1.0-py3-none-any.whl\n"),
        "{text}"
    );
    assert!(!text.contains(r#""name": "toolhost-probe""#), "{text}");
    assert!(
        text.contains("egress: execute_command may not connect to 127.0.0.1"),
        "{text}"
    );
}

#[test]
fn chromium_loads_pages_through_the_proxy_only_where_the_policy_allows() {
    let server = Server::start();
    let port = server.port;
    let page = json!({"action": "launch", "url": format!("http://127.0.0.1:{port}/")});
    // No rule: the loopback page is refused, and nothing reaches the server.
    let refused = Scene::new("");
    refused.call("browser_action", page.clone());
    assert_eq!(server.accepted(), 0);
    let log = refused.log();
    assert!(
        log.iter().any(|e| e["tool"] == "browser_action"
            && e["verdict"] == "denied"
            && e["target"] == format!("127.0.0.1:{port}")),
        "{log:?}"
    );
    // An exact rule: Chromium's request arrives, through the proxy.
    let allowed = Scene::new(&format!("[egress]\nallow = [\"127.0.0.1:{port}\"]\n"));
    let result = allowed.call("browser_action", page);
    assert_eq!(result["is_error"], false, "{result}");
    assert!(server.accepted() >= 1);
    let log = allowed.log();
    assert!(
        log.iter()
            .any(|e| e["tool"] == "browser_action" && e["verdict"] == "allowed"),
        "{log:?}"
    );
}

/// A 2026-07-28 client (the Python SDK's `Client`, modern mode) runs `command` through
/// `toolhost mcp` and answers each question with `answers` in turn; prints the result's text
/// and the questions.
const MODERN_CLIENT: &str = r#"
import asyncio, json, sys

import mcp.types as types
from mcp import StdioServerParameters
from mcp.client.client import Client

config = json.loads(open(sys.argv[1]).read())
questions = []


async def elicit(context, params):
    questions.append(params.message)
    return types.ElicitResult(**config["answers"].pop(0))


async def main():
    server = StdioServerParameters(command=config["program"], args=config["args"], env=config["env"])
    async with Client(server, mode="auto", elicitation_callback=elicit) as client:
        result = await client.call_tool("execute_command", {"command": config["command"], "requires_approval": "false"})
    print(json.dumps({"text": "\n".join(c.text for c in result.content if getattr(c, "text", None)),
                      "questions": questions}))


asyncio.run(main())
"#;

/// The egress proxy's question reaches a 2026-07-28 client as an `InputRequiredResult` while
/// the command waits on its connection; "for this task" lets it through (the name was asked
/// about; its address is allowed by an exact rule), and the command goes on.
#[test]
fn a_2026_client_is_asked_about_a_connection_while_the_command_waits() {
    let server = Server::start();
    let port = server.port;
    let scene = Scene::new(&format!("[egress]\nallow = [\"127.0.0.1:{port}\"]\n"));
    let toolhost = scene.toolhost();
    let mut args: Vec<String> = toolhost
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    args.extend(["mcp".to_string(), "--cwd".to_string()]);
    args.push(scene.ws.display().to_string());
    let mut env: serde_json::Map<String, Value> = std::env::vars()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    for (key, value) in toolhost.get_envs() {
        let key = key.to_string_lossy().into_owned();
        match value {
            Some(value) => env.insert(key, json!(value.to_string_lossy())),
            None => env.remove(&key),
        };
    }
    let config = json!({
        "program": toolhost.get_program().to_string_lossy(),
        "args": args,
        "env": env,
        "command": format!("python3 client.py get http://localhost:{port}/"),
        "answers": [{"action": "accept", "content": {"allow": "for this task"}}],
    });
    let out = crate::mcp_session::run_script("python3", &[], MODERN_CLIENT, "modern.py", &config);
    let questions = out["questions"].as_array().unwrap();
    assert_eq!(questions.len(), 1, "{out}");
    assert!(
        questions[0].as_str().unwrap().contains(&format!(
            "execute_command wants to connect to localhost:{port}"
        )),
        "{out}"
    );
    assert!(
        out["text"]
            .as_str()
            .unwrap()
            .contains("CLIENT: OK hello-egress"),
        "{out}"
    );
    assert_eq!(server.accepted(), 1);
}

/// SOCKS5 on the proxy's port: curl through it reaches a server an exact rule allows, and a
/// name no rule allows is refused (told on the command's standard error, never resolved).
#[test]
fn socks5_clients_go_through_the_same_policy() {
    let server = Server::start();
    let port = server.port;
    let scene = Scene::new(&format!(
        "[egress]\nallow = [\"127.0.0.1:{port}\"]\ndeny = [\"denied.invalid\"]\n"
    ));
    let socks = |target: &str| {
        format!(
            "P=${{HTTP_PROXY##*:}}; env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy -u NO_PROXY -u no_proxy \
             curl -sS --max-time 20 --socks5-hostname 127.0.0.1:$P {target}; echo; echo socks-done"
        )
    };
    let allowed = scene.execute(&socks(&format!("http://127.0.0.1:{port}/")));
    assert!(
        allowed.stdout.contains("hello-egress"),
        "{}",
        allowed.stdout
    );
    assert_eq!(server.accepted(), 1);
    let denied = scene.execute(&socks("http://denied.invalid/"));
    assert!(denied.stdout.contains("socks-done"), "{}", denied.stdout);
    assert!(
        denied
            .stdout
            .contains("egress: execute_command may not connect to denied.invalid:80")
            && denied.stdout.contains("egress.deny"),
        "{}",
        denied.stdout
    );
    let verdicts: Vec<(String, String)> = scene
        .log()
        .iter()
        .map(|e| {
            (
                e["target"].as_str().unwrap().to_string(),
                e["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (format!("127.0.0.1:{port}"), "allowed".to_string()),
            ("denied.invalid:80".to_string(), "denied".to_string()),
        ]
    );
}
