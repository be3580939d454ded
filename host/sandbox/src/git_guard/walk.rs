//! The walk of the roots: every directory and every `.git`, read from directory entries only,
//! within a budget; and whether a directory changed since a time.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Most entries the walk of the roots looks at, and the longest it may take: a command in a
/// larger tree is refused rather than run with repositories unguarded.
pub(super) const WALK_ENTRIES: usize = 500_000;
pub(super) const WALK_TIME: Duration = Duration::from_secs(3);

/// What kind of entry a `.git` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Kind {
    /// A directory.
    Dir,
    /// A file (naming a git directory).
    File,
    /// A symbolic link.
    Link,
}

/// The walk's limits.
pub(super) struct Budget {
    entries: usize,
    deadline: Option<Instant>,
}

impl Budget {
    pub(super) fn new() -> Self {
        Self {
            entries: WALK_ENTRIES,
            deadline: Some(Instant::now() + WALK_TIME),
        }
    }

    pub(super) fn unlimited() -> Self {
        Self {
            entries: usize::MAX,
            deadline: None,
        }
    }

    /// Takes one entry; `false` when the budget is spent.
    fn take(&mut self) -> bool {
        if self.entries == 0 {
            return false;
        }
        self.entries -= 1;
        // The clock is read once every 1024 entries.
        !self.entries.is_multiple_of(1024) || self.deadline.is_none_or(|d| Instant::now() < d)
    }
}

/// Walks `root` without following links: every directory into `dirs`, every `.git` into
/// `dot_git` (not walked into). The file types come from the directory entries, so no entry
/// is looked up on its own.
pub(super) fn walk(
    root: &Path,
    budget: &mut Budget,
    dirs: &mut HashSet<PathBuf>,
    dot_git: &mut Vec<(PathBuf, Kind)>,
) -> Result<(), ()> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        dirs.insert(dir);
        for entry in entries.flatten() {
            if !budget.take() {
                return Err(());
            }
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if entry.file_name() == ".git" {
                let kind = if file_type.is_dir() {
                    Kind::Dir
                } else if file_type.is_symlink() {
                    Kind::Link
                } else {
                    Kind::File
                };
                dot_git.push((path, kind));
            } else if file_type.is_dir() {
                stack.push(path);
            }
        }
    }
    Ok(())
}

/// Whether `dir`'s status changed at or after `since` (or it is gone).
pub(super) fn changed_since(dir: &Path, since: SystemTime) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    let since = since.duration_since(UNIX_EPOCH).unwrap_or_default();
    let ctime = Duration::new(
        u64::try_from(meta.ctime()).unwrap_or(0),
        u32::try_from(meta.ctime_nsec()).unwrap_or(0),
    );
    !meta.is_dir() || ctime >= since
}
