//! The network filter (seccomp): `socket` for anything but Unix sockets fails with `EPERM`, and
//! so does io_uring, whose operations would open and connect sockets without those system
//! calls. Unix sockets stay (local tools need them; abstract ones outside the sandbox are out
//! of reach through Landlock's scope, and with a network namespace of its own).
//!
//! The filter allows only the native architecture's system calls: a 32-bit program would
//! reach the network through `socketcall`, so it is killed instead.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::support::Feature;
use crate::SandboxError;

fn seccomp_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::unsupported(Feature::Seccomp, format!("seccomp: {e}"))
}

/// The compiled filter: the network rules when `network` is off, `execve` and `execveat`
/// refused when `spawn` is off.
pub fn program(network: bool, spawn: bool) -> Result<BpfProgram, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(seccomp_error)?;
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )
    .map_err(seccomp_error)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if !network {
        rules.insert(
            libc::SYS_socket,
            vec![SeccompRule::new(vec![not_unix]).map_err(seccomp_error)?],
        );
        for call in [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ] {
            rules.insert(call, Vec::new());
        }
    }
    if !spawn {
        for call in [libc::SYS_execve, libc::SYS_execveat] {
            rules.insert(call, Vec::new());
        }
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(seccomp_error)?;
    filter.try_into().map_err(seccomp_error)
}

/// Installs the filter of [`program`] on the calling thread (`all_threads`: on every thread of
/// the process). `no_new_privs` must be set.
pub fn install(network: bool, spawn: bool, all_threads: bool) -> Result<(), SandboxError> {
    let program = program(network, spawn)?;
    if all_threads {
        seccompiler::apply_filter_all_threads(&program).map_err(seccomp_error)
    } else {
        seccompiler::apply_filter(&program).map_err(seccomp_error)
    }
}
