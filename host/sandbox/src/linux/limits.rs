//! Resource limits. The process limit is the PID namespace's `pid_max` where the kernel keeps
//! one per namespace (Linux 6.14+; it also holds for root, which `RLIMIT_NPROC` does not bind),
//! else `RLIMIT_NPROC`: counted per user inside the sandbox's user namespace, or, without one,
//! over all of the user's processes (so the limit is then added to what the user already runs).

use nix::sys::resource::{setrlimit, Resource};

use crate::policy::Limits;
use crate::support::{is_simulated_missing, Feature};
use crate::SandboxError;

/// The smallest `pid_max` the kernel accepts.
const PID_MAX_MIN: u64 = 301;

/// Applies `limits`; `pid_namespace`: the caller is the first process of a new PID namespace
/// with its own `/proc`; `user_namespace`: it runs in a new user namespace; `memory_cgroup`:
/// the memory limit is a cgroup's already, else each process gets it as `RLIMIT_DATA` (the
/// heap and private writable mappings: unlike `RLIMIT_AS`, address space reserved but not
/// writable, as runtimes like V8 and Go reserve it, does not count).
pub fn apply(
    limits: &Limits,
    pid_namespace: bool,
    user_namespace: bool,
    memory_cgroup: bool,
) -> Result<(), SandboxError> {
    if let Some(max) = limits.max_processes {
        processes(max, pid_namespace, user_namespace)?;
    }
    let memory = limits.max_memory_bytes.filter(|_| !memory_cgroup);
    for (limit, resource, what) in [
        (memory, Resource::RLIMIT_DATA, "memory"),
        (limits.max_cpu_secs, Resource::RLIMIT_CPU, "CPU time"),
        (limits.max_open_files, Resource::RLIMIT_NOFILE, "open files"),
    ] {
        if let Some(value) = limit {
            setrlimit(resource, value, value)
                .map_err(|e| SandboxError::setup(format!("limit {what}"), e))?;
        }
    }
    Ok(())
}

fn processes(max: u64, pid_namespace: bool, user_namespace: bool) -> Result<(), SandboxError> {
    let simulated = is_simulated_missing(Feature::ProcessLimit);
    // Before 6.14, pid_max is one value for the whole machine, and a root sandbox could change
    // it for everyone: only newer kernels are asked.
    if pid_namespace && !simulated && super::probe::kernel_at_least(6, 14) {
        // Process 1 is the supervisor; the command and its descendants get the rest.
        let value = (max + 1).max(PID_MAX_MIN);
        if std::fs::write("/proc/sys/kernel/pid_max", value.to_string()).is_ok()
            && (value == max + 1 || nix::unistd::geteuid().is_root())
        {
            return Ok(());
        }
    }
    if nix::unistd::geteuid().is_root() || simulated {
        return Err(SandboxError::unsupported(
            Feature::ProcessLimit,
            "cannot limit the number of processes: RLIMIT_NPROC does not bind root, and this \
             kernel has no pid_max per PID namespace",
        ));
    }
    let value = if user_namespace {
        max
    } else {
        max + user_processes()
    };
    setrlimit(Resource::RLIMIT_NPROC, value, value)
        .map_err(|e| SandboxError::setup("limit the number of processes", e))
}

/// How many processes (threads included) the real user runs now, from /proc.
fn user_processes() -> u64 {
    let uid = nix::unistd::getuid().as_raw().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut count = 0;
    for entry in entries.flatten() {
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let mut threads = 1;
        let mut mine = false;
        for line in status.lines() {
            if let Some(rest) = line.strip_prefix("Uid:") {
                mine = rest.split_whitespace().next() == Some(uid.as_str());
            } else if let Some(rest) = line.strip_prefix("Threads:") {
                threads = rest.trim().parse().unwrap_or(1);
            }
        }
        if mine {
            count += threads;
        }
    }
    count
}
