//! Reaching what a verdict names: every open beneath the root's handle (or from `/` for an
//! approved outside path), and checked again on what the kernel opened.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{OFlags, Stat};

use super::{links, staging, sys, CreatedDirs, Dir, FsError, Location, OpenedFile, Workspace};
use crate::model::PathVerdict;

impl Workspace {
    /// Opens `absolute` with `O_PATH | extra`: beneath its root's handle when it is lexically
    /// inside one (falling back to a resolution from `/` when a link leads out, so that the
    /// caller can see where), else from `/`. Returns the handle and the root it was opened
    /// beneath, if any.
    pub(super) fn open_lexical(
        &self,
        absolute: &Path,
        extra: OFlags,
    ) -> io::Result<(OwnedFd, Option<usize>)> {
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
    pub(super) fn real_target(&self, absolute: &Path) -> io::Result<PathBuf> {
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
    pub(super) fn open_checked(
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
    pub(super) fn location_of(
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
    pub(super) fn enforce(
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
        staging::parent_dir(self, verdict, create)
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
