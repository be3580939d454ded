//! `bench egress`: a sandboxed command's network through the egress proxy beside the same
//! command with the network direct. Two `toolhost serve` processes run side by side over one
//! workspace, both `workspace-write`: one with `network = "proxy"` (the default) and an exact
//! rule for the test server, one with `network = "direct"`. A loopback HTTP server of the
//! bench's own serves a 100 MB body and a small one. A Python client inside each command
//! times, in the command itself (so the sandbox's start is not counted):
//!
//! - the 100 MB download: through the proxy as a CONNECT tunnel (how HTTPS goes), direct as
//!   a plain connection; the ratio of throughputs is the proxy's cost;
//! - [`CONNECTIONS`] connections one after another, each a small request: connection set-up
//!   through the proxy (the handoff of the socket to the host, the policy's decision, the
//!   upstream connect, the log line) against direct.
//!
//! The rounds alternate between the two servers; the median and the spread are reported.
//! What the proxy adds to a command's start (the link and the forwarder) is in `bench
//! sandbox` (`workspace-write` against `network direct`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use serde_json::{json, Value};

use crate::bench::mcp_client::percentile;
use crate::bench::sandbox::Server;
use crate::bench::startup::tempfile_dir;
use crate::build;

/// The download's size.
const DOWNLOAD_MB: usize = 100;

/// Rounds of each measurement per server.
const ROUNDS: usize = 7;

/// Connections per round of the set-up measurement.
const CONNECTIONS: usize = 200;

/// The slowest the proxy may be, as a share of the direct throughput.
const TARGET_THROUGHPUT: f64 = 0.9;

/// The most the proxy may add to a connection's set-up, in milliseconds.
const TARGET_SETUP_MS: f64 = 2.0;

/// The client run in the sandbox: `download PORT tunnel|direct` prints the seconds the body
/// took; `connections PORT tunnel|direct N` prints the seconds per connection.
const CLIENT: &str = r#"
import http.client, os, sys, time, urllib.parse
mode, port, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
proxy = urllib.parse.urlsplit(os.environ.get("HTTP_PROXY", "http://127.0.0.1:1"))
def connect():
    if how == "tunnel":
        conn = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=60)
        conn.set_tunnel("127.0.0.1", port)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    return conn
if mode == "download":
    conn = connect()
    start = time.perf_counter()
    conn.request("GET", "/big")
    response = conn.getresponse()
    total = 0
    while True:
        chunk = response.read(1 << 20)
        if not chunk:
            break
        total += len(chunk)
    print("RESULT", time.perf_counter() - start, total)
else:
    n = int(sys.argv[4])
    start = time.perf_counter()
    for _ in range(n):
        conn = connect()
        conn.request("GET", "/small")
        conn.getresponse().read()
        conn.close()
    print("RESULT", (time.perf_counter() - start) / n, n)
"#;

/// Serves `/big` ([`DOWNLOAD_MB`] MB) and anything else as `ok`, until the process ends.
fn start_server() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    std::thread::spawn(move || {
        let block = vec![b'x'; 1 << 20];
        for stream in listener.incoming().flatten() {
            let block = block.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let mut stream = &stream;
                if first.contains("/big") {
                    let length = DOWNLOAD_MB << 20;
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-length: {length}\r\n\r\n"
                    );
                    for _ in 0..DOWNLOAD_MB {
                        if stream.write_all(&block).is_err() {
                            return;
                        }
                    }
                } else {
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    );
                }
                let _ = stream.read(&mut [0u8; 1]);
            });
        }
    });
    Ok(port)
}

/// The client's `RESULT` number from a call's text.
fn result_of(value: &Value) -> Result<f64, String> {
    let text = value["text"].as_str().unwrap_or_default();
    text.split("RESULT ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .ok_or_else(|| format!("no result in: {text}"))
}

/// Median, 10th and 90th percentile of seconds, as milliseconds.
fn spread(seconds: &[f64]) -> (f64, f64, f64) {
    let times: Vec<Duration> = seconds
        .iter()
        .map(|s| Duration::from_secs_f64(*s))
        .collect();
    let ms = |p| percentile(&times, p).as_secs_f64() * 1e3;
    (ms(50), ms(10), ms(90))
}

/// Runs the benchmark and returns its JSON record.
pub fn egress() -> Result<Value, String> {
    let dist = build::dist()?;
    let host = dist.join("bin/toolhost");
    let plugins = dist.join("plugins");
    let base = tempfile_dir("toolhost-bench-egress")?;
    let workspace = base.join("ws");
    std::fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
    std::fs::write(workspace.join("client.py"), CLIENT).map_err(|e| e.to_string())?;
    let port = start_server()?;
    let mut servers = Vec::new();
    for name in ["proxy", "direct"] {
        let log_dir = base.join(format!("log-{name}"));
        let egress = format!("[egress]\nlog_dir = \"{}\"\n", log_dir.display());
        let keys = match name {
            "proxy" => format!("{egress}allow = [\"127.0.0.1:{port}\"]\n"),
            _ => format!("{egress}[execute_command]\nnetwork = \"direct\"\n"),
        };
        let settings = base.join(format!("settings-{name}.toml"));
        std::fs::write(
            &settings,
            format!("[auto_approve]\nexecute_safe_commands = true\n{keys}"),
        )
        .map_err(|e| e.to_string())?;
        servers.push(Server::start(&host, &plugins, &workspace, &settings, "")?);
    }
    let ways = ["tunnel", "direct"];
    let python = "python3 client.py";
    // Warm up: the plugin, the kernel probe, the proxy's start.
    for (server, how) in servers.iter_mut().zip(ways) {
        result_of(
            &server
                .call(&format!("{python} connections {port} {how} 3"))?
                .1,
        )?;
    }
    let mut download = [Vec::new(), Vec::new()];
    let mut setup = [Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (i, (server, how)) in servers.iter_mut().zip(ways).enumerate() {
            download[i].push(result_of(
                &server.call(&format!("{python} download {port} {how}"))?.1,
            )?);
            setup[i].push(result_of(
                &server
                    .call(&format!("{python} connections {port} {how} {CONNECTIONS}"))?
                    .1,
            )?);
        }
    }
    let throughput = |seconds: &[f64]| {
        let (median, _, _) = spread(seconds);
        DOWNLOAD_MB as f64 / (median / 1e3)
    };
    let (proxy_mbs, direct_mbs) = (throughput(&download[0]), throughput(&download[1]));
    let ratio = proxy_mbs / direct_mbs;
    let (proxy_setup, p_lo, p_hi) = spread(&setup[0]);
    let (direct_setup, d_lo, d_hi) = spread(&setup[1]);
    let added = proxy_setup - direct_setup;
    let (pd, pd_lo, pd_hi) = spread(&download[0]);
    let (dd, dd_lo, dd_hi) = spread(&download[1]);
    println!(
        "egress: a sandboxed command's HTTP through the egress proxy (CONNECT) beside the network direct, release build, median of {ROUNDS} rounds (interleaved)"
    );
    println!(
        "  {DOWNLOAD_MB} MB download: proxy {pd:.0} ms ({proxy_mbs:.0} MB/s; {pd_lo:.0} to {pd_hi:.0}), direct {dd:.0} ms ({direct_mbs:.0} MB/s; {dd_lo:.0} to {dd_hi:.0}): {ratio:.2}x (target: at least {TARGET_THROUGHPUT}x)"
    );
    println!(
        "  connection set-up ({CONNECTIONS} in a row): proxy {proxy_setup:.3} ms ({p_lo:.3} to {p_hi:.3}), direct {direct_setup:.3} ms ({d_lo:.3} to {d_hi:.3}): +{added:.3} ms (target: at most {TARGET_SETUP_MS} ms)"
    );
    Ok(json!({
        "bench": "egress",
        "rounds": ROUNDS,
        "download_mb": DOWNLOAD_MB,
        "proxy_mb_per_s": proxy_mbs,
        "direct_mb_per_s": direct_mbs,
        "throughput_ratio": ratio,
        "target_throughput_ratio": TARGET_THROUGHPUT,
        "proxy_setup_ms": proxy_setup,
        "direct_setup_ms": direct_setup,
        "setup_added_ms": added,
        "target_setup_added_ms": TARGET_SETUP_MS,
    }))
}
