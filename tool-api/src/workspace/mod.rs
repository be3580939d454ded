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
//!
//! `openat2` was chosen over cap-std because the capability needs more than confinement to one
//! directory: several roots, approved paths outside them, `.clineignore` on the real target,
//! and the kernel's own answer to where a handle is; cap-std answers the first only, and
//! refuses the rest. `openat2` needs Linux 5.6; on an older kernel every access fails with an
//! error that says so.

mod dir;
mod error;
mod file;
pub mod ignore;
mod links;
mod sys;

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rustix::fs::{OFlags, Stat};

pub use dir::{Backup, CreatedDirs, Dir, DirEntry, EntryKind, Followed, StagedFile};
pub use error::FsError;
pub use file::OpenedFile;
pub use ignore::ClineIgnore;

use crate::model::{PathVerdict, TaskContext, WorkspaceRoot};

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
    /// A workspace with one root, `cwd` (made absolute against the process's directory), and
    /// the root's `.clineignore`. Fails when the directory cannot be opened.
    pub fn new(cwd: &Path) -> io::Result<Self> {
        let cwd = if cwd.is_absolute() {
            normalize(cwd)
        } else {
            normalize(&std::env::current_dir()?.join(cwd))
        };
        let name = cwd
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "/".to_string());
        let ignore = Arc::new(ClineIgnore::load(&cwd));
        let workspace = Self {
            roots: vec![Root::new(name, cwd, ignore)],
        };
        workspace.roots[0].handle()?;
        Ok(workspace)
    }

    /// The workspace a task context describes (what a plugin sees): its roots and the rules
    /// the host read for them. Roots are opened on first use.
    pub fn from_context(task: &TaskContext) -> Self {
        let mut roots: Vec<Root> = task
            .workspace_roots
            .iter()
            .map(|root| {
                let path = normalize(Path::new(&root.path));
                let ignore = match &root.clineignore {
                    Some(text) => compiled_rules(&path, text),
                    None => Arc::new(ClineIgnore::default()),
                };
                Root::new(root.name.clone(), path, ignore)
            })
            .collect();
        if roots.is_empty() {
            let cwd = normalize(Path::new(&task.cwd));
            let name = cwd
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            roots.push(Root::new(name, cwd, Arc::new(ClineIgnore::default())));
        }
        Self { roots }
    }

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

    /// The primary root's `.clineignore` rules.
    pub fn ignore(&self) -> &ClineIgnore {
        &self.roots[0].ignore
    }

    /// Resolves `path` lexically, as Cline (Node's `path.resolve`) does: a `@root:` hint selects
    /// a root by name, other relative paths resolve against `cwd`, `..` removes the previous
    /// component without looking at the disk.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let (base, rest) = self.split_root_hint(path);
        normalize(&base.join(rest))
    }

    fn split_root_hint<'p>(&self, path: &'p str) -> (&Path, &'p str) {
        if let Some(hinted) = path.strip_prefix('@') {
            if let Some((hint, rest)) = hinted.split_once(':') {
                let hint = hint.trim();
                if let Some(root) = self.roots.iter().find(|r| r.name == hint) {
                    return (&root.path, rest);
                }
            }
        }
        (self.cwd(), path)
    }

    /// Everything the policies say about `path`: where it really leads, whether that is inside
    /// the workspace, and whether `.clineignore` blocks the path as typed or its target.
    pub fn verdict(&self, path: &str) -> PathVerdict {
        let absolute = self.resolve(path);
        let (resolved, refused) = match self.real_target(&absolute) {
            Ok(real) => (real, false),
            Err(e) => (absolute.clone(), sys::is_link_refused(&e)),
        };
        let location = self.locate(&resolved);
        // As in Cline, a path is matched as a directory only when it is written with a trailing
        // slash; the files below an ignored directory are matched through their parents.
        let typed_dir = path.ends_with('/') || path.ends_with('\\');
        // Backslashes count as separators for the rules, as in Cline's matcher.
        let typed = self.resolve(&path.replace('\\', "/"));
        let typed_rule = self
            .lexical_root(&typed)
            .and_then(|(root, rel)| self.roots[root].ignore.blocking_rule(&rel, typed_dir));
        let real_rule = match &location {
            Location::Inside { root, relative } => {
                self.roots[*root].ignore.blocking_rule(relative, typed_dir)
            }
            Location::Outside(_) => None,
        };
        let ignore_rule = typed_rule.or(real_rule);
        PathVerdict {
            path: path.to_string(),
            absolute: absolute.to_string_lossy().into_owned(),
            resolved: resolved.to_string_lossy().into_owned(),
            inside_workspace: location.is_inside() && !refused,
            ignored: ignore_rule.is_some(),
            display: self.display(&absolute),
            refused,
            ignore_rule,
        }
    }

    /// Cline's "readable path": relative to cwd with `/` separators when inside it, the
    /// directory's name when it is cwd, absolute otherwise.
    pub fn display(&self, absolute: &Path) -> String {
        let cwd = self.cwd();
        match absolute.strip_prefix(cwd) {
            Ok(rel) if rel.as_os_str().is_empty() => cwd
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| cwd.to_string_lossy().into_owned()),
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => absolute.to_string_lossy().into_owned(),
        }
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

    /// Opens `absolute` with `O_PATH | extra`: beneath its root's handle when it is lexically
    /// inside one (falling back to a resolution from `/` when a link leads out, so that the
    /// caller can see where), else from `/`. Returns the handle and the root it was opened
    /// beneath, if any.
    fn open_lexical(&self, absolute: &Path, extra: OFlags) -> io::Result<(OwnedFd, Option<usize>)> {
        if let Some((root, rel)) = self.lexical_root(absolute) {
            let handle = self.roots[root].handle()?;
            match sys::open_path(Some(handle.fd.as_fd()), &rel, extra, sys::Resolve::Beneath) {
                Err(e) if sys::is_escape(&e) => {}
                other => return other.map(|fd| (fd, Some(root))),
            }
        }
        sys::open_path(None, absolute, extra, sys::Resolve::Anywhere).map(|fd| (fd, None))
    }

    /// Where `absolute` really leads: the real path of its longest existing prefix, followed by
    /// the components that do not exist yet.
    fn real_target(&self, absolute: &Path) -> io::Result<PathBuf> {
        let mut existing = absolute.to_path_buf();
        let mut rest: Vec<OsString> = Vec::new();
        loop {
            match self.open_lexical(&existing, OFlags::empty()) {
                Ok((fd, _)) => {
                    let mut real = sys::real_path(fd.as_fd())?;
                    for part in rest.iter().rev() {
                        real.push(part);
                    }
                    return Ok(real);
                }
                Err(e) if sys::is_missing(&e) || e.kind() == io::ErrorKind::PermissionDenied => {
                    match (existing.file_name().map(OsString::from), existing.parent()) {
                        (Some(name), Some(parent)) => {
                            rest.push(name);
                            existing = parent.to_path_buf();
                        }
                        _ => return Ok(absolute.to_path_buf()),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Opens the target of a verdict (`O_PATH | extra`) and checks what was opened against it:
    /// still inside the workspace if it was approved as inside, not blocked by `.clineignore`.
    fn open_checked(
        &self,
        verdict: &PathVerdict,
        extra: OFlags,
    ) -> Result<(OwnedFd, Location, Stat), FsError> {
        if verdict.refused {
            return Err(FsError::Refused {
                path: verdict.path.clone(),
            });
        }
        if verdict.ignored {
            return Err(FsError::Ignored {
                path: verdict.path.clone(),
            });
        }
        let target = Path::new(if verdict.resolved.is_empty() {
            &verdict.absolute
        } else {
            &verdict.resolved
        });
        let (fd, beneath) = self
            .open_lexical(target, extra)
            .map_err(|e| FsError::from_io(e, &verdict.path))?;
        let stat = sys::stat(fd.as_fd()).map_err(FsError::Io)?;
        let location = self.location_of(&fd, beneath, target)?;
        self.enforce(&verdict.path, verdict.inside_workspace, &location, &stat)?;
        Ok((fd, location, stat))
    }

    /// Where an opened handle is. Beneath a root without rules the opened path is exact enough
    /// (the kernel kept it inside); otherwise the kernel is asked.
    fn location_of(
        &self,
        fd: &OwnedFd,
        beneath: Option<usize>,
        opened: &Path,
    ) -> Result<Location, FsError> {
        if let Some(root) = beneath {
            if !self.roots[root].ignore.is_active() {
                if let Some((_, relative)) = self.lexical_root(opened) {
                    return Ok(Location::Inside { root, relative });
                }
            }
        }
        Ok(self.locate(&sys::real_path(fd.as_fd()).map_err(FsError::Io)?))
    }

    /// The checks on what was really opened.
    fn enforce(
        &self,
        path: &str,
        must_be_inside: bool,
        location: &Location,
        stat: &Stat,
    ) -> Result<(), FsError> {
        match location {
            Location::Outside(_) if must_be_inside => Err(FsError::Escaped {
                path: path.to_string(),
            }),
            Location::Outside(_) => Ok(()),
            Location::Inside { root, relative } => {
                let is_dir = sys::file_type(stat).is_dir();
                let rules = &self.roots[*root].ignore;
                // Matched as the host's verdicts match (see `verdict`): as a file name.
                let blocked = rules.blocks(relative, false)
                    || (!is_dir
                        && stat.st_nlink > 1
                        && rules.is_active()
                        && links::is_ignored_inode(self, *root, stat));
                if blocked {
                    Err(FsError::Ignored {
                        path: path.to_string(),
                    })
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Opens the regular file a verdict names, for reading.
    pub fn open_file(&self, verdict: &PathVerdict) -> Result<OpenedFile, FsError> {
        let (fd, _, stat) = self.open_checked(verdict, OFlags::empty())?;
        OpenedFile::from_path_handle(fd, stat)
    }

    /// Opens the directory a verdict names, to list or walk it.
    pub fn open_dir(&self, verdict: &PathVerdict) -> Result<Dir<'_>, FsError> {
        let (fd, location, stat) = self.open_checked(verdict, OFlags::empty())?;
        if !sys::file_type(&stat).is_dir() {
            return Err(FsError::NotADirectory);
        }
        Ok(Dir::new(
            self,
            fd,
            &stat,
            location,
            verdict.inside_workspace,
            verdict.path.clone(),
        ))
    }

    /// The directory that will hold the file a verdict names, and the file's name in it; with
    /// `create`, missing directories are made (and listed in [`CreatedDirs`], to be removed
    /// again if the write fails). The file itself is checked against `.clineignore` here.
    pub fn parent_dir(
        &self,
        verdict: &PathVerdict,
        create: bool,
    ) -> Result<(Dir<'_>, OsString, CreatedDirs), FsError> {
        dir::parent_dir(self, verdict, create)
    }

    /// Writes `bytes` to the file a verdict names, atomically: a temporary file in the same
    /// directory, renamed over the target. Missing directories are created (and removed again
    /// when the write fails); an existing file keeps its permissions; a read-only one is refused.
    pub fn write_file(&self, verdict: &PathVerdict, bytes: &[u8]) -> Result<(), FsError> {
        let (dir, name, created) = self.parent_dir(verdict, true)?;
        let written = dir.replace(&name, bytes);
        if written.is_err() {
            created.remove();
        }
        written
    }

    fn root(&self, index: usize) -> &Root {
        &self.roots[index]
    }
}

/// The compiled rules of a root, shared between the calls that carry the same text (plugins
/// build a workspace per call; the matcher is built once per text).
fn compiled_rules(root: &Path, text: &str) -> Arc<ClineIgnore> {
    type Cache = Mutex<Vec<(PathBuf, String, Arc<ClineIgnore>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, _, rules)) = cache.iter().find(|(p, t, _)| p == root && t == text) {
        return rules.clone();
    }
    let rules = Arc::new(ClineIgnore::from_expanded(root, text));
    if cache.len() >= 8 {
        cache.remove(0);
    }
    cache.push((root.to_path_buf(), text.to_string(), rules.clone()));
    rules
}

/// Removes `.` and resolves `..` lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests;
