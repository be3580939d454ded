//! Collecting a directory's entries: the top level, or breadth-first with Cline's ignore rules.
//!
//! The walk goes through directory handles of the workspace capability, one name at a time, so
//! a directory swapped for a link while it is walked cannot lead the listing elsewhere. A
//! symbolic link is followed only within the listing's scope: from a directory inside the
//! workspace, a link that leads out (or through a `/proc` magic link) is shown as an entry of
//! its own, without a trailing `/`, and not descended into.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tool_api::workspace::{Dir, EntryKind, Followed, FsError, Location};

use crate::collate::{collation_key, CollationKey};
use crate::rules::IgnoreRules;

/// How many entries a listing returns at most (Cline's limit for `list_files`).
pub const DEFAULT_LIMIT: usize = 200;

/// How long a recursive walk may take before it returns what it has (Cline's timeout).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest `.gitignore` a walk reads.
const MAX_GITIGNORE_BYTES: u64 = 1 << 20;

/// One entry found by a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The path relative to the listed directory, with `/` separators and no trailing slash.
    pub relative: String,
    /// Whether it is a directory (a symbolic link counts as what it points to, when followed).
    pub is_dir: bool,
    /// Whether `.clineignore` blocks it: its path under the listed directory, or where it
    /// really is.
    pub ignored: bool,
}

impl Entry {
    /// The path as shown to the model: relative, with a trailing `/` for a directory.
    pub fn display(&self) -> String {
        if self.is_dir {
            format!("{}/", self.relative)
        } else {
            self.relative.clone()
        }
    }
}

/// The result of a listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The entries, in the order they were found.
    pub entries: Vec<Entry>,
    /// Whether the limit was reached (exactly `limit` entries counts, as in Cline).
    pub did_hit_limit: bool,
}

/// Settings of a listing beyond the directory and the recursion flag.
#[derive(Debug, Clone)]
pub struct ListOptions {
    /// The most entries to return.
    pub limit: usize,
    /// How long a recursive walk may take; when it runs out, the entries found so far return.
    pub timeout: Duration,
    /// The user's home directory, which is never listed (nor is the file system root).
    pub home: Option<PathBuf>,
}

impl Default for ListOptions {
    /// Cline's settings: 200 entries, 10 seconds, the home directory from the environment.
    fn default() -> Self {
        Self {
            limit: DEFAULT_LIMIT,
            timeout: DEFAULT_TIMEOUT,
            home: home_dir(),
        }
    }
}

/// Lists the directory `dir` (whose absolute path, as the model named it, is `path`) with
/// Cline's settings (see [`list_files_with`]).
pub fn list_files(
    dir: &Dir<'_>,
    path: &Path,
    recursive: bool,
    limit: usize,
) -> Result<Listing, FsError> {
    list_files_with(
        dir,
        path,
        recursive,
        &ListOptions {
            limit,
            ..ListOptions::default()
        },
    )
}

/// Lists `dir`, whose absolute, normalized path as the model named it is `path`.
///
/// - The file system root and the home directory give an empty listing (Cline refuses them
///   because models ask for them when lost).
/// - Top level: every entry, nothing ignored, the first `limit`.
/// - Recursive: breadth-first, level by level, until `limit` entries; see [`IgnoreRules`] for
///   what is skipped. Each directory's `.gitignore` is read when the directory is found, and its
///   rules hide matching entries in every directory read after that.
///
/// Entries of one directory are taken in collation order rather than in the file system's order
/// (which is what Cline uses), so the entries kept at the limit do not vary between machines.
/// Only failing to read `dir` itself is an error; unreadable subdirectories are skipped.
pub fn list_files_with(
    dir: &Dir<'_>,
    path: &Path,
    recursive: bool,
    options: &ListOptions,
) -> Result<Listing, FsError> {
    if is_restricted(path, options.home.as_deref()) || options.limit == 0 {
        return Ok(Listing::default());
    }
    let top = read_sorted(dir, dir.location(), "")?;
    let entries = if recursive {
        walk(dir, path, top, options)
    } else {
        top.into_iter()
            .take(options.limit)
            .map(|(e, _)| e)
            .collect()
    };
    Ok(Listing {
        did_hit_limit: entries.len() >= options.limit,
        entries,
    })
}

/// Whether `dir` is the file system root or the home directory (compared lexically, as Cline).
pub fn is_restricted(dir: &Path, home: Option<&Path>) -> bool {
    dir.parent().is_none() || home.is_some_and(|home| same_path(dir, home))
}

/// A found entry, and the handle of the directory it is (when it is one that may be entered).
type Found<'w> = (Entry, Option<Dir<'w>>);

/// The breadth-first walk, starting from the (unfiltered) top-level entries.
fn walk<'w>(
    top_dir: &Dir<'w>,
    path: &Path,
    top: Vec<Found<'w>>,
    options: &ListOptions,
) -> Vec<Entry> {
    let deadline = Instant::now() + options.timeout;
    let mut rules = IgnoreRules::defaults(path);
    add_gitignore(&mut rules, path, top_dir);
    let mut results: Vec<Entry> = Vec::new();
    let mut level = Some(top);
    let mut queue: VecDeque<(Entry, Dir<'w>)> = VecDeque::new();
    loop {
        let found = match level.take() {
            Some(found) => found,
            None => match queue.pop_front() {
                // Unreadable directories are skipped, as globby's suppressErrors does.
                Some((next, handle)) => {
                    read_sorted(&handle, top_dir.location(), &next.relative).unwrap_or_default()
                }
                None => break,
            },
        };
        // The rules are those known when the directory is read: a .gitignore found among these
        // entries applies from the next directory on, as in Cline's level-by-level globbing.
        let visible: Vec<Found<'w>> = found
            .into_iter()
            .filter(|(e, _)| !rules.is_ignored(&e.relative, e.is_dir))
            .collect();
        for (entry, handle) in visible {
            if results.len() >= options.limit {
                break;
            }
            if let Some(handle) = handle {
                add_gitignore(&mut rules, path, &handle);
                queue.push_back((entry.clone(), handle));
            }
            results.push(entry);
        }
        if results.len() >= options.limit || Instant::now() >= deadline {
            break;
        }
    }
    results
}

/// Adds the rules of the directory's `.gitignore`, if it has one it can read.
fn add_gitignore(rules: &mut IgnoreRules, path: &Path, dir: &Dir<'_>) {
    if let Ok(mut file) = dir.open_file(".gitignore") {
        if let Ok(bytes) = file.read_all(MAX_GITIGNORE_BYTES) {
            rules.add_gitignore_text(path, &String::from_utf8_lossy(&bytes));
        }
    }
}

/// The entries of `dir` (whose path relative to the listed directory is `relative`, and the
/// listed directory's location `top`), files first, each group in collation order.
fn read_sorted<'w>(
    dir: &Dir<'w>,
    top: &Location,
    relative: &str,
) -> Result<Vec<Found<'w>>, FsError> {
    let mut entries: Vec<(bool, CollationKey, String, Found<'w>)> = Vec::new();
    for item in dir.entries()? {
        let name = item.name.to_string_lossy().into_owned();
        let handle = match item.kind {
            EntryKind::Dir => dir.subdir(&item.name).ok(),
            // Followed as the glob library does, within the listing's scope; a dangling link,
            // or one that leads out of the workspace, is listed as a file.
            EntryKind::Symlink => match dir.follow(&item.name) {
                Ok(Followed::Dir(sub)) => Some(sub),
                _ => None,
            },
            EntryKind::File | EntryKind::Other => None,
        };
        let is_dir = handle.is_some();
        let relative = if relative.is_empty() {
            name.clone()
        } else {
            format!("{relative}/{name}")
        };
        // Cline checks the path without a directory's trailing slash.
        let ignored = dir.is_ignored(&item.name, false)
            || handle.as_ref().is_some_and(|h| h.is_ignored("", false))
            || is_ignored_at(dir, top, &relative);
        let entry = Entry {
            relative,
            is_dir,
            ignored,
        };
        entries.push((is_dir, collation_key(&name), name, (entry, handle)));
    }
    entries.sort_unstable_by(|a, b| (a.0, &a.1, &a.2).cmp(&(b.0, &b.1, &b.2)));
    Ok(entries.into_iter().map(|(.., found)| found).collect())
}

/// Whether the path under the listed directory (through any links on the way) is ignored.
fn is_ignored_at(dir: &Dir<'_>, top: &Location, relative: &str) -> bool {
    dir.workspace().is_ignored(&top.join(relative), false)
}

/// Node's `os.homedir()`: `HOME` (`USERPROFILE` on Windows).
fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Cline's `arePathsEqual`: equal after normalization, ignoring case on Windows.
fn same_path(a: &Path, b: &Path) -> bool {
    let (a, b) = (a.components(), b.components());
    if cfg!(windows) {
        let lower = |c: std::path::Component<'_>| c.as_os_str().to_string_lossy().to_lowercase();
        a.map(lower).eq(b.map(lower))
    } else {
        a.eq(b)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::fs;
    use tool_api::workspace::Workspace;

    /// A tree from `(path, is_dir)` pairs, inside a fresh temporary directory.
    fn tree(items: &[&str]) -> tempfile::TempDir {
        let temp = tempfile::tempdir().unwrap();
        for item in items {
            let path = temp.path().join(item.trim_end_matches('/'));
            if item.ends_with('/') {
                fs::create_dir_all(&path).unwrap();
            } else {
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(&path, item).unwrap();
            }
        }
        temp
    }

    fn listing(dir: &Path, recursive: bool, options: &ListOptions) -> Result<Listing, FsError> {
        let workspace = Workspace::new(dir).unwrap();
        let verdict = workspace.verdict(".");
        let handle = workspace.open_dir(&verdict)?;
        list_files_with(&handle, dir, recursive, options)
    }

    fn list(dir: &Path, recursive: bool, limit: usize) -> (Vec<String>, bool) {
        let options = ListOptions {
            limit,
            home: None,
            ..ListOptions::default()
        };
        let listing = listing(dir, recursive, &options).unwrap();
        let shown = listing.entries.iter().map(Entry::display).collect();
        (shown, listing.did_hit_limit)
    }

    #[test]
    fn the_walk_is_breadth_first_and_stops_at_the_limit() {
        let temp = tree(&["a/deep/x.txt", "a/1.txt", "b/2.txt", "top.txt"]);
        let (all, truncated) = list(temp.path(), true, 100);
        assert_eq!(
            all,
            [
                "top.txt",
                "a/",
                "b/",
                "a/1.txt",
                "a/deep/",
                "b/2.txt",
                "a/deep/x.txt"
            ]
        );
        assert!(!truncated);
        // Exactly the limit counts as truncated; the deeper level is never read.
        let (first, truncated) = list(temp.path(), true, 6);
        assert_eq!(first, all[..6]);
        assert!(truncated);
        let (seven, truncated) = list(temp.path(), true, 7);
        assert_eq!(seven.len(), 7);
        assert!(truncated);
    }

    #[test]
    fn the_top_level_ignores_nothing_and_stops_at_the_limit() {
        let temp = tree(&["node_modules/m.js", ".git/HEAD", "z.txt", ".gitignore"]);
        fs::write(temp.path().join(".gitignore"), "z.txt\n").unwrap();
        let (shown, truncated) = list(temp.path(), false, 10);
        assert_eq!(shown, [".gitignore", "z.txt", ".git/", "node_modules/"]);
        assert!(!truncated);
        let (shown, truncated) = list(temp.path(), false, 2);
        assert_eq!(shown, [".gitignore", "z.txt"]);
        assert!(truncated);
    }

    #[test]
    fn a_nested_gitignore_applies_to_directories_read_after_it() {
        // b/.gitignore is read when b/ is found at the first level, so it already hides a/x
        // when a/ is read, and anything named x deeper down.
        let temp = tree(&["a/x/", "a/y.txt", "b/.gitignore", "b/x/", "b/c/x/"]);
        fs::write(temp.path().join("b/.gitignore"), "x/\n").unwrap();
        let (shown, _) = list(temp.path(), true, 100);
        assert_eq!(shown, ["a/", "b/", "a/y.txt", "b/.gitignore", "b/c/"]);
    }

    #[test]
    fn non_directories_and_missing_paths_are_errors() {
        let temp = tree(&["f.txt"]);
        let workspace = Workspace::new(temp.path()).unwrap();
        assert!(matches!(
            workspace.open_dir(&workspace.verdict("f.txt")),
            Err(FsError::NotADirectory)
        ));
        assert!(matches!(
            workspace.open_dir(&workspace.verdict("missing")),
            Err(FsError::NotFound)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_workspace_are_listed_but_not_followed() {
        let outside = tree(&["secret.txt"]);
        let temp = tree(&["a.txt"]);
        std::os::unix::fs::symlink(outside.path(), temp.path().join("out")).unwrap();
        std::os::unix::fs::symlink("/proc/self/root", temp.path().join("sys")).unwrap();
        let (shown, _) = list(temp.path(), true, 100);
        assert_eq!(shown, ["a.txt", "out", "sys"]);
    }

    #[test]
    fn the_timeout_returns_what_was_found() {
        let temp = tree(&["a/b/c.txt"]);
        let options = ListOptions {
            timeout: Duration::ZERO,
            home: None,
            ..ListOptions::default()
        };
        let listing = listing(temp.path(), true, &options).unwrap();
        let shown: Vec<String> = listing.entries.iter().map(Entry::display).collect();
        assert_eq!(shown, ["a/"]);
        assert!(!listing.did_hit_limit);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_loop_ends_at_the_limit() {
        let temp = tree(&["d/f.txt"]);
        std::os::unix::fs::symlink(temp.path().join("d"), temp.path().join("d/again")).unwrap();
        let (shown, truncated) = list(temp.path(), true, 20);
        assert_eq!(shown.len(), 20);
        assert!(truncated);
        assert_eq!(shown[..4], ["d/", "d/f.txt", "d/again/", "d/again/f.txt"]);
    }

    #[test]
    fn root_and_home_are_restricted() {
        assert!(is_restricted(Path::new("/"), None));
        assert!(is_restricted(
            Path::new("/home/me/"),
            Some(Path::new("/home/me"))
        ));
        assert!(!is_restricted(
            Path::new("/home/me/project"),
            Some(Path::new("/home/me"))
        ));
    }
}
