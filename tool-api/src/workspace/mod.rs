//! The workspace capability: the roots of a task, what `.clineignore` blocks, and file access
//! whose checks hold for the file really reached.
//!
//! The host and the plugins share this module. The host makes a [`PathVerdict`] for every path
//! of a call ([`Workspace::verdict`]): where the path really leads (symbolic links followed as
//! far as it exists), whether that is inside a root, and whether `.clineignore` blocks the path
//! as typed or the file it reaches. Approval is decided on that verdict. A plugin then reaches
//! the file through the same verdict ([`Workspace::open_file`], [`Workspace::open_dir`],
//! [`Workspace::parent_dir`]), and the checks are made again on what the kernel actually
//! opened, so that a symbolic link created or swapped in the meantime changes nothing:
//!
//! - A path inside a root is opened beneath the root's directory handle with `openat2(2)` and
//!   `RESOLVE_BENEATH`: no `..`, absolute link or link to the outside can leave the root, at
//!   any step, whatever happens to the tree while the path is resolved.
//! - Magic links (`/proc/*/root`, `/proc/*/cwd`, `/proc/*/fd/*`, `/dev/fd/*`) are refused by
//!   the kernel (`RESOLVE_NO_MAGICLINKS`), everywhere.
//! - What was opened is located by its handle (`/proc/self/fd/N`): a file approved as inside
//!   the workspace that turns out to be outside is refused, and `.clineignore` is applied to the
//!   real path relative to its root (and, for a file with several hard links, to the other names
//!   the same file has among the ignored ones).
//! - Only regular files are read, after their size is checked; files are opened `O_PATH` first,
//!   which has no side effect on a FIFO or a device.
//! - Directories are listed and walked through handles, one component at a time, and writes
//!   happen inside the handle of the directory that was checked (a temporary file, then a
//!   rename in that same directory).
//! - A verdict is pinned to what it saw ([`PathAnchor`](crate::model::PathAnchor): the deepest
//!   existing component of the real target, by device and inode), and the target is reached
//!   through that anchor and below it without following any link, or not at all: a component
//!   replaced or made a link after the verdict (while its approval question waited, say) is
//!   [`FsError::Changed`], on which the host checks the path and asks again.
//!
//! `openat2` was chosen over cap-std because the capability needs more than confinement to one
//! directory: several roots, approved paths outside them, `.clineignore` on the real target,
//! and the kernel's own answer to where a handle is; cap-std answers the first only, and
//! refuses the rest. `openat2` needs Linux 5.6; on an older kernel every access fails with an
//! error that says so.

mod access;
mod dir;
mod error;
mod file;
pub mod ignore;
mod links;
mod parent;
mod paths;
mod roots;
mod staging;
mod sys;
mod verdict;

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustix::fs::OFlags;

pub use dir::{Dir, DirEntry, EntryKind, Followed};
pub use error::FsError;
pub use file::OpenedFile;
pub use ignore::ClineIgnore;
pub use paths::normalize;
pub use roots::{parse_command_hint, parse_hint, RootSpec};
pub use staging::{Backup, CreatedDirs, StagedFile};

use crate::model::WorkspaceRoot;

/// Where an opened file or directory really is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// Inside a root: its index and the path relative to it (no `..`, `/`-separated).
    Inside {
        /// The root's index in the workspace.
        root: usize,
        /// The path relative to the root's real path.
        relative: PathBuf,
    },
    /// Outside every root: the real path.
    Outside(PathBuf),
}

impl Location {
    /// The location of `name` inside this directory.
    pub fn join(&self, name: impl AsRef<Path>) -> Self {
        match self {
            Self::Inside { root, relative } => Self::Inside {
                root: *root,
                relative: relative.join(name),
            },
            Self::Outside(real) => Self::Outside(real.join(name)),
        }
    }

    /// Whether it is inside a root.
    pub fn is_inside(&self) -> bool {
        matches!(self, Self::Inside { .. })
    }
}

/// A root's directory handle and its real path, opened on first use.
#[derive(Debug)]
struct RootHandle {
    fd: OwnedFd,
    real: PathBuf,
}

/// One workspace root.
#[derive(Debug)]
struct Root {
    name: String,
    /// As configured: absolute, with `.` and `..` removed lexically.
    path: PathBuf,
    ignore: Arc<ClineIgnore>,
    handle: OnceLock<Result<RootHandle, String>>,
    /// The files with several hard links that `.clineignore` blocks, found on first need.
    ignored_inodes: OnceLock<Option<std::collections::HashSet<(u64, u64)>>>,
}

impl Root {
    fn new(name: String, path: PathBuf, ignore: Arc<ClineIgnore>) -> Self {
        Self {
            name,
            path,
            ignore,
            handle: OnceLock::new(),
            ignored_inodes: OnceLock::new(),
        }
    }

    fn handle(&self) -> io::Result<&RootHandle> {
        let opened = self.handle.get_or_init(|| {
            let fd = sys::open_path(None, &self.path, OFlags::DIRECTORY, sys::Resolve::Anywhere)
                .map_err(|e| {
                    format!(
                        "cannot open the workspace root {}: {e}",
                        self.path.display()
                    )
                })?;
            let real = sys::real_path(fd.as_fd()).map_err(|e| {
                format!(
                    "cannot locate the workspace root {}: {e}",
                    self.path.display()
                )
            })?;
            Ok(RootHandle { fd, real })
        });
        opened.as_ref().map_err(|e| io::Error::other(e.clone()))
    }
}

/// The workspace of a task: its roots (the first is the primary, `cwd`), their `.clineignore`
/// rules, and the confined access to their files.
#[derive(Debug)]
pub struct Workspace {
    roots: Vec<Root>,
}

impl Workspace {
    /// The primary working directory.
    pub fn cwd(&self) -> &Path {
        &self.roots[0].path
    }

    /// The roots, for the task context (with their `.clineignore` rules).
    pub fn roots(&self) -> Vec<WorkspaceRoot> {
        self.roots
            .iter()
            .map(|r| WorkspaceRoot {
                name: r.name.clone(),
                path: r.path.to_string_lossy().into_owned(),
                clineignore: r.ignore.expanded_text().map(str::to_string),
            })
            .collect()
    }

    /// The roots as MCP's `roots/list` result (`{"roots": [{"uri", "name"}]}`): what a host or
    /// a plugin answers a server that asks for them.
    pub fn mcp_roots(&self) -> serde_json::Value {
        let roots: Vec<serde_json::Value> = self
            .roots
            .iter()
            .map(|root| {
                let uri = url::Url::from_file_path(&root.path)
                    .map(String::from)
                    .unwrap_or_else(|()| format!("file://{}", root.path.display()));
                serde_json::json!({"uri": uri, "name": root.name})
            })
            .collect();
        serde_json::json!({"roots": roots})
    }

    /// The primary root's `.clineignore` rules.
    pub fn ignore(&self) -> &ClineIgnore {
        &self.roots[0].ignore
    }

    /// Where a real path (symbolic links resolved) is: inside which root, or outside.
    pub fn locate(&self, real: &Path) -> Location {
        let best = self
            .roots
            .iter()
            .enumerate()
            .filter_map(|(i, root)| {
                let handle = root.handle().ok()?;
                let relative = real.strip_prefix(&handle.real).ok()?;
                Some((i, handle.real.components().count(), relative.to_path_buf()))
            })
            .max_by_key(|(_, depth, _)| *depth);
        match best {
            Some((root, _, relative)) => Location::Inside { root, relative },
            None => Location::Outside(real.to_path_buf()),
        }
    }

    /// Whether a location is inside a root that has `.clineignore` rules.
    fn has_rules(&self, location: &Location) -> bool {
        match location {
            Location::Inside { root, .. } => self.roots[*root].ignore.is_active(),
            Location::Outside(_) => true,
        }
    }

    /// Whether `.clineignore` blocks a location.
    pub fn is_ignored(&self, location: &Location, is_dir: bool) -> bool {
        match location {
            Location::Inside { root, relative } => {
                self.roots[*root].ignore.blocks(relative, is_dir)
            }
            Location::Outside(_) => false,
        }
    }

    /// Whether `.clineignore` blocks an absolute path as written (without looking at the disk):
    /// the check of a path as typed, for names a walk reports.
    pub fn blocks_as_typed(&self, absolute: &Path, is_dir: bool) -> bool {
        self.lexical_root(absolute)
            .is_some_and(|(root, rel)| self.roots[root].ignore.blocks(&rel, is_dir))
    }

    /// The root an absolute lexical path is under (its configured or its real path), and the
    /// path relative to it.
    fn lexical_root(&self, absolute: &Path) -> Option<(usize, PathBuf)> {
        self.roots.iter().enumerate().find_map(|(i, root)| {
            if let Ok(rel) = absolute.strip_prefix(&root.path) {
                return Some((i, rel.to_path_buf()));
            }
            let real = &root.handle().ok()?.real;
            absolute
                .strip_prefix(real)
                .ok()
                .map(|rel| (i, rel.to_path_buf()))
        })
    }

    fn root(&self, index: usize) -> &Root {
        &self.roots[index]
    }
}

#[cfg(test)]
mod pinned_tests;
#[cfg(test)]
mod tests;
