//! Watching plugin directories for new builds of a library (hot swap, for development).
//!
//! File events are debounced (a build writes a library in several steps). A changed library is
//! reported only once it has settled and is complete: its size and modification time stay the
//! same over the settle interval ([`SETTLE_CHECKS`] looks, [`SETTLE_INTERVAL`] apart; a
//! linker that writes through a mapping sends no event per write, so events alone cannot
//! tell), and its headers pass the ELF check ([`super::elf`]). A library still being written
//! is looked at again after the next interval; a settled one that is not complete is skipped
//! until it changes again. Both are logged at debug level only: a half-written file is the
//! normal state of a library during a build. A library whose bytes did not change is skipped.
//! The watcher only reports which files changed: the host decides what to load (see
//! `Host::reload_library`).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, SystemTime};

use notify::{RecursiveMode, Watcher};

use super::discovery::LIBRARY_EXTENSION;

/// How long a burst of events is collected before the changed files are looked at.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// The time between two looks at a changed library's size and modification time.
pub const SETTLE_INTERVAL: Duration = Duration::from_millis(75);

/// How many looks after the first must find a changed library as it was before it counts as
/// settled.
pub const SETTLE_CHECKS: usize = 2;

/// Reports libraries that changed in a set of directories.
pub struct LibraryWatcher {
    // Kept alive for as long as events should arrive.
    _watcher: notify::RecommendedWatcher,
    events: Receiver<notify::Result<notify::Event>>,
    fingerprints: HashMap<PathBuf, u64>,
    /// Changed libraries still being written: looked at again after the next interval.
    unsettled: HashSet<PathBuf>,
}

impl LibraryWatcher {
    /// Starts watching `dirs` (not recursively).
    pub fn new(dirs: &[PathBuf]) -> notify::Result<Self> {
        let (sender, events) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(sender)?;
        for dir in dirs {
            watcher.watch(dir, RecursiveMode::NonRecursive)?;
        }
        let mut fingerprints = HashMap::new();
        for dir in dirs {
            for file in super::discovery::library_files(dir).unwrap_or_default() {
                if let Some(print) = fingerprint(&file) {
                    fingerprints.insert(file, print);
                }
            }
        }
        Ok(Self {
            _watcher: watcher,
            events,
            fingerprints,
            unsettled: HashSet::new(),
        })
    }

    /// Blocks until libraries changed, settled and passed the ELF check (or the watcher
    /// stopped: `None`), then returns them.
    pub fn next_changes(&mut self) -> Option<Vec<PathBuf>> {
        loop {
            let mut touched = std::mem::take(&mut self.unsettled);
            let first = if touched.is_empty() {
                Some(self.events.recv().ok()?)
            } else {
                match self.events.recv_timeout(SETTLE_INTERVAL) {
                    Ok(event) => Some(event),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return None,
                }
            };
            if let Some(first) = first {
                collect(&first, &mut touched);
                loop {
                    match self.events.recv_timeout(DEBOUNCE) {
                        Ok(event) => collect(&event, &mut touched),
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => return None,
                    }
                }
            }
            let (settled, unsettled) = settle(touched);
            for path in &unsettled {
                tracing::debug!(target: "toolhost::plugins", "hot swap: {} is still being written; looking again", path.display());
            }
            self.unsettled = unsettled;
            let mut changed: Vec<PathBuf> = settled
                .into_iter()
                .filter(|path| match super::elf::check(path) {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::debug!(target: "toolhost::plugins", "hot swap: {} is not loaded until it changes again: {e}", path.display());
                        false
                    }
                })
                .filter(|path| {
                    let Some(print) = fingerprint(path) else {
                        return false;
                    };
                    self.fingerprints.insert(path.clone(), print) != Some(print)
                })
                .collect();
            if !changed.is_empty() {
                changed.sort();
                return Some(changed);
            }
        }
    }
}

fn collect(event: &notify::Result<notify::Event>, touched: &mut HashSet<PathBuf>) {
    if let Ok(event) = event {
        if event.kind.is_create() || event.kind.is_modify() {
            touched.extend(
                event
                    .paths
                    .iter()
                    .filter(|p| p.extension().is_some_and(|e| e == LIBRARY_EXTENSION))
                    .cloned(),
            );
        }
    }
}

/// What a look at a file sees: its size and modification time (`None`: it is gone).
fn look(path: &Path) -> Option<(u64, SystemTime)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.len(), metadata.modified().ok()?))
}

/// Splits `paths` into the files that stayed the same over the settle interval and those that
/// changed during it; files that are gone are dropped. All files are looked at together, so
/// the interval is waited once however many changed.
fn settle(paths: HashSet<PathBuf>) -> (Vec<PathBuf>, HashSet<PathBuf>) {
    let mut watched: Vec<(PathBuf, (u64, SystemTime))> = paths
        .into_iter()
        .filter_map(|path| look(&path).map(|seen| (path, seen)))
        .collect();
    let mut unsettled = HashSet::new();
    for _ in 0..SETTLE_CHECKS {
        if watched.is_empty() {
            break;
        }
        std::thread::sleep(SETTLE_INTERVAL);
        watched.retain(|(path, before)| match look(path) {
            Some(now) if now == *before => true,
            Some(_) => {
                unsettled.insert(path.clone());
                false
            }
            None => false,
        });
    }
    (
        watched.into_iter().map(|(path, _)| path).collect(),
        unsettled,
    )
}

/// A hash of the file's bytes, to skip rebuilds that produced the same library. std's hasher
/// is enough here: this detects change, it is no integrity check.
fn fingerprint(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    Some(hasher.finish())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::Write;

    use super::*;

    #[test]
    fn a_file_written_during_the_interval_is_not_settled() {
        let dir = tempfile::tempdir().unwrap();
        let quiet = dir.path().join("libquiet.so");
        let busy = dir.path().join("libbusy.so");
        std::fs::write(&quiet, b"done").unwrap();
        std::fs::write(&busy, b"half").unwrap();
        let writer = {
            let busy = busy.clone();
            std::thread::spawn(move || {
                std::thread::sleep(SETTLE_INTERVAL / 2);
                let mut file = std::fs::OpenOptions::new().append(true).open(busy).unwrap();
                file.write_all(b" and the rest").unwrap();
            })
        };
        let gone = dir.path().join("libgone.so");
        let paths = HashSet::from([quiet.clone(), busy.clone(), gone]);
        let (settled, unsettled) = settle(paths);
        writer.join().unwrap();
        assert_eq!(settled, [quiet]);
        assert_eq!(unsettled, HashSet::from([busy]));
    }
}
