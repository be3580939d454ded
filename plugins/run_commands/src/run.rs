//! Running one command as Cline's SDK shell executor does: in its own process group with
//! stdin closed, stdout and stderr each kept to their first and last 24,000 characters as they
//! are read, the
//! whole group killed at the timeout or when the call is cancelled; then its answer: the
//! output (stderr after a `[stderr]` line), cut in the middle past 48,000 characters, and the
//! exit code when it is not 0.

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, Pid, Signal};

/// How much output the answer holds (Cline's `MAX_COMMAND_OUTPUT_CHARS`).
pub const MAX_OUTPUT_CHARS: usize = 48_000;

/// How long a command may run (Cline's default).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// How often a waiting call looks at the clock and at cancellation.
const POLL: Duration = Duration::from_millis(20);

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code (a signal counts as 1); the combined output.
    Exited(i32, String),
    /// It was still running at the timeout and was killed with its group.
    TimedOut,
    /// The call was cancelled and the command killed with its group.
    Cancelled,
    /// It could not be started.
    NotStarted(String),
}

/// One stream's output as it is read: its first half kept, the rest rolling in the second
/// half, so that a command printing without end costs no more than the answer holds.
#[derive(Default)]
struct Collected {
    head: String,
    head_units: usize,
    tail: VecDeque<char>,
    total: usize,
    /// The bytes of a character split between two reads.
    pending: Vec<u8>,
}

impl Collected {
    fn from(text: &str) -> Self {
        let mut collected = Collected::default();
        collected.push_str(text);
        collected
    }

    fn push_str(&mut self, text: &str) {
        let half = MAX_OUTPUT_CHARS.div_ceil(2);
        for c in text.chars() {
            self.total += c.len_utf16();
            if self.head_units < half {
                self.head.push(c);
                self.head_units += c.len_utf16();
            } else {
                self.tail.push_back(c);
                if self.tail.len() > half {
                    self.tail.pop_front();
                }
            }
        }
    }

    /// Adds bytes read, decoded as UTF-8 across reads (invalid sequences as U+FFFD).
    fn push_bytes(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        let mut rest = std::mem::take(&mut self.pending);
        loop {
            match std::str::from_utf8(&rest) {
                Ok(text) => {
                    self.push_str(text);
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    let text = String::from_utf8_lossy(&rest[..valid]).into_owned();
                    self.push_str(&text);
                    match e.error_len() {
                        Some(bad) => {
                            self.push_str("\u{FFFD}");
                            rest.drain(..valid + bad);
                        }
                        None => {
                            self.pending = rest[valid..].to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// The stream ended: a character it left unfinished is U+FFFD, not dropped (as a
    /// `TextDecoder` flushes it in Cline's executor).
    fn end(&mut self) {
        if !std::mem::take(&mut self.pending).is_empty() {
            self.push_str("\u{FFFD}");
        }
    }

    fn dropped(&self) -> bool {
        self.total > self.head_units + self.tail.len()
    }

    fn text(&self) -> String {
        let mut text = self.head.clone();
        text.extend(&self.tail);
        text
    }
}

/// The combined output of the two streams, cut as Cline's executor cuts it.
pub fn combine(stdout: &str, stderr: &str) -> String {
    combined(&Collected::from(stdout), &Collected::from(stderr))
}

fn combined(out: &Collected, err: &Collected) -> String {
    let mut text = out.text();
    let err_text = err.text();
    if !err_text.is_empty() {
        text.push_str("\n[stderr]\n");
        text.push_str(&err_text);
    }
    let total = out.total + err.total;
    let length = text.encode_utf16().count();
    let over = length > MAX_OUTPUT_CHARS || total > MAX_OUTPUT_CHARS;
    if over && (out.dropped() || err.dropped() || length > MAX_OUTPUT_CHARS) {
        let half = MAX_OUTPUT_CHARS / 2;
        let chars: Vec<char> = text.chars().collect();
        let head: String = chars.iter().take(half).collect();
        let tail: String = chars[chars.len().saturating_sub(half)..].iter().collect();
        text = format!(
            "{head}\n[... output truncated: {total} chars total. Refine the command (grep, head, \
             tail) to view the elided middle ...]\n{tail}"
        );
    }
    text
}

/// A stream being read by a thread of its own into a shared [`Collected`].
struct Reading {
    collected: Arc<Mutex<Collected>>,
    ended: Receiver<()>,
}

impl Reading {
    fn start(stream: Option<impl Read + Send + 'static>) -> Self {
        let collected = Arc::new(Mutex::new(Collected::default()));
        let (done, ended) = std::sync::mpsc::channel();
        let shared = collected.clone();
        std::thread::spawn(move || {
            if let Some(mut stream) = stream {
                let mut chunk = [0u8; 8192];
                while let Ok(n @ 1..) = stream.read(&mut chunk) {
                    shared
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push_bytes(&chunk[..n]);
                }
            }
            shared.lock().unwrap_or_else(PoisonError::into_inner).end();
            let _ = done.send(());
        });
        Self { collected, ended }
    }

    /// Waits until the stream ends or `deadline`; a process that escaped the command's group
    /// and holds the pipe open does not hold the call.
    fn finish(&self, deadline: Instant) -> std::sync::MutexGuard<'_, Collected> {
        let left = deadline.saturating_duration_since(Instant::now());
        let _ = self.ended.recv_timeout(left);
        self.collected
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// How long the output of a command that ended may take to arrive.
const DRAIN: Duration = Duration::from_secs(2);

/// Runs `argv` in `cwd`, ending it at [`TIMEOUT`] or when `cancelled` says so.
pub fn run(argv: &[String], cwd: &std::path::Path, cancelled: &dyn Fn() -> bool) -> Ended {
    let Some((program, args)) = argv.split_first() else {
        return Ended::NotStarted("nothing to run".to_string());
    };
    let child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return Ended::NotStarted(format!("Failed to execute command: {e}")),
    };
    let stdout = Reading::start(child.stdout.take());
    let stderr = Reading::start(child.stderr.take());
    let started = Instant::now();
    let group = Pid::from_raw(i32::try_from(child.id()).unwrap_or(0));
    let kill = || {
        if let Some(group) = group {
            let _ = kill_process_group(group, Signal::KILL);
        }
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if cancelled() {
            kill();
            let _ = child.wait();
            return Ended::Cancelled;
        }
        if started.elapsed() >= TIMEOUT {
            kill();
            let _ = child.wait();
            return Ended::TimedOut;
        }
        std::thread::sleep(POLL);
    };
    // What the command left running in its group must not hold the pipes open.
    kill();
    let deadline = Instant::now() + DRAIN;
    let code = status
        .and_then(|s| s.code().or(s.signal().map(|_| 1)))
        .unwrap_or(1);
    let out = stdout.finish(deadline);
    let err = stderr.finish(deadline);
    Ended::Exited(code, combined(&out, &err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_between_reads_is_whole_and_one_left_unfinished_is_kept() {
        let mut collected = Collected::default();
        collected.push_bytes(b"a\xc3");
        collected.push_bytes(b"\xa9b\xc3");
        assert_eq!(collected.text(), "a\u{e9}b");
        collected.end();
        assert_eq!(collected.text(), "a\u{e9}b\u{FFFD}");
    }

    #[test]
    fn stderr_follows_stdout_and_long_output_is_cut_in_the_middle() {
        assert_eq!(combine("out\n", "err\n"), "out\n\n[stderr]\nerr\n");
        assert_eq!(combine("", "only-err\n"), "\n[stderr]\nonly-err\n");
        let long = "x".repeat(60_001);
        let cut = combine(&long, "");
        assert!(cut.contains("\n[... output truncated: 60001 chars total. Refine the command"));
        assert_eq!(cut.chars().count(), 48_112);
    }

    #[test]
    fn output_is_bounded_as_it_is_read_and_split_characters_survive() {
        let mut collected = Collected::default();
        collected.push_bytes(&[0xC3]);
        collected.push_bytes(&[0xA9, b'!', 0xFF]);
        assert_eq!(collected.text(), "é!\u{FFFD}");
        let argv: Vec<String> = ["/bin/sh", "-c", "yes | head -c 20000000"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let Ended::Exited(0, text) = run(&argv, std::path::Path::new("/"), &|| false) else {
            panic!("yes ran");
        };
        assert!(text.chars().count() < MAX_OUTPUT_CHARS + 200);
        assert!(text.contains("[... output truncated: 20000000 chars total."));
    }

    #[test]
    fn a_command_runs_and_ends() {
        let argv: Vec<String> = ["/bin/sh", "-c", "echo hi; echo no >&2; exit 3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            run(&argv, std::path::Path::new("/"), &|| false),
            Ended::Exited(3, "hi\n\n[stderr]\nno\n".to_string())
        );
        let missing = vec!["/nonexistent-binary-xyz".to_string()];
        assert!(matches!(
            run(&missing, std::path::Path::new("/"), &|| false),
            Ended::NotStarted(_)
        ));
    }
}
