//! Third-party plugins: a crate made by `toolhost plugin new`, built out of tree, dropped
//! into a plugin directory and called through the already built host; then hot-swapped into a
//! running host.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost_tests::{run, target_dir, toolhost, workdir, workspace_root};

const NAME: &str = "thirdparty_probe";

/// Generates the crate (once per test process) and returns its directory.
fn generated_crate(root: &Path) -> PathBuf {
    let dir = root.join(NAME);
    let made = run(toolhost()
        .args(["plugin", "new", NAME, "--tool-api-path"])
        .arg(workspace_root().join("tool-api"))
        .arg("--dir")
        .arg(&dir));
    assert_eq!(
        made.code, 0,
        "new-plugin failed: {}{}",
        made.stdout, made.stderr
    );
    dir
}

/// Builds the crate out of tree (sharing the workspace's target directory, so dependencies are
/// reused) and returns a copy of its library.
fn build(crate_dir: &Path, into: &Path) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .arg("build")
        .arg("--manifest-path")
        .arg(crate_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir().parent().unwrap())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "out-of-tree build failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let built = target_dir().join(format!("lib{NAME}.so"));
    std::fs::copy(&built, into).unwrap();
    into.to_path_buf()
}

/// Replaces `target` atomically with a copy of `source` (the way a build tool installs a file).
fn install(source: &Path, target: &Path) {
    let staging = target.with_extension("staging");
    std::fs::copy(source, &staging).unwrap();
    std::fs::rename(&staging, target).unwrap();
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(plugins: &Path, cwd: &Path) -> Self {
        let mut child = toolhost()
            .arg("--plugins")
            .arg(plugins)
            .args(["serve", "--watch", "--cwd"])
            .arg(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    fn call(&mut self, tool: &str, params: Value) -> Value {
        self.next_id += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"id": self.next_id, "tool": tool, "params": params})
        )
        .unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], self.next_id);
        answer
    }

    fn stop(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        assert!(status.success());
    }
}

#[test]
fn an_out_of_tree_plugin_runs_and_hot_swaps_without_rebuilding_the_host() {
    let root = workdir();
    let crate_dir = generated_crate(root.path());
    let plugins = root.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let ws = root.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "one two\nthree\n").unwrap();

    let library = plugins.join(format!("lib{NAME}.so"));
    let v1 = build(&crate_dir, &root.path().join("v1.so"));
    install(&v1, &library);

    // The already built host runs the new tool.
    let call = run(toolhost()
        .arg("--plugins")
        .arg(&plugins)
        .args(["call", NAME, r#"{"path":"a.txt"}"#, "--cwd"])
        .arg(&ws));
    assert_eq!(
        (call.code, call.stdout.as_str()),
        (0, "a.txt: 2 lines, 3 words"),
        "{}",
        call.stderr
    );

    let mut server = Server::start(&plugins, &ws);
    assert_eq!(
        server.call(NAME, json!({"path": "a.txt"}))["text"],
        "a.txt: 2 lines, 3 words"
    );

    // A new version: different output, higher version number.
    let lib_rs = crate_dir.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib_rs).unwrap();
    std::fs::write(
        &lib_rs,
        source.replace("format!(\"{}: {} lines", "format!(\"v2 {}: {} lines"),
    )
    .unwrap();
    let manifest = crate_dir.join("Cargo.toml");
    let toml = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        toml.replacen("version = \"0.1.0\"", "version = \"0.2.0\"", 1),
    )
    .unwrap();
    let v2 = build(&crate_dir, &root.path().join("v2.so"));
    install(&v2, &library);

    // Calls keep succeeding while the new version comes in.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answer = server.call(NAME, json!({"path": "a.txt"}));
        assert_eq!(
            answer["is_error"], false,
            "a call failed during the swap: {answer}"
        );
        if answer["text"] == "v2 a.txt: 2 lines, 3 words" {
            break;
        }
        assert_eq!(answer["text"], "a.txt: 2 lines, 3 words");
        assert!(
            Instant::now() < deadline,
            "the new version was never served"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // A downgrade and a broken build are refused; the running version keeps serving.
    install(&v1, &library);
    std::fs::write(
        plugins.join(format!("lib{NAME}_broken.so")),
        b"not a library",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        server.call(NAME, json!({"path": "a.txt"}))["text"],
        "v2 a.txt: 2 lines, 3 words"
    );
    server.stop();
}
