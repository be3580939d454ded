//! Reaching what a verdict names: through what the verdict was pinned to (its anchor, checked
//! by identity), every open beneath the root's handle (or from `/` for an approved outside
//! path), and checked again on what the kernel opened.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{OFlags, Stat};

use super::{links, sys, Dir, FsError, Location, OpenedFile, Workspace};
use crate::model::{PathAnchor, PathVerdict};

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

    /// Opens a real path (as the kernel names it, so with no symbolic link in it) without
    /// following any link: beneath its root's handle when it is inside one, else from `/`.
    pub(super) fn open_real(
        &self,
        real: &Path,
        extra: OFlags,
    ) -> io::Result<(OwnedFd, Option<usize>)> {
        if let Some((root, rel)) = self.lexical_root(real) {
            let handle = self.roots[root].handle()?;
            return sys::open_path(
                Some(handle.fd.as_fd()),
                &rel,
                extra,
                sys::Resolve::BeneathNoLinks,
            )
            .map(|fd| (fd, Some(root)));
        }
        sys::open_path(None, real, extra, sys::Resolve::AnywhereNoLinks).map(|fd| (fd, None))
    }

    /// Where `absolute` really leads: the real path of its longest existing prefix, followed by
    /// the components that do not exist yet; and the anchor it is reached from.
    pub(super) fn real_target(&self, absolute: &Path) -> io::Result<(PathBuf, PathAnchor)> {
        let mut existing = absolute.to_path_buf();
        let mut rest: Vec<OsString> = Vec::new();
        loop {
            let found = match self.open_lexical(&existing, OFlags::empty()) {
                Ok((fd, _)) => match sys::real_path(fd.as_fd()) {
                    Ok(real) => Some((fd, real)),
                    // Removed since it was opened: as if it had not been there.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                    Err(e) => return Err(e),
                },
                Err(e) if sys::is_missing(&e) || e.kind() == io::ErrorKind::PermissionDenied => {
                    None
                }
                Err(e) => return Err(e),
            };
            if let Some((fd, real)) = found {
                let (device, inode) = sys::identity(&sys::stat(fd.as_fd())?);
                let anchor = PathAnchor {
                    path: real.to_string_lossy().into_owned(),
                    device,
                    inode,
                };
                let mut target = real;
                for part in rest.iter().rev() {
                    target.push(part);
                }
                return Ok((target, anchor));
            }
            match (existing.file_name().map(OsString::from), existing.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    existing = parent.to_path_buf();
                }
                _ => return Err(io::Error::from(io::ErrorKind::NotFound)),
            }
        }
    }

    /// Opens a pinned verdict's anchor by its real path, without following a link, and checks
    /// that it is what it was when the verdict was made (device and inode); returns it, the
    /// root it was opened beneath, and the rest of the target below it. A component on the way
    /// replaced, gone or made a link is [`FsError::Changed`].
    pub(super) fn open_anchor(
        &self,
        verdict: &PathVerdict,
        anchor: &PathAnchor,
    ) -> Result<(OwnedFd, Option<usize>, PathBuf), FsError> {
        let rest = anchor_rest(verdict, anchor)?;
        let (fd, beneath) = self
            .open_real(Path::new(&anchor.path), OFlags::empty())
            .map_err(|e| changed_or(e, &verdict.path))?;
        let stat = sys::stat(fd.as_fd()).map_err(FsError::Io)?;
        if sys::identity(&stat) != (anchor.device, anchor.inode) {
            return Err(FsError::Changed {
                path: verdict.path.clone(),
            });
        }
        Ok((fd, beneath, rest))
    }

    /// Opens the target of a verdict (`O_PATH`) and checks what was opened against it: the
    /// target reached from the verdict's anchor (else still at the real path the verdict
    /// names), still inside the workspace if it was approved as inside, not blocked by
    /// `.clineignore`.
    pub(super) fn open_checked(
        &self,
        verdict: &PathVerdict,
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
        let (fd, beneath, opened) = match &verdict.anchor {
            Some(anchor) => {
                let (dir, beneath, rest) = self.open_anchor(verdict, anchor)?;
                let fd = if rest.as_os_str().is_empty() {
                    dir
                } else {
                    sys::open_path(
                        Some(dir.as_fd()),
                        &rest,
                        OFlags::empty(),
                        sys::Resolve::BeneathNoLinks,
                    )
                    .map_err(|e| pinned_error(e, &verdict.path))?
                };
                (fd, beneath, Path::new(&anchor.path).join(rest))
            }
            None => self.open_unpinned(verdict)?,
        };
        let stat = sys::stat(fd.as_fd()).map_err(FsError::Io)?;
        let location = self.location_of(&fd, beneath, &opened)?;
        self.enforce(&verdict.path, verdict.inside_workspace, &location, &stat)?;
        Ok((fd, location, stat))
    }

    /// Opens the target of a verdict without an anchor (from a host that pins nothing) by its
    /// path, and checks that it is still the real path the verdict names.
    fn open_unpinned(
        &self,
        verdict: &PathVerdict,
    ) -> Result<(OwnedFd, Option<usize>, PathBuf), FsError> {
        let target = Path::new(if verdict.resolved.is_empty() {
            &verdict.absolute
        } else {
            &verdict.resolved
        });
        let (fd, beneath) = self
            .open_lexical(target, OFlags::empty())
            .map_err(|e| FsError::from_io(e, &verdict.path))?;
        if sys::real_path(fd.as_fd()).map_err(FsError::Io)? != target {
            return Err(FsError::Changed {
                path: verdict.path.clone(),
            });
        }
        Ok((fd, beneath, target.to_path_buf()))
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
        let (fd, _, stat) = self.open_checked(verdict)?;
        OpenedFile::from_path_handle(fd, stat)
    }

    /// Opens the directory a verdict names, to list or walk it.
    pub fn open_dir(&self, verdict: &PathVerdict) -> Result<Dir<'_>, FsError> {
        let (fd, location, stat) = self.open_checked(verdict)?;
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
}

/// The error of a step below a pinned verdict's anchor: a symbolic link where the verdict saw
/// none means the path changed.
fn pinned_error(error: io::Error, path: &str) -> FsError {
    if sys::is_link_refused(&error) {
        FsError::Changed {
            path: path.to_string(),
        }
    } else {
        FsError::from_io(error, path)
    }
}

/// The error of opening a pinned verdict's anchor by its real path: gone, or a link on the
/// way, means the path changed.
pub(super) fn changed_or(error: io::Error, path: &str) -> FsError {
    if sys::is_missing(&error) || sys::is_link_refused(&error) {
        FsError::Changed {
            path: path.to_string(),
        }
    } else {
        FsError::from_io(error, path)
    }
}

/// The part of a verdict's target below its anchor (empty when the anchor is the target).
pub(super) fn anchor_rest(verdict: &PathVerdict, anchor: &PathAnchor) -> Result<PathBuf, FsError> {
    Path::new(&verdict.resolved)
        .strip_prefix(&anchor.path)
        .map(Path::to_path_buf)
        .map_err(|_| {
            FsError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the verdict's target is not below its anchor",
            ))
        })
}
