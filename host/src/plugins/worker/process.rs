//! Starting and ending a worker process: the `toolhost` binary in its worker mode, with a
//! clean environment, in a process group of its own (so that stopping it stops everything it
//! started), its channel on standard input, and its standard output and error read into the
//! host's log under the plugin's name, never into a protocol stream.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, PoisonError};

use crate::plugins::access::AccessReport;
use std::time::{Duration, Instant};

use super::config::WorkerConfig;
use crate::plugins::sealed::SealedLibrary;

/// The hidden mode of the `toolhost` binary that a worker runs in ([`super::serve`]).
pub const WORKER_MODE: &str = "__plugin-worker";

/// Environment variables a worker always gets (when the host has them); everything else is
/// left out unless the plugin's settings pass it on.
const KEPT_ENV: [&str; 15] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "TOOLHOST_BINARY",
    "TOOLHOST_SANDBOX_UNAVAILABLE",
];

/// How many of the last lines of a worker's standard error a crash report may quote.
const TAIL_LINES: usize = 4;

/// The longest line kept for the tail (longer ones are cut).
const TAIL_LINE_CHARS: usize = 300;

/// What starts a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The `toolhost` binary.
    pub program: PathBuf,
    /// The library file (its name is what messages show).
    pub library: PathBuf,
    /// The sealed copy the worker loads (sent over its channel); set when the plugin's
    /// generation starts.
    pub image: Option<Arc<SealedLibrary>>,
    /// The name its output is logged under.
    pub plugin: String,
    /// What it declares, is granted and gets.
    pub access: AccessReport,
    /// Its limits and sandbox.
    pub config: WorkerConfig,
    /// More environment variables to pass on (`*`: all of them).
    pub env: Vec<String>,
    /// Its own temporary directory (its `TMPDIR`).
    pub temp_dir: PathBuf,
    /// The workspace roots its sandbox grants (the last entries of its readable and, with
    /// `workspace-write`, writable roots); empty when it grants none.
    pub workspace_roots: Vec<PathBuf>,
}

impl Launch {
    /// The same start with the sandbox granting `roots` instead (a task over other roots).
    pub fn for_roots(&self, roots: &[PathBuf]) -> Self {
        let mut launch = self.clone();
        if self.workspace_roots.is_empty() {
            return launch;
        }
        if let Some(policy) = launch.config.sandbox.as_mut() {
            let old = &self.workspace_roots;
            for list in policy
                .readable_roots
                .iter_mut()
                .chain(std::iter::once(&mut policy.writable_roots))
            {
                if list.ends_with(old) {
                    list.truncate(list.len() - old.len());
                    list.extend(roots.iter().cloned());
                }
            }
        }
        launch.workspace_roots = roots.to_vec();
        launch
    }
}

/// A started worker.
pub struct Started {
    /// The process.
    pub child: Child,
    /// The host's end of the channel.
    pub channel: UnixStream,
    /// What it writes.
    pub output: Output,
}

/// Starts a worker.
pub fn start(launch: &Launch) -> io::Result<Started> {
    let (host_end, worker_end) = UnixStream::pair()?;
    let config = serde_json::to_string(&launch.config).map_err(io::Error::other)?;
    let mut command = Command::new(&launch.program);
    command
        .arg(WORKER_MODE)
        .arg(&launch.library)
        .arg(config)
        .env_clear()
        .envs(environment(&launch.env))
        .env("TMPDIR", &launch.temp_dir)
        .stdin(Stdio::from(OwnedFd::from(worker_end)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let image = launch
        .image
        .as_ref()
        .ok_or_else(|| io::Error::other("no sealed copy of the library to send"))?;
    let mut child = command.spawn()?;
    if let Err(e) = image.send(&host_end) {
        kill_group(&child);
        let _ = child.wait();
        return Err(e);
    }
    let output = Output::collect(&launch.plugin, &mut child);
    Ok(Started {
        child,
        channel: host_end,
        output,
    })
}

/// The environment of a worker: [`KEPT_ENV`], the locale (`LC_*`), and `extra`.
fn environment(extra: &[String]) -> Vec<(OsString, OsString)> {
    let everything = extra.iter().any(|name| name == "*");
    std::env::vars_os()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            everything
                || KEPT_ENV.contains(&name.as_ref())
                || name.starts_with("LC_")
                || extra.iter().any(|kept| *kept == name)
        })
        .collect()
}

/// Kills the worker's process group (the worker and everything it started that stayed in it).
pub fn kill_group(child: &Child) {
    let pid = rustix::process::Pid::from_child(child);
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

/// How a worker ended, in a few words: `SIGSEGV`, `exit code 3`.
pub fn how_it_ended(status: ExitStatus) -> String {
    if let Some(signal) = status.signal() {
        let name = nix::sys::signal::Signal::try_from(signal)
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|_| format!("signal {signal}"));
        return if signal == nix::sys::signal::Signal::SIGXCPU as i32 {
            format!("{name}: its CPU time limit")
        } else {
            name
        };
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "an unknown ending".to_string(),
    }
}

/// A worker's standard output and error, logged line by line; the last lines of its standard
/// error are kept for a crash report.
pub struct Output {
    tail: Arc<Mutex<VecDeque<String>>>,
    ended: Receiver<()>,
    streams: usize,
}

impl Output {
    fn collect(plugin: &str, child: &mut Child) -> Self {
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (ended, receiver) = mpsc::channel();
        let mut streams = 0;
        if let Some(stdout) = child.stdout.take() {
            streams += 1;
            let (plugin, ended) = (plugin.to_string(), ended.clone());
            let _ = std::thread::Builder::new()
                .name("worker-stdout".into())
                .spawn(move || {
                    read_lines(stdout, |line| {
                        tracing::info!(target: "toolhost::plugin", plugin = %plugin, stream = "stdout", "{line}");
                    });
                    let _ = ended.send(());
                });
        }
        if let Some(stderr) = child.stderr.take() {
            streams += 1;
            let (plugin, tail) = (plugin.to_string(), tail.clone());
            let _ = std::thread::Builder::new()
                .name("worker-stderr".into())
                .spawn(move || {
                    read_lines(stderr, |line| {
                        tracing::warn!(target: "toolhost::plugin", plugin = %plugin, stream = "stderr", "{line}");
                        let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                        if tail.len() == TAIL_LINES {
                            tail.pop_front();
                        }
                        tail.push_back(line.chars().take(TAIL_LINE_CHARS).collect());
                    });
                    let _ = ended.send(());
                });
        }
        Self {
            tail,
            ended: receiver,
            streams,
        }
    }

    /// The last line the worker wrote to standard error, once its output ended (waiting at
    /// most `wait`: something it started may hold the pipes open).
    pub fn last_words(&self, wait: Duration) -> Option<String> {
        let deadline = Instant::now() + wait;
        for _ in 0..self.streams {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.ended.recv_timeout(left).is_err() {
                break;
            }
        }
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.iter().rev().find(|l| !l.trim().is_empty()).cloned()
    }
}

/// Calls `each` with every line `input` holds (lossy UTF-8, without the line end); a line
/// longer than 64 KiB is passed on in pieces, so a worker printing without newlines cannot
/// make the host buffer without bound.
fn read_lines(mut input: impl Read, mut each: impl FnMut(&str)) {
    const MOST: usize = 64 << 10;
    let mut pending: Vec<u8> = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let n = match input.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buffer[..n]);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            each(String::from_utf8_lossy(&line[..line.len() - 1]).trim_end_matches('\r'));
        }
        if pending.len() > MOST {
            each(&String::from_utf8_lossy(&pending));
            pending.clear();
        }
    }
    if !pending.is_empty() {
        each(&String::from_utf8_lossy(&pending));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_and_long_ones_cut_into_pieces() {
        let mut lines = Vec::new();
        read_lines(&b"one\r\ntwo\nthree"[..], |l| lines.push(l.to_string()));
        assert_eq!(lines, ["one", "two", "three"]);
        let long = vec![b'x'; 200 << 10];
        let mut pieces = 0;
        read_lines(long.as_slice(), |l| {
            assert!(l.len() <= (64 << 10) + 8192);
            pieces += 1;
        });
        assert!(pieces >= 3);
    }

    #[test]
    fn endings_are_named() {
        assert_eq!(how_it_ended(ExitStatus::from_raw(11)), "SIGSEGV");
        assert_eq!(how_it_ended(ExitStatus::from_raw(3 << 8)), "exit code 3");
        assert!(how_it_ended(ExitStatus::from_raw(24)).contains("CPU time limit"));
    }
}
