//! Who runs what. Each process that runs a teammate holds a lock file of its own in the team's
//! `owners/` directory for as long as it lives, and a member or run it runs names that file
//! (its lease). A lease is alive while someone holds its lock: the kernel lets go of the lock
//! when the process ends, however it ends, so this holds across restarts that reuse a process
//! id, across containers sharing the directory on one machine, and without `/proc`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rustix::fs::{flock, FlockOperation};

/// The leases this process holds: one per team directory, with its locked file.
static HELD: Mutex<Vec<(PathBuf, String, File)>> = Mutex::new(Vec::new());

/// This process's lease in the team directory `dir`, taken on first use and held until the
/// process ends; taking it removes the lock files of processes that are gone. Called under
/// the team's lock ([`crate::store::Store::lease`]), so no other process is between creating
/// its file and locking it.
pub fn ours(dir: &Path) -> Result<String, String> {
    let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, lease, _)) = held.iter().find(|(d, _, _)| d == dir) {
        return Ok(lease.clone());
    }
    let owners = dir.join("owners");
    std::fs::create_dir_all(&owners)
        .map_err(|e| format!("Cannot create {}: {e}", owners.display()))?;
    for entry in std::fs::read_dir(&owners).into_iter().flatten().flatten() {
        let _ = is_held_else_remove(&entry.path());
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let lease = format!("toolhost-{}-{nanos:x}", std::process::id());
    let path = owners.join(format!("{lease}.lock"));
    let file = File::create(&path).map_err(|e| format!("Cannot create {}: {e}", path.display()))?;
    flock(&file, FlockOperation::NonBlockingLockExclusive)
        .map_err(|e| format!("Cannot lock {}: {e}", path.display()))?;
    held.push((dir.to_path_buf(), lease.clone(), file));
    Ok(lease)
}

/// Whether `lease` (as a state file names it) is held in `dir`. A name that is not a lease's
/// is dead, and so is a lease whose lock nobody holds (its file is then removed).
pub fn is_alive(dir: &Path, lease: &str) -> bool {
    let well_formed = lease.starts_with("toolhost-")
        && lease
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !well_formed {
        return false;
    }
    let mine = HELD
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|(d, held, _)| d == dir && held == lease);
    mine || is_held_else_remove(&dir.join("owners").join(format!("{lease}.lock")))
}

/// Whether another process holds the lock file `path`; one nobody holds is removed (its
/// process is gone).
fn is_held_else_remove(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {
            let _ = std::fs::remove_file(path);
            false
        }
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_lease_lives_with_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        // A lock file left by a process that ended goes when a lease is taken.
        std::fs::create_dir_all(dir.path().join("owners")).unwrap();
        std::fs::write(dir.path().join("owners/toolhost-2-def.lock"), "").unwrap();
        let mine = ours(dir.path()).unwrap();
        assert!(!dir.path().join("owners/toolhost-2-def.lock").exists());
        assert_eq!(ours(dir.path()).unwrap(), mine, "one lease per directory");
        assert!(is_alive(dir.path(), &mine));
        // A lease whose file nobody holds (a process that ended).
        let gone = "toolhost-1-abc";
        std::fs::write(dir.path().join("owners/toolhost-1-abc.lock"), "").unwrap();
        assert!(!is_alive(dir.path(), gone));
        assert!(!dir.path().join("owners/toolhost-1-abc.lock").exists());
        // Names that are not leases never reach the file system.
        std::fs::write(dir.path().join("keep.lock"), "").unwrap();
        assert!(!is_alive(dir.path(), "toolhost-../../keep"));
        assert!(dir.path().join("keep.lock").exists());
    }
}
