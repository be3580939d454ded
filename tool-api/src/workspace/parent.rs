//! The directory that holds a verdict's file, reached (and made, for a write) from the
//! verdict's anchor or, without one, from the deepest existing directory of its path; the
//! file's own name checked against `.clineignore` and `.git` there.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::OFlags;

use super::access::{anchor_rest, changed_or};
use super::staging::CreatedDirs;
use super::{sys, Dir, FsError, Location, Workspace};
use crate::model::{PathAnchor, PathVerdict};

impl Workspace {
    /// The directory that will hold the file a verdict names, and the file's name in it; with
    /// `create`, missing directories are made (and listed in [`CreatedDirs`], to be removed
    /// again if the write fails). The file itself is checked against `.clineignore` here.
    pub fn parent_dir(
        &self,
        verdict: &PathVerdict,
        create: bool,
    ) -> Result<(Dir<'_>, OsString, CreatedDirs), FsError> {
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
            Some(anchor) => pinned_start(self, verdict, anchor)?,
            None => unpinned_start(self, verdict, create)?,
        };
        let Start {
            fd,
            beneath,
            opened,
            mut parts,
            pinned,
        } = start;
        let name = parts.pop().ok_or(FsError::IsADirectory)?;
        let location = self.location_of(&fd, beneath, &opened)?;
        let stat = sys::stat(fd.as_fd()).map_err(FsError::Io)?;
        self.enforce(&verdict.path, verdict.inside_workspace, &location, &stat)?;
        let mut dir = Dir::new(
            self,
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
        if self.is_ignored(&target, false) {
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

/// Where [`Workspace::parent_dir`] starts: an opened directory, the root it was opened beneath, its
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
    let rest = anchor_rest(verdict, anchor)?;
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
        .map_err(|e| changed_or(e, &verdict.path))?;
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
