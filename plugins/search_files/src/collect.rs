//! The results of every search thread, in ripgrep's sorted-path order, bounded by the cap.
//!
//! Files are searched in parallel and finish in any order, but the model must always see the
//! same results: the first `cap` hits in path order. The collector keeps files in a sorted map;
//! once it holds `cap` hits it drops every file after the one that completes them and remembers
//! that file as the cutoff. Files and directories sorting after the cutoff cannot contribute any
//! more, so the search skips them without reading them; memory stays bounded by the cap.
//!
//! Order is `Path`'s: component by component, names compared byte-wise. That is the order of
//! `rg --sort path` (which sorts each directory's entries by name), so `a/b` comes before `a-c`
//! although `-` sorts before `/` byte-wise.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::sink::Hit;

/// The hits of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHits {
    /// The file's path as the walk produced it (the search root joined with the rest).
    pub path: PathBuf,
    /// Its hits, in line order.
    pub hits: Vec<Hit>,
}

/// Gathers [`FileHits`] from many threads, keeping only what can be among the first `cap` hits.
#[derive(Debug)]
pub struct Collector {
    cap: usize,
    state: Mutex<State>,
    /// Set once a cutoff exists, so that threads need not lock to learn there is none.
    has_cutoff: AtomicBool,
}

#[derive(Debug, Default)]
struct State {
    files: BTreeMap<PathBuf, Vec<Hit>>,
    total: usize,
    cutoff: Option<PathBuf>,
}

impl Collector {
    /// A collector for the first `cap` hits.
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            state: Mutex::new(State::default()),
            has_cutoff: AtomicBool::new(false),
        }
    }

    /// Whether `path`, and everything below it, sorts after the file that completes the first
    /// `cap` hits, so that searching it cannot change the result.
    pub fn is_beyond_cutoff(&self, path: &Path) -> bool {
        if !self.has_cutoff.load(Ordering::Acquire) {
            return false;
        }
        self.lock().cutoff.as_deref().is_some_and(|c| path > c)
    }

    /// Adds the hits of one file (nothing when there are none).
    pub fn add(&self, path: PathBuf, hits: Vec<Hit>) {
        if hits.is_empty() {
            return;
        }
        let mut state = self.lock();
        if state.cutoff.as_deref().is_some_and(|c| path.as_path() > c) {
            return;
        }
        state.total += hits.len();
        state.files.insert(path, hits);
        if state.total >= self.cap {
            self.trim(&mut state);
        }
    }

    /// The files kept, in path order.
    pub fn into_files(self) -> Vec<FileHits> {
        let state = self
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        state
            .files
            .into_iter()
            .map(|(path, hits)| FileHits { path, hits })
            .collect()
    }

    /// Drops the files after the one that completes the first `cap` hits and makes it the cutoff.
    fn trim(&self, state: &mut State) {
        let mut seen = 0;
        let mut cutoff = None;
        for (path, hits) in &state.files {
            seen += hits.len();
            if seen >= self.cap {
                cutoff = Some(path.clone());
                break;
            }
        }
        let Some(cutoff) = cutoff else {
            return;
        };
        state.files.retain(|path, _| path <= &cutoff);
        state.total = seen;
        state.cutoff = Some(cutoff);
        self.has_cutoff.store(true, Ordering::Release);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere cannot leave the map inconsistent: every update is a single insert
        // or retain.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(n: usize) -> Vec<Hit> {
        vec![Hit::default(); n]
    }

    fn paths(collector: Collector) -> Vec<(String, usize)> {
        collector
            .into_files()
            .into_iter()
            .map(|f| (f.path.to_string_lossy().into_owned(), f.hits.len()))
            .collect()
    }

    #[test]
    fn files_come_out_in_rg_sort_path_order() {
        let c = Collector::new(300);
        for name in ["/r/a-c", "/r/a/b", "/r/B/z", "/r/a.txt", "/r/a0"] {
            c.add(PathBuf::from(name), hits(1));
        }
        assert_eq!(
            paths(c),
            vec![
                ("/r/B/z".to_string(), 1),
                ("/r/a/b".to_string(), 1),
                ("/r/a-c".to_string(), 1),
                ("/r/a.txt".to_string(), 1),
                ("/r/a0".to_string(), 1),
            ]
        );
    }

    #[test]
    fn files_after_the_cap_are_dropped_whatever_order_they_arrive_in() {
        let c = Collector::new(5);
        c.add(PathBuf::from("/r/d"), hits(3));
        c.add(PathBuf::from("/r/b"), hits(2));
        assert!(c.is_beyond_cutoff(Path::new("/r/e")));
        assert!(!c.is_beyond_cutoff(Path::new("/r/c")));
        c.add(PathBuf::from("/r/a"), hits(4));
        // a (4) + b (2) reach the cap: d goes, b is the cutoff.
        assert!(c.is_beyond_cutoff(Path::new("/r/c")));
        assert!(c.is_beyond_cutoff(Path::new("/r/b/below")));
        c.add(PathBuf::from("/r/c"), hits(1));
        assert_eq!(
            paths(c),
            vec![("/r/a".to_string(), 4), ("/r/b".to_string(), 2)]
        );
    }

    #[test]
    fn no_cutoff_below_the_cap() {
        let c = Collector::new(10);
        c.add(PathBuf::from("/r/a"), hits(9));
        c.add(PathBuf::from("/r/b"), Vec::new());
        assert!(!c.is_beyond_cutoff(Path::new("/r/z")));
        assert_eq!(paths(c), vec![("/r/a".to_string(), 9)]);
    }
}
