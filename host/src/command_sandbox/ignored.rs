//! The files and directories of a workspace root that `.clineignore` blocks, and the other
//! names of blocked files (hard links), found by one bounded walk.

use std::collections::HashSet;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tool_api::workspace::ignore::ClineIgnore;

use super::error::PolicyError;

/// Most entries one `.clineignore` walk looks at; a walk past it (or past [`WALK_TIME`])
/// refuses the command rather than run it with files unmasked.
const WALK_ENTRIES: usize = 200_000;
/// Longest one walk may take.
const WALK_TIME: Duration = Duration::from_secs(3);

/// Every path of `root` that `ignore` blocks (a blocked directory as a whole), and every other
/// name of a blocked file (hard links). Symbolic links are not followed; a blocked link is
/// hidden where it leads (the mount follows it), unless that holds a workspace root.
pub(super) fn ignored_paths(
    root: &Path,
    ignore: &ClineIgnore,
    roots: &[(PathBuf, Option<String>)],
    section: &str,
) -> Result<Vec<PathBuf>, PolicyError> {
    let deadline = Instant::now() + WALK_TIME;
    let mut seen = 0usize;
    let mut masked = Vec::new();
    let mut ignored_inodes: HashSet<(u64, u64)> = HashSet::new();
    let mut linked: Vec<(PathBuf, (u64, u64))> = Vec::new();
    // (directory, relative path, inside an ignored directory)
    let mut stack: Vec<(PathBuf, PathBuf, bool)> =
        vec![(root.to_path_buf(), PathBuf::new(), false)];
    let too_big = || PolicyError::WorkspaceTooLarge {
        root: root.to_path_buf(),
        entries: WALK_ENTRIES,
        secs: WALK_TIME.as_secs(),
        section: section.to_string(),
    };
    while let Some((dir, relative, in_ignored)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > WALK_ENTRIES || Instant::now() > deadline {
                return Err(too_big());
            }
            let name: OsString = entry.file_name();
            let path = dir.join(&name);
            let rel = relative.join(&name);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let is_dir = meta.is_dir();
            let blocked = in_ignored || ignore.blocks(&rel, is_dir);
            if blocked && !in_ignored {
                if meta.file_type().is_symlink() {
                    if let Ok(target) = std::fs::canonicalize(&path) {
                        if roots.iter().any(|(r, _)| r.starts_with(&target)) {
                            return Err(PolicyError::IgnoredLinkHoldsWorkspace {
                                link: rel,
                                target,
                            });
                        }
                    }
                }
                masked.push(path.clone());
            }
            if meta.is_file() && meta.nlink() > 1 {
                let key = (meta.dev(), meta.ino());
                if blocked {
                    ignored_inodes.insert(key);
                } else {
                    linked.push((path.clone(), key));
                }
            }
            // Inside `.git` no file is the workspace's own (and hard links there are git's).
            if is_dir && !(relative.as_os_str().is_empty() && name == ".git") {
                stack.push((path, rel, blocked));
            }
        }
    }
    masked.extend(
        linked
            .into_iter()
            .filter(|(_, key)| ignored_inodes.contains(key))
            .map(|(path, _)| path),
    );
    Ok(masked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_files_and_their_hard_links_are_found() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let root = dir.path();
        let write = |p: &str, text: &str| {
            if let Some(parent) = root.join(p).parent() {
                std::fs::create_dir_all(parent).ok();
            }
            std::fs::write(root.join(p), text).ok();
        };
        write(".env", "secret");
        write("secrets/key.pem", "k");
        write("src/main.rs", "fn main() {}");
        std::fs::hard_link(root.join(".env"), root.join("src/notes.txt")).ok();
        let ignore = ClineIgnore::from_text(root, ".env\nsecrets/\n");
        let mut found = ignored_paths(root, &ignore, &[], "tool").unwrap_or_default();
        found.sort();
        assert_eq!(
            found,
            [
                root.join(".env"),
                root.join("secrets"),
                root.join("src/notes.txt")
            ]
        );
    }
}
