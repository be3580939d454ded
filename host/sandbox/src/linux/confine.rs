//! [`apply`]: a process confining itself (no fork): `no_new_privs`, mounts in a user and mount
//! namespace of its own when the policy has masks or protected paths, Landlock, and the
//! network filter on every thread.

use nix::sched::{unshare, CloneFlags};

use super::{landlock_rules, mounts, net_filter, probe};
use crate::applied::Applied;
use crate::error::SandboxError;
use crate::policy::{FilesystemMode, SandboxPolicy};
use crate::support::{is_simulated_missing, Feature};

/// Confines the calling process; see [`crate::apply_to_current_process`].
pub fn apply(policy: &SandboxPolicy) -> Result<Applied, SandboxError> {
    let mut applied = Applied::default();
    if policy.needs_mounts() {
        let uid = nix::unistd::getuid().as_raw();
        let gid = nix::unistd::getgid().as_raw();
        let privileged = nix::unistd::geteuid().is_root();
        let flags = if privileged {
            CloneFlags::CLONE_NEWNS
        } else {
            CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS
        };
        if is_simulated_missing(Feature::MountNamespaces) {
            return Err(SandboxError::unsupported(
                Feature::MountNamespaces,
                "no mount namespace for the masks",
            ));
        }
        unshare(flags).map_err(|e| {
            SandboxError::unsupported(
                Feature::UserNamespaces,
                format!(
                    "cannot enter a user and mount namespace for the masks ({e}; a process with \
                     threads cannot)"
                ),
            )
        })?;
        if !privileged {
            super::namespaces::write_maps(uid, gid)?;
        }
        mounts::apply(policy, false)?;
        applied.mounts = true;
    }
    nix::sys::prctl::set_no_new_privs().map_err(|e| SandboxError::setup("no_new_privs", e))?;
    applied.no_new_privs = true;
    let abi = if is_simulated_missing(Feature::Landlock) {
        None
    } else {
        probe::landlock_abi()
    };
    match abi {
        Some(abi) => {
            landlock_rules::restrict(policy, abi)?;
            if policy.filesystem != FilesystemMode::Off {
                applied.landlock_abi = Some(abi);
            }
        }
        None if policy.filesystem != FilesystemMode::Off => {
            return Err(SandboxError::unsupported(
                Feature::Landlock,
                "cannot confine the file system: Landlock is not available",
            ));
        }
        None => {}
    }
    if !policy.network || !policy.spawn {
        if is_simulated_missing(Feature::Seccomp) {
            return Err(SandboxError::unsupported(
                Feature::Seccomp,
                "cannot filter the network or program starts: seccomp is not available",
            ));
        }
        net_filter::install(policy.network, policy.spawn, true)?;
        applied.network_filter = !policy.network;
        applied.spawn_filter = !policy.spawn;
    }
    Ok(applied)
}
