//! A directory reached through the workspace capability: its entries, the files and
//! directories in it, and atomic writes inside it.
//!
//! Everything here is relative to the directory's handle, one name at a time: a name is never
//! resolved through a symbolic link unless the caller asks to follow one ([`Dir::follow`]), and
//! then only as far as the directory's scope allows.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use rustix::fs::{FileType, OFlags, Stat};

use super::file::OpenedFile;
use super::staging::{unique, Backup, StagedFile};
use super::{sys, FsError, Location, Workspace};

/// What an entry of a directory is, as the directory says (a symbolic link is a link).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (see [`Dir::follow`]).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// Its name.
    pub name: OsString,
    /// What it is.
    pub kind: EntryKind,
}

/// What a symbolic link leads to, within the directory's scope.
#[derive(Debug)]
pub enum Followed<'w> {
    /// A directory, opened.
    Dir(Dir<'w>),
    /// A regular file.
    File,
    /// Something else (a FIFO, a device...).
    Other,
}

/// An open directory and where it really is.
#[derive(Debug, Clone)]
pub struct Dir<'w> {
    pub(super) workspace: &'w Workspace,
    pub(super) fd: Arc<OwnedFd>,
    /// The device it is on.
    pub(super) device: u64,
    pub(super) location: Location,
    /// Approved as inside the workspace: nothing reached from it may be outside.
    pub(super) inside_only: bool,
    /// The path the model gave, for messages.
    pub(super) label: String,
}

impl<'w> Dir<'w> {
    pub(super) fn new(
        workspace: &'w Workspace,
        fd: OwnedFd,
        stat: &Stat,
        location: Location,
        inside_only: bool,
        label: String,
    ) -> Self {
        #[allow(clippy::unnecessary_cast)]
        let device = stat.st_dev as u64;
        Self {
            workspace,
            fd: Arc::new(fd),
            device,
            location,
            inside_only,
            label,
        }
    }

    fn child(&self, fd: OwnedFd, stat: &Stat, location: Location) -> Self {
        Self::new(
            self.workspace,
            fd,
            stat,
            location,
            self.inside_only,
            self.label.clone(),
        )
    }

    /// Where `relative` below this directory is, without a link on the way. Below a directory
    /// outside every root, the path is located again (a root may be below it).
    pub(super) fn child_location(&self, relative: &Path) -> Location {
        match &self.location {
            Location::Inside { .. } => self.location.join(relative),
            Location::Outside(real) => self.workspace.locate(&real.join(relative)),
        }
    }

    /// The workspace the directory belongs to.
    pub fn workspace(&self) -> &'w Workspace {
        self.workspace
    }

    /// Where the directory really is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Whether `.clineignore` blocks `relative` (a path below this directory).
    pub fn is_ignored(&self, relative: impl AsRef<Path>, is_dir: bool) -> bool {
        self.workspace
            .is_ignored(&self.child_location(relative.as_ref()), is_dir)
    }

    /// The entries, in the order the file system gives them.
    pub fn entries(&self) -> Result<Vec<DirEntry>, FsError> {
        let entries = sys::read_entries(self.fd.as_fd()).map_err(FsError::Io)?;
        Ok(entries
            .into_iter()
            .map(|(name, kind)| DirEntry {
                name,
                kind: match kind {
                    FileType::RegularFile => EntryKind::File,
                    FileType::Directory => EntryKind::Dir,
                    FileType::Symlink => EntryKind::Symlink,
                    _ => EntryKind::Other,
                },
            })
            .collect())
    }

    /// The subdirectory `relative` (one or more names, no symbolic link on the way).
    pub fn subdir(&self, relative: impl AsRef<Path>) -> Result<Self, FsError> {
        let relative = relative.as_ref();
        let fd = sys::open_path(
            Some(self.fd.as_fd()),
            relative,
            OFlags::DIRECTORY,
            sys::Resolve::BeneathNoLinks,
        )
        .map_err(|e| FsError::from_io(e, &self.label))?;
        let stat = sys::stat(fd.as_fd()).map_err(FsError::Io)?;
        let location = self.child_location(relative);
        Ok(self.child(fd, &stat, location))
    }

    /// Follows the symbolic link `name` as far as the scope allows: from a directory approved
    /// as inside the workspace, a link that leads out is [`FsError::Escaped`]; a dangling one
    /// is [`FsError::NotFound`].
    pub fn follow(&self, name: &OsStr) -> Result<Followed<'w>, FsError> {
        let (fd, location, stat) = self.resolve_link(name)?;
        Ok(match sys::file_type(&stat) {
            FileType::Directory => Followed::Dir(self.child(fd, &stat, location)),
            FileType::RegularFile => Followed::File,
            _ => Followed::Other,
        })
    }

    /// Follows the symbolic link `name` (as [`Dir::follow`]) to a regular file, opened for
    /// reading.
    pub fn open_followed(&self, name: &OsStr) -> Result<OpenedFile, FsError> {
        let (fd, _, stat) = self.resolve_link(name)?;
        OpenedFile::from_path_handle(fd, stat)
    }

    /// Opens what the link `name` leads to (`O_PATH`), locates it and checks it.
    fn resolve_link(&self, name: &OsStr) -> Result<(OwnedFd, Location, Stat), FsError> {
        let beneath_root = match &self.location {
            Location::Inside { root, relative } => {
                let handle = self.workspace.root(*root).handle().map_err(FsError::Io)?;
                sys::open_path(
                    Some(handle.fd.as_fd()),
                    &relative.join(name),
                    OFlags::empty(),
                    sys::Resolve::Beneath,
                )
            }
            Location::Outside(_) => Err(io::Error::from_raw_os_error(
                rustix::io::Errno::XDEV.raw_os_error(),
            )),
        };
        let fd = match beneath_root {
            // Out of the root (or an absolute link): resolved from here, then located.
            Err(e) if sys::is_escape(&e) => sys::open_path(
                Some(self.fd.as_fd()),
                Path::new(name),
                OFlags::empty(),
                sys::Resolve::Anywhere,
            ),
            other => other,
        }
        .map_err(|e| FsError::from_io(e, &self.label))?;
        // A link can lead anywhere: the kernel says where it went.
        let location = self
            .workspace
            .locate(&sys::real_path(fd.as_fd()).map_err(FsError::Io)?);
        let stat = sys::stat(fd.as_fd()).map_err(FsError::Io)?;
        self.workspace
            .enforce(&self.label, self.inside_only, &location, &stat)?;
        Ok((fd, location, stat))
    }

    /// Opens the regular file `relative` (below this directory, no symbolic link on the way)
    /// for reading, after the checks on where it is.
    pub fn open_file(&self, relative: impl AsRef<Path>) -> Result<OpenedFile, FsError> {
        let relative = relative.as_ref();
        let fd = sys::open_read_nofollow(self.fd.as_fd(), relative)
            .map_err(|e| FsError::from_io(e, &self.label))?;
        let file = OpenedFile::from_read_handle(fd, self.device)?;
        // Below a directory inside a root without rules, with no link on the way, there is
        // nothing more to check (and a walk of many files skips the work).
        if self.workspace.has_rules(&self.location) {
            let location = self.child_location(relative);
            self.workspace
                .enforce(&self.label, self.inside_only, &location, file.stat())?;
        }
        Ok(file)
    }

    /// [`Dir::open_file`], with a missing file as `None`.
    pub fn open_existing(&self, name: &OsStr) -> Result<Option<OpenedFile>, FsError> {
        match self.open_file(name) {
            Ok(file) => Ok(Some(file)),
            Err(FsError::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The entry `name` itself (a symbolic link as a link), or `None` when nothing is there.
    pub fn entry(&self, name: &OsStr) -> Option<Stat> {
        sys::stat_entry(self.fd.as_fd(), name).ok()
    }

    /// Writes `bytes` as `name`, atomically (see [`Workspace::write_file`]).
    pub fn replace(&self, name: &OsStr, bytes: &[u8]) -> Result<(), FsError> {
        let mode = match self.entry(name) {
            None => None,
            Some(stat) => match sys::file_type(&stat) {
                FileType::Directory => return Err(FsError::IsADirectory),
                FileType::RegularFile if stat.st_mode & 0o222 == 0 => {
                    return Err(FsError::Io(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        "the file is read-only",
                    )))
                }
                FileType::RegularFile => Some(stat.st_mode & 0o7777),
                _ => None,
            },
        };
        self.stage(name, bytes, mode)?.persist()?;
        self.sync();
        Ok(())
    }

    /// Writes `bytes` to a new hidden temporary file beside `name`, synced, with `mode` (or,
    /// for a new file, the usual permissions: 0666 less the umask). Dropping the result
    /// deletes it; [`StagedFile::persist`] renames it over `name`.
    pub fn stage(
        &self,
        name: &OsStr,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> Result<StagedFile, FsError> {
        let (fd, temp) = self.create_hidden(name, "tmp", 0o666)?;
        let staged = StagedFile {
            dir: self.fd.clone(),
            temp,
            target: name.to_os_string(),
            done: false,
        };
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes).map_err(FsError::Io)?;
        if let Some(mode) = mode {
            sys::set_mode(file.as_fd(), mode).map_err(FsError::Io)?;
        }
        sys::sync(file.as_fd()).map_err(FsError::Io)?;
        Ok(staged)
    }

    /// Moves `name` aside to a hidden name beside it; [`Backup::restore`] puts it back, and
    /// dropping the backup deletes it.
    pub fn move_aside(&self, name: &OsStr) -> Result<Backup, FsError> {
        let (_, reserved) = self.create_hidden(name, "bak", 0o600)?;
        let backup = Backup {
            dir: self.fd.clone(),
            backup: reserved,
            name: name.to_os_string(),
            done: false,
        };
        // Renamed over our own reserved, empty file: the name is ours alone.
        sys::rename(self.fd.as_fd(), name, &backup.backup).map_err(FsError::Io)?;
        Ok(backup)
    }

    /// Removes the file (or link) `name`.
    pub fn remove_file(&self, name: &OsStr) -> Result<(), FsError> {
        sys::remove_file(self.fd.as_fd(), name).map_err(|e| FsError::from_io(e, &self.label))
    }

    /// Makes the changes in this directory durable (best effort).
    pub fn sync(&self) {
        sys::sync_dir(self.fd.as_fd());
    }

    /// A new file with a fresh hidden name derived from `name`: `.<name>.<unique>.<suffix>`.
    fn create_hidden(
        &self,
        name: &OsStr,
        suffix: &str,
        mode: u32,
    ) -> Result<(OwnedFd, OsString), FsError> {
        let stem: String = name.to_string_lossy().chars().take(64).collect();
        let mut last = None;
        for _ in 0..16 {
            let hidden = OsString::from(format!(".{stem}.{}.{suffix}", unique()));
            match sys::create_new(self.fd.as_fd(), &hidden, mode) {
                Ok(fd) => return Ok((fd, hidden)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(FsError::from_io(e, &self.label)),
            }
        }
        Err(FsError::Io(last.unwrap_or_else(|| {
            io::Error::other("no free temporary name")
        })))
    }
}
