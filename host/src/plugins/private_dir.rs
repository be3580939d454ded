//! This process's private directory, `$TMPDIR/toolhost-<pid>-<random>/`: the private copies
//! of plugin libraries and the temporary directories of isolated plugins' workers.
//!
//! It is made with mode 0700 under a name nobody can know beforehand, so that nobody can plant
//! it (a directory made ahead under a guessed name would let its maker replace a library
//! between its copy and its loading). Commands see it read-only (the command sandbox).
//!
//! An exclusive lock on its `.lock` file, held for the life of the process, marks it in use.
//! The `toolhost` binary removes it when it exits ([`remove`]); what a host that was killed
//! left behind is removed by the next host that makes its own (this user's directories whose
//! lock nobody holds). A lock works across PID namespaces, where process ids would not.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::error::LoadError;

/// The name every private directory starts with.
const PREFIX: &str = "toolhost-";

/// The file whose lock marks a private directory in use.
const LOCK_FILE: &str = ".lock";

/// The directory and the lock that keeps it.
struct Private {
    path: PathBuf,
    _lock: File,
}

static PRIVATE: OnceLock<Result<Private, String>> = OnceLock::new();

/// This process's private directory, made on first use.
pub fn path() -> Result<&'static Path, LoadError> {
    match PRIVATE.get_or_init(make) {
        Ok(private) => Ok(&private.path),
        Err(e) => Err(LoadError::Open(e.clone())),
    }
}

/// The directory `name` inside the private directory, made when missing.
pub fn subdir(name: &str) -> Result<PathBuf, LoadError> {
    let dir = path()?.join(name);
    std::fs::create_dir_all(&dir)
        .map_err(|e| LoadError::Open(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}

/// Removes the private directory, if this process made one (at exit: nothing in it is used
/// any more).
pub fn remove() {
    if let Some(Ok(private)) = PRIVATE.get() {
        let _ = std::fs::remove_dir_all(&private.path);
    }
}

fn make() -> Result<Private, String> {
    let temp = std::env::temp_dir();
    remove_abandoned(&temp);
    // Another host's sweep may find the new directory between the lock file's creation and
    // its locking, and remove it: then a second one is made.
    for _ in 0..3 {
        let path = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir_in(&temp)
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
            return Ok(Private { path, _lock: lock });
        }
    }
    Err(format!(
        "cannot keep a private directory in {}: it is removed as it is made",
        temp.display()
    ))
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
fn remove_abandoned(temp: &Path) {
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
