//! `toolhost mcp --http` under slow or many clients: an authorized client is answered while
//! a thousand connections send their headers a byte at a time, the server does not spin when it
//! runs out of descriptors, and a session beyond `[limits] max_sessions` ends the idlest one.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_tests::{isolated_command, toolhost_bin, workdir, PluginDir};

use crate::mcp_http::{initialize, Server, TOKEN};

/// Holds `sys.argv[2]` connections to `sys.argv[1]` (`HOST:PORT`), from 127.0.0.1 and, for
/// every other one, from 127.0.0.2 to 127.0.0.9 (all on the loopback), each having sent the
/// start of a request and then one header byte a second; prints `ready N` once they are open
/// and holds them until stdin closes.
const SLOW_CLIENTS: &str = r#"
import resource, select, socket, sys, time

host, port = sys.argv[1].rsplit(":", 1)
count = int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
sockets = []
for i in range(count):
    s = socket.socket()
    s.bind(("127.0.0.1" if i % 2 == 0 else f"127.0.0.{2 + i % 8}", 0))
    s.settimeout(5)
    try:
        s.connect((host, int(port)))
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    except OSError:
        pass
    sockets.append(s)
print("ready", len(sockets), flush=True)
while not select.select([sys.stdin], [], [], 1)[0]:
    for s in sockets:
        try:
            s.send(b"x")
        except OSError:
            pass
"#;

/// The connections of [`SLOW_CLIENTS`], held until dropped.
struct SlowClients(Child);

impl SlowClients {
    fn open(addr: &str, count: usize) -> Self {
        let scratch = workdir();
        let script = scratch.path().join("slow.py");
        std::fs::write(&script, SLOW_CLIENTS).unwrap();
        let mut child = Command::new("python3")
            .arg(&script)
            .arg(addr)
            .arg(count.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), format!("ready {count}"));
        Self(child)
    }
}

impl Drop for SlowClients {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// `toolhost mcp --http` with its open-files limit set to `files` (by the shell that execs it),
/// and its configuration directory.
fn server_with_open_files(plugins: &Path, ws: &Path, files: u32) -> (Server, tempfile::TempDir) {
    let config = workdir();
    let mut command = isolated_command(Path::new("sh"), config.path());
    command
        .arg("-c")
        .arg(format!("ulimit -n {files} && exec \"$0\" \"$@\""))
        .arg(toolhost_bin())
        .args(["--isolation", "in-process", "--plugins"])
        .arg(plugins)
        .args(["mcp", "--http", "127.0.0.1:0", "--cwd"])
        .arg(ws);
    (Server::spawn(command), config)
}

/// An authorized `initialize` on a new connection: its status and how long the answer took
/// (given up after `bound`).
fn timed_initialize(addr: &str, bound: Duration) -> (u16, Duration) {
    let start = Instant::now();
    let Ok(mut stream) = TcpStream::connect_timeout(&addr.parse().unwrap(), bound) else {
        return (0, start.elapsed());
    };
    stream.set_read_timeout(Some(bound)).unwrap();
    let body = initialize();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return (0, start.elapsed());
    }
    let mut head = [0u8; 12];
    let status = match stream.read_exact(&mut head) {
        Ok(()) => String::from_utf8_lossy(&head[9..12]).parse().unwrap_or(0),
        Err(_) => 0,
    };
    (status, start.elapsed())
}

#[test]
fn an_authorized_client_is_answered_while_a_thousand_slow_connections_are_open() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let ws = workdir();
    // The usual default of the open-files limit: 1,100 connections are more than it allows.
    let (server, _config) = server_with_open_files(plugins.path(), ws.path(), 1024);
    let _slow = SlowClients::open(&server.addr, 1100);
    let (status, took) = timed_initialize(&server.addr, Duration::from_secs(10));
    eprintln!("an authorized initialize beside 1,100 slow connections: {status} in {took:?}");
    assert_eq!(status, 200, "not answered within 10 s ({took:?})");
}

/// The CPU time (user and system, in clock ticks) the process has used.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    // utime and stime are the 14th and 15th fields; the 3rd is fields[0] here.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn the_server_does_not_spin_when_it_runs_out_of_descriptors() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let ws = workdir();
    let (server, _config) = server_with_open_files(plugins.path(), ws.path(), 64);
    let slow = SlowClients::open(&server.addr, 200);
    // The server has accepted what it could and met EMFILE.
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_ticks(server.child.id());
    std::thread::sleep(Duration::from_secs(3));
    let used = cpu_ticks(server.child.id()) - before;
    eprintln!("CPU time over 3 s out of descriptors: {used} ticks");
    // Spinning on accept takes a core: about 300 ticks (of 1/100 s) in 3 s.
    assert!(used < 60, "{used} ticks of CPU in 3 s");
    // Once the connections close, the server accepts again.
    drop(slow);
    let (status, took) = timed_initialize(&server.addr, Duration::from_secs(10));
    assert_eq!(
        status, 200,
        "not answered after the connections closed ({took:?})"
    );
}

/// The `Mcp-Session-Id` of an answer.
fn session_of(response: &str) -> String {
    response
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id in {response}"))
}

#[test]
fn a_session_beyond_the_cap_ends_the_idlest_one() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let ws = workdir();
    let settings = ws.path().join("settings.toml");
    std::fs::write(&settings, "[limits]\nmax_sessions = 2\n").unwrap();
    let server = Server::start_with(
        plugins.path(),
        ws.path(),
        &[
            "--isolation",
            "in-process",
            "--settings",
            settings.to_str().unwrap(),
        ],
    );
    let bearer = format!("Bearer {TOKEN}");
    let open = || {
        let (status, response) =
            server.request("POST", &[("Authorization", &bearer)], &initialize());
        assert_eq!(status, 200, "{response}");
        let session = session_of(&response);
        let initialized =
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let (status, _) = server.request_until(
            "POST",
            &[
                ("Authorization", &bearer),
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            &initialized,
            "\r\n\r\n",
        );
        assert_eq!(status, 202);
        session
    };
    let list = |session: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
        server
            .request_until(
                "POST",
                &[
                    ("Authorization", &bearer),
                    ("Mcp-Session-Id", session),
                    ("MCP-Protocol-Version", "2025-06-18"),
                ],
                &body,
                "\"read_file\"",
            )
            .0
    };
    let first = open();
    let second = open();
    // The first is used after the second: the second is now the idlest.
    assert_eq!(list(&first), 200);
    let third = open();
    assert_eq!(list(&second), 404, "the idlest session still answers");
    assert_eq!(list(&first), 200);
    assert_eq!(list(&third), 200);
}
