//! The file system rules (Landlock): everything readable and executable (or only the readable
//! roots, when the policy names them); writable only beneath
//! the writable roots and the private temporary directories (workspace-write) and a few device
//! files; without network, TCP refused
//! and abstract Unix sockets outside the sandbox out of reach; signals to processes outside
//! the sandbox refused.
//!
//! Landlock only adds rights, so read-only paths inside writable roots are mounts (see
//! [`super::mounts`]), not rules. Device ioctls are not restricted (terminal programs need
//! them).

use std::path::Path;

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use crate::policy::{FilesystemMode, SandboxPolicy};
use crate::support::Feature;
use crate::SandboxError;

/// The ABI the rules are written for; newer kernels enforce the same rules.
const TARGET: ABI = ABI::V6;

/// Device files writable in every mode.
const WRITABLE_DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/urandom",
];

/// Directories of devices writable in every mode (pseudo-terminals).
const WRITABLE_DEVICE_DIRS: [&str; 1] = ["/dev/pts"];

/// Writable in workspace-write (POSIX shared memory and semaphores, which multiprocessing and
/// build tools use).
const WORKSPACE_WRITE_EXTRA: [&str; 1] = ["/dev/shm"];

fn landlock_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::unsupported(Feature::Landlock, format!("Landlock: {e}"))
}

/// Restricts the calling thread (and what it starts) to `policy`'s file system and, when the
/// network is off, TCP and abstract Unix socket rules. Returns the kernel's ABI.
pub fn restrict(policy: &SandboxPolicy, abi: u32) -> Result<u32, SandboxError> {
    let handled_fs = if policy.filesystem == FilesystemMode::Off {
        BitFlags::EMPTY
    } else {
        AccessFs::from_all(TARGET) & !AccessFs::IoctlDev
    };
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
    if !handled_fs.is_empty() {
        ruleset = ruleset.handle_access(handled_fs).map_err(landlock_error)?;
    }
    let mut scopes = BitFlags::from(Scope::Signal);
    if !policy.network {
        scopes |= Scope::AbstractUnixSocket;
        if abi >= 4 {
            ruleset = ruleset
                .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
                .map_err(landlock_error)?;
        }
    }
    if abi >= 6 {
        ruleset = ruleset.scope(scopes).map_err(landlock_error)?;
    }
    let mut created = ruleset.create().map_err(landlock_error)?;
    if !handled_fs.is_empty() {
        let read = AccessFs::from_read(TARGET) & handled_fs;
        match &policy.readable_roots {
            None => created = add(created, Path::new("/"), read)?,
            Some(roots) => {
                for root in roots {
                    created = add(created, root, read)?;
                }
            }
        }
        let file_write = AccessFs::from_file(TARGET) & handled_fs;
        for device in WRITABLE_DEVICES {
            created = add(created, Path::new(device), file_write)?;
        }
        for dir in WRITABLE_DEVICE_DIRS {
            created = add(created, Path::new(dir), read | file_write)?;
        }
        if policy.filesystem == FilesystemMode::WorkspaceWrite {
            for root in policy.writable_roots.iter().chain(&policy.private_tmp) {
                created = add(created, root, handled_fs)?;
            }
            for extra in WORKSPACE_WRITE_EXTRA {
                created = add(created, Path::new(extra), handled_fs)?;
            }
        }
    }
    let status = created.restrict_self().map_err(landlock_error)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SandboxError::unsupported(
            Feature::Landlock,
            "Landlock is not enforced by this kernel",
        ));
    }
    Ok(abi)
}

/// Adds a rule for `path`, skipping paths that do not exist. A file gets only file rights.
fn add(
    created: landlock::RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<landlock::RulesetCreated, SandboxError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(created);
    };
    let access = if meta.is_dir() {
        access
    } else {
        access & AccessFs::from_file(TARGET)
    };
    let Ok(fd) = PathFd::new(path) else {
        return Ok(created);
    };
    created
        .add_rule(PathBeneath::new(fd, access))
        .map_err(landlock_error)
}
