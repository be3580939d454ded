//! What the supervisor's tests share: a scene (a workspace that is a git repository, a fake
//! home, a directory outside both) and the processes a test left behind.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolhost_sandbox::{FilesystemMode, Limits, SandboxPolicy};

/// The supervisor alone.
pub const EXEC: &str = env!("CARGO_BIN_EXE_toolhost-sandbox-exec");

/// A workspace (a git repository with a `.env`), a fake home and a directory outside both,
/// in one temporary directory.
pub struct Scene {
    _dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub home: PathBuf,
    pub outside: PathBuf,
}

impl Scene {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("sandbox-test-")
            .tempdir()
            .unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (ws, home, outside) = (base.join("ws"), base.join("home"), base.join("outside"));
        for d in [&ws, &home, &outside] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(ws.join(".env"), "TOKEN=secret-value\n").unwrap();
        std::fs::write(ws.join("readme.txt"), "hello\n").unwrap();
        std::fs::hard_link(ws.join(".env"), ws.join("innocent.txt")).unwrap();
        std::os::unix::fs::symlink(ws.join(".env"), ws.join("env-link")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("out-link")).unwrap();
        let git = Command::new("git")
            .args(["init", "-q", "."])
            .current_dir(&ws)
            .env("HOME", &home)
            .status()
            .unwrap();
        assert!(git.success());
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        Scene {
            _dir: dir,
            ws,
            home,
            outside,
        }
    }

    /// The default profile: workspace-write, masks for `.env` and its hard link, the
    /// protected git paths.
    pub fn policy(&self, network: bool) -> SandboxPolicy {
        let protected = toolhost_sandbox::protected_paths(&self.ws);
        SandboxPolicy {
            filesystem: FilesystemMode::WorkspaceWrite,
            writable_roots: vec![self.ws.clone()],
            read_only_paths: protected.read_only,
            pinned_paths: protected.pinned,
            masked_paths: vec![self.ws.join(".env"), self.ws.join("innocent.txt")],
            git_guarded_roots: vec![self.ws.clone()],
            network,
            limits: Limits {
                max_processes: Some(1000),
                ..Limits::default()
            },
            die_with_parent: true,
            ..SandboxPolicy::default()
        }
    }

    pub fn command(&self, policy: &SandboxPolicy, script: &str) -> Command {
        let mut command = Command::new(EXEC);
        command
            .arg("--policy")
            .arg(policy.to_json())
            .args(["--", "/bin/bash", "-c", script])
            .current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null());
        command
    }

    /// Runs `script` under `policy`: exit code and merged output.
    pub fn run(&self, policy: &SandboxPolicy, script: &str) -> (i32, String) {
        let output = self.command(policy, script).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.code().unwrap_or(-1), text)
    }
}

/// Live processes whose command line contains `marker`.
pub fn with_marker(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| s[i + 1..].trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if cmdline.contains(marker) && !zombie {
            found.push(cmdline);
        }
    }
    found
}

pub fn wait_gone(marker: &str, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let left = with_marker(marker);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A marker no other test uses: a sleep of this many seconds.
pub fn marker(seed: u32) -> String {
    format!("{}.{}{}", 7000 + seed, std::process::id(), seed)
}
