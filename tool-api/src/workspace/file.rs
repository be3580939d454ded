//! A regular file opened for reading through the workspace capability.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{FileType, Stat};

use super::{sys, FsError};

/// A regular file, open for reading, with what was known about it when it was opened.
#[derive(Debug)]
pub struct OpenedFile {
    file: File,
    stat: Stat,
}

impl OpenedFile {
    /// Checks an `O_PATH` handle (a regular file, not on procfs or sysfs) and reopens it for
    /// reading.
    pub(super) fn from_path_handle(fd: OwnedFd, stat: Stat) -> Result<Self, FsError> {
        check_regular(&stat)?;
        check_real_fs(fd.as_fd())?;
        let readable = sys::reopen_for_reading(&fd).map_err(FsError::Io)?;
        Ok(Self {
            file: File::from(readable),
            stat,
        })
    }

    /// Wraps a handle already open for reading, after the same checks. `dir_device` is the
    /// device of the directory it was opened in: a file on the same device is on the same file
    /// system, so only a file on another one (a mount point) is asked what that is.
    pub(super) fn from_read_handle(fd: OwnedFd, dir_device: u64) -> Result<Self, FsError> {
        let stat = sys::stat(fd.as_fd()).map_err(FsError::Io)?;
        check_regular(&stat)?;
        #[allow(clippy::unnecessary_cast)]
        if stat.st_dev as u64 != dir_device {
            check_real_fs(fd.as_fd())?;
        }
        Ok(Self {
            file: File::from(fd),
            stat,
        })
    }

    /// What `fstat` said when it was opened.
    pub(super) fn stat(&self) -> &Stat {
        &self.stat
    }

    /// The size in bytes when it was opened.
    pub fn size(&self) -> u64 {
        u64::try_from(self.stat.st_size).unwrap_or(0)
    }

    /// The modification time, in milliseconds since the epoch.
    // The stat fields' types differ between architectures.
    #[allow(clippy::useless_conversion)]
    pub fn modified_ms(&self) -> u64 {
        let secs = u64::try_from(self.stat.st_mtime).unwrap_or(0);
        let nanos = u64::try_from(self.stat.st_mtime_nsec).unwrap_or(0);
        secs.saturating_mul(1000).saturating_add(nanos / 1_000_000)
    }

    /// The permission bits (`st_mode & 0o7777`).
    pub fn mode(&self) -> u32 {
        self.stat.st_mode & 0o7777
    }

    /// The open file, to read part of it.
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// Reads the whole file, refusing one larger than `limit` bytes before reading anything
    /// (and one that grew past it while being read).
    pub fn read_all(&mut self, limit: u64) -> Result<Vec<u8>, FsError> {
        let size = self.size();
        if size > limit {
            return Err(FsError::TooLarge { size, limit });
        }
        let capacity = usize::try_from(size).unwrap_or(0);
        let mut bytes = Vec::with_capacity(capacity);
        (&mut self.file)
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(FsError::Io)?;
        let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if read > limit {
            return Err(FsError::TooLarge { size: read, limit });
        }
        Ok(bytes)
    }

    /// Reads at most the first `max` bytes.
    pub fn read_head(&mut self, max: u64) -> Result<Vec<u8>, FsError> {
        let mut bytes = Vec::new();
        (&mut self.file)
            .take(max)
            .read_to_end(&mut bytes)
            .map_err(FsError::Io)?;
        Ok(bytes)
    }
}

impl std::os::fd::AsFd for OpenedFile {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.file.as_fd()
    }
}

/// Refuses files of procfs and sysfs, whose size says nothing of their content.
fn check_real_fs(fd: std::os::fd::BorrowedFd<'_>) -> Result<(), FsError> {
    if sys::is_pseudo_fs(fd).map_err(FsError::Io)? {
        Err(FsError::NotRegular("a procfs or sysfs file"))
    } else {
        Ok(())
    }
}

/// Refuses anything that is not a regular file, naming what it is.
pub(super) fn check_regular(stat: &Stat) -> Result<(), FsError> {
    match sys::file_type(stat) {
        FileType::RegularFile => Ok(()),
        FileType::Directory => Err(FsError::IsADirectory),
        FileType::Fifo => Err(FsError::NotRegular("a FIFO")),
        FileType::Socket => Err(FsError::NotRegular("a socket")),
        FileType::CharacterDevice | FileType::BlockDevice => Err(FsError::NotRegular("a device")),
        FileType::Symlink => Err(FsError::NotRegular("a symbolic link")),
        FileType::Unknown => Err(FsError::NotRegular("an unknown kind of file")),
    }
}
