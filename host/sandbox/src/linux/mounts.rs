//! The sandbox's mounts, in its own mount namespace: everything made private first (nothing
//! propagates back to the host), then the private temporary directories (a new tmpfs over
//! each, with the roots below it mounted back in place), pinned paths (bound over
//! themselves), read-only paths (bound over themselves, then remounted read-only), masks (an
//! empty read-only file or directory bound over each), and a new `/proc` for the PID
//! namespace.
//!
//! The empty file and directory come from a small tmpfs mounted over `/proc` for the time of
//! the setup: `/proc` is never above a path the sandbox protects, and it is covered by the new
//! procfs (or uncovered again) before the command runs.

use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sys::statvfs::{statvfs, FsFlags};

use crate::policy::{FilesystemMode, SandboxPolicy};
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
    if !policy.private_tmp.is_empty() {
        private_tmp(policy)?;
    }
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

/// Mounts an empty tmpfs over each private temporary directory that is not inside a
/// writable root (there it is the root's, and covering it would hide the root's files), and
/// mounts the paths below it that stay visible back in place: each is taken off as a copy of
/// its mounts (`open_tree`) before the tmpfs covers it, and moved onto an empty file or
/// directory of the same name in the tmpfs. A private directory inside another is made as an
/// empty directory in the outer one's tmpfs.
///
/// The private directory is writable (Landlock), and Landlock's rights reach every mount
/// below a directory: so a path mounted back that is not inside a writable root is remounted
/// read-only, after the writable roots inside it are bound over themselves (a mount of their
/// own keeps its rights).
fn private_tmp(policy: &SandboxPolicy) -> Result<(), SandboxError> {
    let writable_roots: Vec<PathBuf> = policy
        .writable_roots
        .iter()
        .filter_map(|r| r.canonicalize().ok())
        .collect();
    let inside_root = |dir: &Path| writable_roots.iter().any(|r| dir.starts_with(r));
    let mut dirs: Vec<PathBuf> = policy
        .private_tmp
        .iter()
        .filter_map(|d| d.canonicalize().ok())
        .filter(|d| d.is_dir() && !inside_root(d))
        .collect();
    dirs.sort_by_key(|d| d.components().count());
    dirs.dedup();
    // The working directory too: the command starts there.
    let cwd = std::env::current_dir().ok();
    let mut keep: Vec<PathBuf> = policy
        .writable_roots
        .iter()
        .chain(policy.readable_roots.iter().flatten())
        .chain(&policy.keep_visible)
        .chain(&cwd)
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    keep.sort_by_key(|p| p.components().count());
    let size = policy.limits.max_tmp_bytes.unwrap_or(DEFAULT_TMP_BYTES);
    let mut covered: Vec<PathBuf> = Vec::new();
    let mut mounted_back: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if covered.iter().any(|c| dir.starts_with(c)) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .map_err(|e| SandboxError::setup(format!("make {}", dir.display()), e))?;
            continue;
        }
        let mut kept: Vec<(PathBuf, bool, OwnedFd)> = Vec::new();
        for path in keep.iter().filter(|k| k.starts_with(&dir) && **k != dir) {
            if kept.iter().any(|(k, _, _)| path.starts_with(k)) {
                continue;
            }
            let tree = rustix::mount::open_tree(
                rustix::fs::CWD,
                path,
                rustix::mount::OpenTreeFlags::OPEN_TREE_CLONE
                    | rustix::mount::OpenTreeFlags::OPEN_TREE_CLOEXEC
                    | rustix::mount::OpenTreeFlags::AT_RECURSIVE,
            )
            .map_err(|e| SandboxError::setup(format!("keep {}", path.display()), e))?;
            kept.push((path.clone(), path.is_dir(), tree));
        }
        mount(
            Some("tmpfs"),
            dir.as_path(),
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(format!("size={size},mode=1777").as_str()),
        )
        .map_err(|e| SandboxError::setup(format!("mount a private {}", dir.display()), e))?;
        for (path, is_dir, tree) in kept {
            let parent = path.parent().unwrap_or(&dir);
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(parent)
                .and_then(|()| {
                    if is_dir {
                        std::fs::DirBuilder::new().mode(0o755).create(&path)
                    } else {
                        std::fs::write(&path, b"")
                    }
                })
                .map_err(|e| SandboxError::setup(format!("make {}", path.display()), e))?;
            rustix::mount::move_mount(
                &tree,
                "",
                rustix::fs::CWD,
                &path,
                rustix::mount::MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
            )
            .map_err(|e| SandboxError::setup(format!("mount {} back", path.display()), e))?;
            mounted_back.push(path);
        }
        covered.push(dir);
    }
    let confined = policy.filesystem != FilesystemMode::Off;
    for path in mounted_back.iter().filter(|p| confined && !inside_root(p)) {
        for root in &writable_roots {
            if root.starts_with(path) && root != path {
                bind(root, root, "keep writable")?;
            }
        }
        remount_read_only(path, MsFlags::empty())?;
    }
    Ok(())
}

/// The size of a private temporary directory when the policy names none.
const DEFAULT_TMP_BYTES: u64 = 1 << 30;

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
