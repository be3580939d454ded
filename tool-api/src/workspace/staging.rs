//! Writes inside a checked directory: staged temporary files, files moved aside, and the
//! directories made for a write.

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::error::FsError;
use super::sys;

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

/// A file moved aside by [`Dir::move_aside`](super::Dir::move_aside).
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
