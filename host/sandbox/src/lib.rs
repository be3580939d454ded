//! A Linux sandbox for commands and for processes that confine themselves.
//!
//! - [`SandboxPolicy`]: what is readable, writable, hidden and reachable, and the limits.
//! - [`probe`]: what this kernel offers ([`Support`]), so that a caller can warn once and
//!   decide ([`SandboxPolicy::adapt`]) whether to run without a missing part.
//! - [`run_sandboxed`]: the main of a small supervisor process. It dies with its parent,
//!   enters new user, mount, PID and (without network) network namespaces, hides the masked
//!   paths, binds the protected ones read-only, confines the file system with Landlock and the
//!   network with seccomp, limits the number of processes, runs the command as its child and
//!   forwards its ending; when the command ends, or the supervisor is told to stop, nothing it
//!   started is left (a PID namespace ends with its first process; without one the supervisor
//!   is a child subreaper and kills every descendant).
//! - [`apply_to_current_process`]: the same confinement (Landlock, the network filter,
//!   `no_new_privs`, masks when still single-threaded) for a process that confines itself.
//! - [`exec_main`]: the supervisor's command line, `--policy <json> -- <argv...>`.
//!
//! The supervisor applies exactly its policy or refuses to run the command (exit code
//! [`SETUP_FAILED`], a `toolhost sandbox:` line on standard error): degrading is the caller's
//! decision, made once from [`probe`].
//!
//! Everything here is Linux-only; elsewhere [`probe`] finds nothing and the entry points fail
//! with [`SandboxError::NotLinux`].

pub mod applied;
pub mod error;
pub mod git_guard;
pub mod policy;
pub mod support;

#[cfg(target_os = "linux")]
mod linux;

use std::ffi::OsString;

pub use applied::Applied;
pub use error::{SandboxError, MESSAGE_PREFIX, SETUP_FAILED};
pub use policy::{
    env_removed, protected_paths, wildcard_match, Adapted, EgressLink, FilesystemMode, Limits,
    Missing, Protected, SandboxPolicy,
};
pub use support::{Feature, Support};

/// What this kernel offers, for this user. Cheap enough to call once per process (one short
/// fork tries the namespaces).
pub fn probe() -> Support {
    #[cfg(target_os = "linux")]
    {
        linux::probe::probe()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Support::default()
    }
}

/// The supervisor: runs `argv` under `policy` and returns the exit code to leave with. When
/// the command was ended by a signal, the supervisor ends itself with the same signal, so
/// that its parent sees the command's ending. Must be called while the process has a single
/// thread (before anything starts threads): user namespaces require it.
pub fn run_sandboxed(policy: &SandboxPolicy, argv: &[OsString]) -> i32 {
    #[cfg(target_os = "linux")]
    {
        linux::supervisor::run(policy, argv)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (policy, argv);
        eprintln!("{MESSAGE_PREFIX}{}", SandboxError::NotLinux);
        SETUP_FAILED
    }
}

/// Confines the calling process: `no_new_privs`, then (when the policy asks) masks and
/// read-only paths in a user and mount namespace of its own (only possible while the process
/// has one thread), Landlock's file system rules, and the network filter. Landlock applies to
/// the calling thread and the threads and processes it starts later: call it before starting
/// threads. Nothing here forks.
pub fn apply_to_current_process(policy: &SandboxPolicy) -> Result<Applied, SandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::confine::apply(policy)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = policy;
        Err(SandboxError::NotLinux)
    }
}

/// The supervisor's command line: `--policy <json> -- <argv...>` (the arguments after the
/// program name and mode). Returns the exit code, as [`run_sandboxed`].
pub fn exec_main(args: impl IntoIterator<Item = OsString>) -> i32 {
    match parse_exec_args(args) {
        Ok((policy, argv)) => run_sandboxed(&policy, &argv),
        Err(e) => {
            eprintln!("{MESSAGE_PREFIX}{e}");
            SETUP_FAILED
        }
    }
}

/// Parses `--policy <json> -- <argv...>`.
pub fn parse_exec_args(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(SandboxPolicy, Vec<OsString>), SandboxError> {
    let mut args = args.into_iter();
    let mut policy = None;
    loop {
        match args.next() {
            Some(flag) if flag == "--policy" => {
                let json = args
                    .next()
                    .ok_or_else(|| SandboxError::Policy("--policy needs a value".into()))?;
                let json = json
                    .into_string()
                    .map_err(|_| SandboxError::Policy("the policy is not UTF-8".into()))?;
                policy = Some(SandboxPolicy::from_json(&json)?);
            }
            Some(flag) if flag == "--" => break,
            Some(other) => {
                return Err(SandboxError::Policy(format!(
                    "unexpected argument {}",
                    other.to_string_lossy()
                )))
            }
            None => return Err(SandboxError::Policy("no `--` before the command".into())),
        }
    }
    let policy = policy.ok_or_else(|| SandboxError::Policy("no --policy".into()))?;
    let argv: Vec<OsString> = args.collect();
    if argv.is_empty() {
        return Err(SandboxError::Policy("no command after `--`".into()));
    }
    Ok((policy, argv))
}

/// The arguments that run `argv` under `policy` through `supervisor` in its supervisor mode
/// (`mode`, e.g. `__sandbox-exec`): `[supervisor, mode, --policy, json, --]`.
pub fn argv_prefix(
    supervisor: &std::path::Path,
    mode: &str,
    policy: &SandboxPolicy,
) -> Vec<String> {
    vec![
        supervisor.to_string_lossy().into_owned(),
        mode.to_string(),
        "--policy".to_string(),
        policy.to_json(),
        "--".to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_arguments() {
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        let (policy, argv) =
            parse_exec_args(args(&["--policy", "{\"network\":false}", "--", "ls", "-l"]))
                .unwrap_or_else(|e| panic!("{e}"));
        assert!(!policy.network);
        assert_eq!(argv, args(&["ls", "-l"]));
        assert!(parse_exec_args(args(&["--policy", "{}", "--"])).is_err());
        assert!(parse_exec_args(args(&["--", "ls"])).is_err());
        assert!(parse_exec_args(args(&["--policy", "{}", "ls"])).is_err());
    }
}
