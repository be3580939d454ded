//! What a worker is started with: its limits and its sandbox, chosen by the host and passed on
//! the worker's command line.

use serde::{Deserialize, Serialize};
use toolhost_sandbox::SandboxPolicy;

/// Resource limits of a worker process (and of what it starts). `None` keeps the inherited
/// limit. Exceeding one ends the worker (memory: its allocation fails and it aborts; CPU time:
/// `SIGXCPU`), which the host reports as a crash.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkerLimits {
    /// Address space, in bytes (`RLIMIT_AS`).
    pub memory_bytes: Option<u64>,
    /// CPU seconds over the worker's life (`RLIMIT_CPU`).
    pub cpu_secs: Option<u64>,
    /// Open files (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
}

impl WorkerLimits {
    /// Sets the limits on the calling process. A limit never rises above the one the process
    /// already has (only a privileged process could raise its hard limit).
    pub fn apply(&self) -> std::io::Result<()> {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        for (resource, value) in [
            (Resource::As, self.memory_bytes),
            (Resource::Cpu, self.cpu_secs),
            (Resource::Nofile, self.open_files),
        ] {
            if let Some(wanted) = value {
                let value = getrlimit(resource)
                    .maximum
                    .map_or(wanted, |hard| wanted.min(hard));
                setrlimit(
                    resource,
                    Rlimit {
                        current: Some(value),
                        maximum: Some(value),
                    },
                )?;
            }
        }
        Ok(())
    }
}

/// A worker's start-up configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerConfig {
    /// The host's process id: a worker whose parent is not the host exits.
    pub host_pid: i32,
    /// Its limits.
    pub limits: WorkerLimits,
    /// The sandbox it applies to itself before the library is opened (`None`: none).
    pub sandbox: Option<SandboxPolicy>,
    /// The SHA-256 of the library copy the host sends (hex): the worker loads no other.
    #[serde(default)]
    pub library_sha256: String,
}

impl WorkerConfig {
    /// Applies the sandbox to the calling process (before it starts threads).
    pub fn apply_sandbox(&self) -> Result<(), String> {
        match &self.sandbox {
            None => Ok(()),
            Some(policy) => toolhost_sandbox::apply_to_current_process(policy)
                .map(|_| ())
                .map_err(|e| format!("cannot apply the worker's sandbox: {e}")),
        }
    }
}
