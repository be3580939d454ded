//! The sandbox's mounts, in its own mount namespace: everything made private first (nothing
//! propagates back to the host), then pinned paths (bound over themselves), read-only paths
//! (bound over themselves, then remounted read-only), masks (an empty read-only file or
//! directory bound over each), and a new `/proc` for the PID namespace.
//!
//! The empty file and directory come from a small tmpfs mounted over `/proc` for the time of
//! the setup: `/proc` is never above a path the sandbox protects, and it is covered by the new
//! procfs (or uncovered again) before the command runs.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sys::statvfs::{statvfs, FsFlags};

use crate::policy::SandboxPolicy;
use crate::SandboxError;

const STAGING: &str = "/proc";
const EMPTY_FILE: &str = "/proc/empty";
const EMPTY_DIR: &str = "/proc/empty.d";

/// Mounts what `policy` asks for; `new_proc`: mount a procfs of the (new) PID namespace.
pub fn apply(policy: &SandboxPolicy, new_proc: bool) -> Result<(), SandboxError> {
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| SandboxError::setup("make the mounts private", e))?;
    for path in &policy.pinned_paths {
        if exists(path) {
            bind(path, path, "pin")?;
        }
    }
    for path in &policy.read_only_paths {
        if exists(path) {
            bind(path, path, "bind read-only")?;
            remount_read_only(path, MsFlags::empty())?;
        }
    }
    if !policy.masked_paths.is_empty() {
        mask_all(&policy.masked_paths)?;
    }
    if new_proc {
        mount(
            Some("proc"),
            "/proc",
            Some("proc"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            None::<&str>,
        )
        .map_err(|e| SandboxError::setup("mount /proc for the PID namespace", e))?;
    }
    Ok(())
}

fn exists(path: &Path) -> bool {
    std::fs::metadata(path).is_ok()
}

fn bind(source: &Path, target: &Path, what: &str) -> Result<(), SandboxError> {
    mount(
        Some(source),
        target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(|e| SandboxError::setup(format!("{what} {}", target.display()), e))
}

/// Remounts a bind mount read-only. A mount inherited from the host keeps its locked flags
/// (nosuid, nodev, noexec, atime), which a remount inside a user namespace must repeat.
fn remount_read_only(path: &Path, extra: MsFlags) -> Result<(), SandboxError> {
    let mut flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | extra;
    if let Ok(stat) = statvfs(path) {
        let found = stat.flags();
        for (fs, ms) in [
            (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
            (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
            (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
            (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
            (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
            (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
        ] {
            if found.contains(fs) {
                flags |= ms;
            }
        }
    }
    mount(None::<&str>, path, None::<&str>, flags, None::<&str>)
        .map_err(|e| SandboxError::setup(format!("remount {} read-only", path.display()), e))
}

/// Mounts an empty file or directory over every masked path (parents first; a path below a
/// masked directory is gone already).
fn mask_all(paths: &[PathBuf]) -> Result<(), SandboxError> {
    mount(
        Some("tmpfs"),
        STAGING,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        Some("size=16k,mode=0755"),
    )
    .map_err(|e| SandboxError::setup("mount the staging tmpfs", e))?;
    let result = (|| {
        std::fs::write(EMPTY_FILE, b"")
            .map_err(|e| SandboxError::setup("make the empty file", e))?;
        std::fs::set_permissions(EMPTY_FILE, std::fs::Permissions::from_mode(0o444))
            .map_err(|e| SandboxError::setup("make the empty file", e))?;
        std::fs::DirBuilder::new()
            .mode(0o555)
            .create(EMPTY_DIR)
            .map_err(|e| SandboxError::setup("make the empty directory", e))?;
        let mut sorted: Vec<&PathBuf> = paths.iter().collect();
        sorted.sort_by_key(|p| p.components().count());
        for path in sorted {
            let Ok(meta) = std::fs::metadata(path) else {
                // Gone, or below a directory masked already: nothing to hide.
                continue;
            };
            let source = if meta.is_dir() { EMPTY_DIR } else { EMPTY_FILE };
            mount(
                Some(source),
                path.as_path(),
                None::<&str>,
                MsFlags::MS_BIND,
                None::<&str>,
            )
            .map_err(|e| SandboxError::setup(format!("mask {}", path.display()), e))?;
            remount_read_only(
                path,
                MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            )?;
        }
        Ok(())
    })();
    umount2(STAGING, MntFlags::MNT_DETACH)
        .map_err(|e| SandboxError::setup("unmount the staging tmpfs", e))?;
    result
}
