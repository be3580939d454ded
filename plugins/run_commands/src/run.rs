//! Running one command as Cline's SDK shell executor does: in its own process group with
//! stdin closed, stdout and stderr each kept to their first and last 24,000 characters, the
//! whole group killed at the timeout or when the call is cancelled; then its answer: the
//! output (stderr after a `[stderr]` line), cut in the middle past 48,000 characters, and the
//! exit code when it is not 0.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
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

/// One stream's output: its first half kept, the rest rolling in the second half.
#[derive(Default)]
struct Collected {
    head: String,
    head_units: usize,
    tail: Vec<char>,
    total: usize,
}

impl Collected {
    fn from(text: &str) -> Self {
        let half = MAX_OUTPUT_CHARS.div_ceil(2);
        let mut collected = Collected::default();
        for c in text.chars() {
            collected.total += c.len_utf16();
            if collected.head_units < half {
                collected.head.push(c);
                collected.head_units += c.len_utf16();
            } else {
                collected.tail.push(c);
            }
        }
        let dropped = collected.tail.len().saturating_sub(half);
        collected.tail.drain(..dropped);
        collected
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
    let (out, err) = (Collected::from(stdout), Collected::from(stderr));
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
    let reader = |stream: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
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
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    let code = status
        .and_then(|s| s.code().or(s.signal().map(|_| 1)))
        .unwrap_or(1);
    Ended::Exited(code, combine(&out, &err))
}

#[cfg(test)]
mod tests {
    use super::*;

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
