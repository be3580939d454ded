//! Writes inside a checked directory: staged temporary files, files moved aside, the
//! directories made for a write, and the directory that holds a verdict's file.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rustix::fs::OFlags;

use super::{access, sys, Dir, FsError, Location, Workspace};
use crate::model::{PathAnchor, PathVerdict};

/// A short name part that no other temporary file of this process had, and that another
/// process is unlikely to pick (its id and the time go into it).
pub(super) fn unique() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{:x}{:x}{count:x}", std::process::id(), nanos)
}

/// A temporary file written beside its target, not yet in place.
#[derive(Debug)]
pub struct StagedFile {
    pub(super) dir: Arc<OwnedFd>,
    pub(super) temp: OsString,
    pub(super) target: OsString,
    pub(super) done: bool,
}

impl StagedFile {
    /// Renames the temporary file over the target (atomic). On failure it is deleted.
    pub fn persist(mut self) -> Result<(), FsError> {
        sys::rename(self.dir.as_fd(), &self.temp, &self.target).map_err(FsError::Io)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if !self.done {
            let _ = sys::remove_file(self.dir.as_fd(), &self.temp);
        }
    }
}

/// A file moved aside by [`Dir::move_aside`].
#[derive(Debug)]
pub struct Backup {
    pub(super) dir: Arc<OwnedFd>,
    pub(super) backup: OsString,
    pub(super) name: OsString,
    pub(super) done: bool,
}

impl Backup {
    /// Puts the file back under its name.
    pub fn restore(mut self) -> Result<(), FsError> {
        sys::rename(self.dir.as_fd(), &self.backup, &self.name).map_err(FsError::Io)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Backup {
    /// The move is final: the backup goes.
    fn drop(&mut self) {
        if !self.done {
            let _ = sys::remove_file(self.dir.as_fd(), &self.backup);
        }
    }
}

/// The directories made for a write, deepest last; [`CreatedDirs::remove`] removes the ones
/// that are still empty.
#[derive(Debug, Default)]
pub struct CreatedDirs {
    pub(super) dirs: Vec<(Arc<OwnedFd>, OsString)>,
}

impl CreatedDirs {
    /// Removes the created directories that are (still) empty, deepest first.
    pub fn remove(self) {
        for (parent, name) in self.dirs.into_iter().rev() {
            // Not empty (someone else wrote there) or already gone: leave it.
            let _ = sys::remove_dir(parent.as_fd(), &name);
        }
    }

    /// Adds the directories of another write (for a change of several files).
    pub fn extend(&mut self, other: CreatedDirs) {
        self.dirs.extend(other.dirs);
    }

    /// Whether any directory was made.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }
}

/// Whether a location is inside the `.git` directory of a root (or of a repository nested in
/// it): hooks and configuration there run code, so the file tools never write there.
fn is_in_git_dir(location: &Location) -> bool {
    match location {
        Location::Inside { relative, .. } => relative
            .parent()
            .into_iter()
            .flat_map(Path::components)
            .any(|c| c.as_os_str().eq_ignore_ascii_case(".git")),
        Location::Outside(_) => false,
    }
}

/// See [`Workspace::parent_dir`].
pub(super) fn parent_dir<'w>(
    workspace: &'w Workspace,
    verdict: &PathVerdict,
    create: bool,
) -> Result<(Dir<'w>, OsString, CreatedDirs), FsError> {
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
    let start = match &verdict.anchor {
        Some(anchor) => pinned_start(workspace, verdict, anchor)?,
        None => unpinned_start(workspace, verdict, create)?,
    };
    let Start {
        fd,
        beneath,
        opened,
        mut parts,
        pinned,
    } = start;
    let name = parts.pop().ok_or(FsError::IsADirectory)?;
    let location = workspace.location_of(&fd, beneath, &opened)?;
    let stat = sys::stat(fd.as_fd()).map_err(FsError::Io)?;
    workspace.enforce(&verdict.path, verdict.inside_workspace, &location, &stat)?;
    let mut dir = Dir::new(
        workspace,
        fd,
        &stat,
        location,
        verdict.inside_workspace,
        verdict.path.clone(),
    );
    let mut created = CreatedDirs::default();
    for part in &parts {
        match descend(&dir, part, create, &mut created) {
            Ok(next) => dir = next,
            // No link is followed below an anchor: one there now means the path changed.
            Err(FsError::Refused { path }) if pinned => {
                created.remove();
                return Err(FsError::Changed { path });
            }
            Err(e) => {
                created.remove();
                return Err(e);
            }
        }
    }
    let target = dir.child_location(Path::new(&name));
    if workspace.is_ignored(&target, false) {
        created.remove();
        return Err(FsError::Ignored {
            path: verdict.path.clone(),
        });
    }
    if is_in_git_dir(&target) {
        created.remove();
        return Err(FsError::Protected {
            path: verdict.path.clone(),
        });
    }
    Ok((dir, name, created))
}

/// Where [`parent_dir`] starts: an opened directory, the root it was opened beneath, its
/// path, and the names from it to the target (directories, then the file's name).
struct Start {
    fd: OwnedFd,
    beneath: Option<usize>,
    opened: PathBuf,
    parts: Vec<OsString>,
    pinned: bool,
}

/// The start of a write for a pinned verdict: its anchor, when the target did not exist (the
/// rest of the path is made below it); else the directory at the target's real path, which
/// must still hold the very file the verdict saw under its name.
fn pinned_start(
    workspace: &Workspace,
    verdict: &PathVerdict,
    anchor: &PathAnchor,
) -> Result<Start, FsError> {
    let rest = access::anchor_rest(verdict, anchor)?;
    if !rest.as_os_str().is_empty() {
        let (fd, beneath, _) = workspace.open_anchor(verdict, anchor)?;
        return Ok(Start {
            fd,
            beneath,
            opened: PathBuf::from(&anchor.path),
            parts: rest.iter().map(OsString::from).collect(),
            pinned: true,
        });
    }
    let target = Path::new(&anchor.path);
    let (Some(name), Some(parent)) = (target.file_name(), target.parent()) else {
        return Err(FsError::IsADirectory);
    };
    let changed = || FsError::Changed {
        path: verdict.path.clone(),
    };
    let (fd, beneath) = workspace
        .open_real(parent, OFlags::DIRECTORY)
        .map_err(|e| access::changed_or(e, &verdict.path))?;
    let entry = sys::stat_entry(fd.as_fd(), name).map_err(|_| changed())?;
    if sys::identity(&entry) != (anchor.device, anchor.inode) {
        return Err(changed());
    }
    if sys::file_type(&entry).is_dir() {
        return Err(FsError::IsADirectory);
    }
    Ok(Start {
        fd,
        beneath,
        opened: parent.to_path_buf(),
        parts: vec![name.to_os_string()],
        pinned: true,
    })
}

/// The start of a write for a verdict without an anchor (from a host that pins nothing): the
/// deepest existing directory of the target's parent, opened by its path and checked to be
/// still at that real path.
fn unpinned_start(
    workspace: &Workspace,
    verdict: &PathVerdict,
    create: bool,
) -> Result<Start, FsError> {
    let target = Path::new(if verdict.resolved.is_empty() {
        &verdict.absolute
    } else {
        &verdict.resolved
    });
    let (Some(name), Some(parent)) = (target.file_name(), target.parent()) else {
        return Err(FsError::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path has no file name",
        )));
    };
    let mut parts: Vec<OsString> = vec![name.to_os_string()];
    let mut existing = parent.to_path_buf();
    let (fd, beneath) = loop {
        match workspace.open_lexical(&existing, OFlags::DIRECTORY) {
            Ok(opened) => break opened,
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                match (existing.file_name().map(OsString::from), existing.parent()) {
                    (Some(part), Some(up)) => {
                        parts.push(part);
                        existing = up.to_path_buf();
                    }
                    _ => return Err(FsError::NotFound),
                }
            }
            Err(e) => return Err(FsError::from_io(e, &verdict.path)),
        }
    };
    if sys::real_path(fd.as_fd()).map_err(FsError::Io)? != existing {
        return Err(FsError::Changed {
            path: verdict.path.clone(),
        });
    }
    parts.reverse();
    Ok(Start {
        fd,
        beneath,
        opened: existing,
        parts,
        pinned: false,
    })
}

/// The subdirectory `part` of `dir` (no symbolic link followed), made first when it is
/// missing and `create` is set (and then listed in `created`).
fn descend<'w>(
    dir: &Dir<'w>,
    part: &OsString,
    create: bool,
    created: &mut CreatedDirs,
) -> Result<Dir<'w>, FsError> {
    match dir.subdir(part) {
        Err(FsError::NotFound) if create => {
            match sys::make_dir(dir.fd.as_fd(), part) {
                Ok(()) => created.dirs.push((dir.fd.clone(), part.clone())),
                // Made meanwhile by someone else: used as it is, never removed.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(FsError::from_io(e, &dir.label)),
            }
            dir.subdir(part)
        }
        other => other,
    }
}
