//! Ending every process a command left behind, without a PID namespace: the supervisor is a
//! child subreaper, so every orphan below it becomes its child; it kills its children and
//! reaps them until none is left (a killed process's children are its own by then).

use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

/// The children of this process, from /proc.
pub fn children() -> Vec<Pid> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; the name may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = after.split_whitespace();
        let (_state, ppid) = (fields.next(), fields.next());
        if ppid == Some(me.as_str()) {
            found.push(Pid::from_raw(pid));
        }
    }
    found
}

/// Reaps every child that has ended; returns the ones reaped with their status.
pub fn reap_ended() -> Vec<(Pid, WaitStatus)> {
    let mut reaped = Vec::new();
    loop {
        match waitpid(
            None::<Pid>,
            Some(WaitPidFlag::WNOHANG | WaitPidFlag::__WALL),
        ) {
            Ok(WaitStatus::StillAlive) | Err(_) => break,
            Ok(status) => {
                if let Some(pid) = status.pid() {
                    reaped.push((pid, status));
                }
            }
        }
    }
    reaped
}

/// Sends `signal` to every child.
pub fn signal_children(signal: Signal) {
    for pid in children() {
        let _ = kill(pid, signal);
    }
}

/// Kills every descendant and reaps them, until none is left or `limit` has passed.
pub fn kill_descendants(limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        reap_ended();
        let children = children();
        if children.is_empty() || Instant::now() >= deadline {
            break;
        }
        for pid in &children {
            let _ = kill(*pid, Signal::SIGKILL);
        }
        // Each reap hands over the killed process's children (they are ours by then).
        for pid in children {
            let _ = waitpid(pid, Some(WaitPidFlag::__WALL));
        }
    }
}
