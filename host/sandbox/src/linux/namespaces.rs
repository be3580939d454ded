//! Entering the sandbox's namespaces: a user namespace first (the others need no privileges
//! inside it), then mount and network namespaces ([`enter`]), then a PID namespace
//! ([`enter_pid`]). The supervisor enters them itself; its next child is the first process of
//! the PID namespace. Between the two steps it may still start a process that stays outside
//! the PID namespace (after the PID step, the kernel lets it start no thread either).

use nix::sched::{unshare, CloneFlags};

use crate::policy::SandboxPolicy;
use crate::support::{is_simulated_missing, Feature};
use crate::SandboxError;

/// The namespaces entered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Entered {
    /// A user namespace (the same user and group ids inside).
    pub user: bool,
    /// A mount namespace.
    pub mount: bool,
    /// A PID namespace (for the children).
    pub pid: bool,
    /// A network namespace (only loopback, down).
    pub net: bool,
}

fn try_unshare(flags: CloneFlags, feature: Feature) -> bool {
    !is_simulated_missing(feature) && unshare(flags).is_ok()
}

/// Enters the user, mount and network namespaces `policy` needs. Fails when the policy needs
/// mounts and no mount namespace can be had.
pub fn enter(policy: &SandboxPolicy) -> Result<Entered, SandboxError> {
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    let privileged = nix::unistd::geteuid().is_root();
    // Root needs no user namespace for the others (and from inside one it could map only
    // itself, leaving every other owner unmapped); its capabilities are dropped before the
    // command runs either way.
    let mut entered = Entered {
        user: !privileged && try_unshare(CloneFlags::CLONE_NEWUSER, Feature::UserNamespaces),
        ..Entered::default()
    };
    if entered.user {
        write_maps(uid.as_raw(), gid.as_raw())?;
    }
    let may = entered.user || privileged;
    if policy.needs_mounts() && !may {
        return Err(SandboxError::unsupported(
            Feature::UserNamespaces,
            "cannot create a user namespace to mount the masks and read-only paths",
        ));
    }
    entered.mount = may && try_unshare(CloneFlags::CLONE_NEWNS, Feature::MountNamespaces);
    if policy.needs_mounts() && !entered.mount {
        return Err(SandboxError::unsupported(
            Feature::MountNamespaces,
            "cannot create a mount namespace for the masks and read-only paths",
        ));
    }
    entered.net =
        !policy.network && may && try_unshare(CloneFlags::CLONE_NEWNET, Feature::NetworkNamespaces);
    Ok(entered)
}

/// Enters a PID namespace (for the children) where possible.
pub fn enter_pid(entered: &mut Entered) {
    // Without a mount namespace the PID namespace could not have its own /proc, and every
    // `ps` would see the host's processes under numbers that mean nothing inside.
    entered.pid = entered.mount && try_unshare(CloneFlags::CLONE_NEWPID, Feature::PidNamespaces);
}

/// Maps the user's ids to themselves (the only mapping a process may write for itself).
pub fn write_maps(uid: u32, gid: u32) -> Result<(), SandboxError> {
    let write = |path: &str, text: &str| {
        std::fs::write(path, text).map_err(|e| SandboxError::setup(format!("write {path}"), e))
    };
    write("/proc/self/setgroups", "deny\n")?;
    write("/proc/self/uid_map", &format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", &format!("{gid} {gid} 1\n"))?;
    Ok(())
}
