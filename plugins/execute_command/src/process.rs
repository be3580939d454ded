//! Running a command: through a shell, in its own process group, with standard input closed
//! and standard output and error merged in one pipe, streaming its lines while it runs.
//!
//! No process outlives the call: when the shell exits, when the timeout passes or when the call
//! is cancelled, the whole process group gets SIGTERM, and SIGKILL two seconds later if any of
//! it is left. (Cline lets a timed-out command go on in the background.) The group is signalled
//! while its leader has exited but is not yet reaped, so its id cannot have been reused. With a
//! sandbox the leader is the host's supervisor, which ends everything the command started,
//! also what left the group (`setsid`, double forks, `setpgid`), and dies with the host.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::pipe::{pipe_with, PipeFlags};
use rustix::process::{
    kill_process_group, test_kill_process_group, waitid, Pid, Signal, WaitId, WaitIdOptions,
};

use crate::capture::{Capture, Collected, Limits};
use crate::messages::Ending;

/// How long a stopped process group gets between SIGTERM and SIGKILL.
pub const KILL_AFTER: Duration = Duration::from_secs(2);
/// How often the loop wakes up when nothing is read.
const TICK: Duration = Duration::from_millis(20);
/// How often it looks for the leader's exit in the first tick after the output ended.
const QUICK_TICK: Duration = Duration::from_millis(1);
/// How long output may stay unread after the group is gone (a process that left the group may
/// hold the pipe open for ever).
const DRAIN: Duration = Duration::from_millis(500);

/// What to run.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The command line.
    pub command: &'a str,
    /// Where it runs.
    pub cwd: &'a Path,
    /// When it is stopped.
    pub timeout: Duration,
    /// The shell that runs it (`-c`).
    pub shell: PathBuf,
    /// Whether the shell is a login shell (`-l`).
    pub login: bool,
    /// The program and arguments that run the shell in the sandbox (the host's supervisor);
    /// empty: the shell runs directly.
    pub prefix: &'a [String],
    /// How much of the output is kept.
    pub limits: Limits,
}

/// The run's surroundings: where output goes, and whether the call was cancelled.
pub trait Events {
    /// A chunk of output lines (or a notice) for the user.
    fn output(&mut self, chunk: &str);
    /// Whether the call was cancelled.
    fn cancelled(&mut self) -> bool;
}

/// How a run went.
#[derive(Debug)]
pub struct Outcome {
    /// How it ended.
    pub ending: Ending,
    /// What it printed.
    pub collected: Collected,
}

/// The variables added to the command's environment, so that nothing waits for a pager or an
/// editor.
pub fn extra_env() -> Vec<(&'static str, String)> {
    let editor = std::env::var("EDITOR")
        .ok()
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| "cat".to_string());
    vec![
        ("TERM", "xterm-256color".to_string()),
        ("PAGER", "cat".to_string()),
        ("GIT_PAGER", "cat".to_string()),
        ("MANPAGER", "cat".to_string()),
        ("SYSTEMD_PAGER", String::new()),
        ("EDITOR", editor),
    ]
}

/// Runs a command to its end, its timeout or the call's cancellation.
pub fn run(request: &Request<'_>, events: &mut dyn Events) -> io::Result<Outcome> {
    let (reader, writer) = pipe_with(PipeFlags::CLOEXEC)?;
    let mut command = match request.prefix.split_first() {
        Some((supervisor, arguments)) => {
            let mut command = Command::new(supervisor);
            command.args(arguments).arg(&request.shell);
            command
        }
        None => Command::new(&request.shell),
    };
    if request.login {
        command.arg("-l");
    }
    command
        .arg("-c")
        .arg(request.command)
        .current_dir(request.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer.try_clone()?))
        .stderr(Stdio::from(writer))
        .envs(extra_env())
        .process_group(0);
    let child = command.spawn()?;
    // The parent's copies of the pipe's write end must close, or the pipe never ends.
    drop(command);
    Runner::new(child, File::from(reader), request.limits.clone()).run(request.timeout, events)
}

/// Why the run was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Timeout,
    Cancelled,
}

struct Runner {
    child: Child,
    group: Pid,
    pipe: File,
    capture: Capture,
}

impl Runner {
    fn new(child: Child, pipe: File, limits: Limits) -> Self {
        let group = Pid::from_child(&child);
        Self {
            child,
            group,
            pipe,
            capture: Capture::new(limits),
        }
    }

    fn run(mut self, timeout: Duration, events: &mut dyn Events) -> io::Result<Outcome> {
        // A timeout too large to represent never passes (the host's call timeout still does).
        let deadline = Instant::now().checked_add(timeout);
        let mut buffer = vec![0u8; 64 * 1024];
        let mut status: Option<Option<ExitStatus>> = None;
        let mut stop = None;
        let mut term_sent: Option<Instant> = None;
        let mut kill_sent: Option<Instant> = None;
        let mut group_gone: Option<Instant> = None;
        let mut eof = false;
        let mut eof_at: Option<Instant> = None;
        loop {
            if eof {
                // Right after the end of the output the leader is about to exit: look again
                // soon rather than a whole tick later (a quick command would wait 20 ms).
                let since = eof_at.get_or_insert_with(Instant::now).elapsed();
                std::thread::sleep(if since < TICK { QUICK_TICK } else { TICK });
            } else {
                eof = self.read(&mut buffer, events);
            }
            let now = Instant::now();
            self.capture
                .flush_if_due(now, &mut |chunk| events.output(chunk));
            if status.is_none() && self.leader_exited() {
                // Whatever the shell left behind goes with it.
                if term_sent.is_none() {
                    self.signal(Signal::TERM);
                    term_sent = Some(now);
                }
                status = Some(self.child.wait().ok());
            }
            if status.is_none() && stop.is_none() {
                if events.cancelled() {
                    stop = Some(Stop::Cancelled);
                } else if deadline.is_some_and(|deadline| now >= deadline) {
                    stop = Some(Stop::Timeout);
                }
                if stop.is_some() {
                    self.signal(Signal::TERM);
                    term_sent = Some(now);
                }
            }
            if let Some(sent) = term_sent {
                if kill_sent.is_none()
                    && now.saturating_duration_since(sent) >= KILL_AFTER
                    && self.group_alive()
                {
                    self.signal(Signal::KILL);
                    kill_sent = Some(now);
                }
            }
            if status.is_some() {
                if group_gone.is_none() && !self.group_alive() {
                    group_gone = Some(now);
                }
                // Processes that cannot be reaped (zombies whose parent never waits) keep the
                // group "alive" after SIGKILL; they hold no pipe.
                let killed_long_ago =
                    kill_sent.is_some_and(|k| now.saturating_duration_since(k) >= DRAIN);
                let settled = group_gone.is_some() || killed_long_ago;
                let drained = eof
                    || killed_long_ago
                    || group_gone.is_some_and(|g| now.saturating_duration_since(g) >= DRAIN);
                if settled && drained {
                    break;
                }
            }
        }
        let collected = self.capture.finish(&mut |chunk| events.output(chunk));
        let ending = match (stop, status.flatten()) {
            (Some(Stop::Timeout), _) => Ending::TimedOut(timeout),
            (Some(Stop::Cancelled), _) => Ending::Cancelled,
            (None, Some(status)) => match (status.code(), status.signal()) {
                (Some(code), _) => Ending::Exited(code),
                (None, Some(signal)) => Ending::Signaled(signal),
                (None, None) => Ending::Unknown,
            },
            (None, None) => Ending::Unknown,
        };
        Ok(Outcome { ending, collected })
    }

    /// Reads what is there, waiting one tick at most; returns whether the pipe has ended.
    fn read(&mut self, buffer: &mut [u8], events: &mut dyn Events) -> bool {
        let timeout = Timespec {
            tv_sec: 0,
            tv_nsec: i64::try_from(TICK.as_nanos()).unwrap_or(20_000_000),
        };
        let mut fds = [PollFd::new(&self.pipe, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(Errno::INTR) => return false,
            Ok(_) => {}
            Err(_) => {
                std::thread::sleep(TICK);
                return false;
            }
        }
        match self.pipe.read(buffer) {
            Ok(0) => true,
            Ok(n) => {
                self.capture
                    .push(&buffer[..n], &mut |chunk| events.output(chunk));
                false
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => false,
            Err(_) => true,
        }
    }

    /// Whether the shell has exited, without reaping it (so that its id stays reserved).
    fn leader_exited(&self) -> bool {
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        match waitid(WaitId::Pid(self.group), options) {
            Ok(Some(_)) => true,
            Ok(None) => false,
            Err(Errno::INTR) => false,
            // Nothing to wait for: it is gone already.
            Err(_) => true,
        }
    }

    /// Whether any process of the group still runs. Zombies do not count: an orphan's zombie
    /// waits for init to reap it, which can take a while, and it holds nothing any more.
    fn group_alive(&self) -> bool {
        if !matches!(
            test_kill_process_group(self.group),
            Ok(()) | Err(Errno::PERM)
        ) {
            return false;
        }
        live_members(self.group.as_raw_nonzero().get()).unwrap_or(true)
    }

    fn signal(&self, signal: Signal) {
        // ESRCH (the group is gone) is the expected end.
        let _ = kill_process_group(self.group, signal);
    }
}

/// Whether a process group has a member that is not a zombie, from `/proc` (`None` when it
/// cannot be read).
fn live_members(group: i32) -> Option<bool> {
    let group = group.to_string();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; the command name may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = after.split_whitespace();
        let (state, pgrp) = (fields.next(), fields.nth(1));
        if pgrp == Some(group.as_str()) && state != Some("Z") {
            return Some(true);
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder {
        chunks: Vec<String>,
        cancel_after_chunks: Option<usize>,
    }

    impl Events for Recorder {
        fn output(&mut self, chunk: &str) {
            self.chunks.push(chunk.to_string());
        }
        fn cancelled(&mut self) -> bool {
            self.cancel_after_chunks
                .is_some_and(|n| self.chunks.len() >= n)
        }
    }

    fn run_sh(command: &str, timeout: Duration, events: &mut Recorder) -> Outcome {
        let cwd = std::env::temp_dir();
        let request = Request {
            command,
            cwd: &cwd,
            timeout,
            shell: PathBuf::from("/bin/sh"),
            login: false,
            prefix: &[],
            limits: Limits::default(),
        };
        run(&request, events).unwrap_or_else(|e| panic!("cannot run: {e}"))
    }

    #[test]
    fn exit_codes_and_merged_output() {
        let mut events = Recorder::default();
        let outcome = run_sh(
            "echo out; echo err >&2; exit 3",
            Duration::from_secs(30),
            &mut events,
        );
        assert_eq!(outcome.ending, Ending::Exited(3));
        assert_eq!(outcome.collected.lines, ["out", "err"]);
        assert_eq!(events.chunks.join("\n"), "out\nerr");
    }

    #[test]
    fn the_environment_has_no_pager() {
        let mut events = Recorder::default();
        let outcome = run_sh(
            "echo $PAGER $GIT_PAGER; read x || echo no-input",
            Duration::from_secs(30),
            &mut events,
        );
        assert_eq!(outcome.collected.lines, ["cat cat", "no-input"]);
    }

    #[test]
    fn a_huge_timeout_is_no_problem() {
        let mut events = Recorder::default();
        let outcome = run_sh("echo ok", Duration::from_secs(u64::MAX), &mut events);
        assert_eq!(outcome.ending, Ending::Exited(0));
    }

    #[test]
    fn cancellation_stops_the_group() {
        let mut events = Recorder {
            cancel_after_chunks: Some(1),
            ..Recorder::default()
        };
        let outcome = run_sh(
            "echo started; sleep 30",
            Duration::from_secs(60),
            &mut events,
        );
        assert_eq!(outcome.ending, Ending::Cancelled);
        assert_eq!(outcome.collected.lines, ["started"]);
    }
}
