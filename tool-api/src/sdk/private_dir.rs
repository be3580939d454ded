//! A directory of one process's own in the temporary directory,
//! `toolhost-<pid>-<label><random>/`, and the removal of those a killed process left behind.
//!
//! It is made with mode 0700 under a name nobody can know beforehand, so that nobody can plant
//! it or read what is put in it. An exclusive lock on its `.lock` file, held as long as the
//! [`PrivateDir`] lives, marks it in use; [`remove_abandoned`] removes this user's directories
//! whose lock nobody holds (their process ended without removing them: killed). A lock works
//! across PID namespaces, where process ids would not. The host keeps its private directory
//! this way, and plugins theirs (execute_command its output logs), so each run sweeps what any
//! earlier one left.

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The name every private directory starts with.
const PREFIX: &str = "toolhost-";

/// The file whose lock marks a private directory in use.
const LOCK_FILE: &str = ".lock";

/// A private directory and the lock that keeps it. Dropping it releases the lock; the
/// directory stays until [`PrivateDir::remove`] or the next sweep.
#[derive(Debug)]
pub struct PrivateDir {
    path: PathBuf,
    _lock: File,
}

impl PrivateDir {
    /// Removes the abandoned private directories in `temp`, then makes a new one there, named
    /// `toolhost-<pid>-<label><random>`.
    pub fn create(temp: &Path, label: &str) -> Result<Self, String> {
        remove_abandoned(temp);
        // Another process's sweep may find the new directory between the lock file's creation
        // and its locking, and remove it: then a second one is made.
        for _ in 0..3 {
            // tempfile makes directories with the default mode (0777 less the umask).
            let path = tempfile::Builder::new()
                .prefix(&format!("{PREFIX}{}-{label}", std::process::id()))
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir_in(temp)
                .map_err(|e| {
                    format!(
                        "cannot create a private directory in {}: {e}",
                        temp.display()
                    )
                })?
                .keep();
            let lock_path = path.join(LOCK_FILE);
            let lock = File::create(&lock_path)
                .and_then(|file| lock_exclusive(&file).map(|()| file))
                .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
            if same_file(&lock, &lock_path) {
                return Ok(Self { path, _lock: lock });
            }
        }
        Err(format!(
            "cannot keep a private directory in {}: it is removed as it is made",
            temp.display()
        ))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the directory and everything in it.
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Whether `path` still names the file `file` is open on.
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Removes this user's private directories in `temp` whose lock nobody holds.
pub fn remove_abandoned(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    let uid = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Some((pid, _)) = rest.split_once('-') else {
            continue;
        };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let dir = entry.path();
        // Not following links: only a real directory of this user's is considered.
        let ours = std::fs::symlink_metadata(&dir).is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.is_dir() && m.uid() == uid
        });
        if !ours {
            continue;
        }
        let Ok(lock) = File::open(dir.join(LOCK_FILE)) else {
            continue;
        };
        if lock_exclusive(&lock).is_ok() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Takes the exclusive lock of `file` without waiting.
fn lock_exclusive(file: &File) -> std::io::Result<()> {
    rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
        .map_err(std::io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_directory_stays_and_an_abandoned_one_goes() {
        let temp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let held = PrivateDir::create(temp.path(), "a-").unwrap_or_else(|e| panic!("{e}"));
        let left = PrivateDir::create(temp.path(), "b-").unwrap_or_else(|e| panic!("{e}"));
        let left_path = left.path().to_path_buf();
        let mode = std::fs::metadata(held.path())
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or_default();
        assert_eq!(mode, 0o700);
        drop(left);
        remove_abandoned(temp.path());
        assert!(held.path().is_dir());
        assert!(!left_path.exists());
        held.remove();
        assert!(!held.path().exists());
    }
}
