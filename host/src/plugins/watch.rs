//! Watching plugin directories for new builds of a library (hot swap, for development).
//!
//! File events are debounced (a build writes a library in several steps); a library whose
//! bytes did not change is skipped. The watcher only reports which files changed: the host
//! decides what to load (see `Host::reload_library`).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use super::discovery::LIBRARY_EXTENSION;

/// How long a burst of events is collected before the changed files are reported.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// Reports libraries that changed in a set of directories.
pub struct LibraryWatcher {
    // Kept alive for as long as events should arrive.
    _watcher: notify::RecommendedWatcher,
    events: Receiver<notify::Result<notify::Event>>,
    fingerprints: HashMap<PathBuf, u64>,
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
        })
    }

    /// Blocks until libraries changed (or the watcher stopped: `None`), then returns them.
    pub fn next_changes(&mut self) -> Option<Vec<PathBuf>> {
        loop {
            let first = self.events.recv().ok()?;
            let mut touched = HashSet::new();
            collect(&first, &mut touched);
            loop {
                match self.events.recv_timeout(DEBOUNCE) {
                    Ok(event) => collect(&event, &mut touched),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return None,
                }
            }
            let mut changed: Vec<PathBuf> = touched
                .into_iter()
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

/// A hash of the file's bytes, to skip rebuilds that produced the same library. std's hasher
/// is enough here: this detects change, it is no integrity check.
fn fingerprint(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    Some(hasher.finish())
}
