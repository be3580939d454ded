//! Files `.clineignore` blocks that a workspace root's git repository holds in its history:
//! committed once (still, or removed since), they are in the repository's objects, and every
//! command could print them (`git show HEAD:.env`, `git cat-file`, `git grep`, `git archive`,
//! `git clone`, or reading the pack files without git). Objects in a pack cannot be hidden
//! one by one, so where such files are found the whole object store is hidden from commands
//! (masked): git does not work in that repository inside the sandbox, and the user is told
//! once why and what to do. A repository whose history holds none keeps working as before.
//!
//! Found with the user's `git` (`rev-list --objects --all --reflog`: every object reachable
//! from a ref or a reflog, with the path it was committed at). The answer is kept per
//! repository with a fingerprint of its refs (the files under `refs/`, `packed-refs`, `HEAD`
//! and the reflogs: their size, time and inode), so a command in an unchanged repository costs
//! a few `stat`s; when the refs change only the objects new since the last look are listed.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};

use tool_api::workspace::ignore::ClineIgnore;

/// What a repository's history holds that `.clineignore` blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Leaked {
    /// The object store to hide.
    pub objects: PathBuf,
    /// The blocked paths found (relative to the workspace root), sorted, at most a few.
    pub files: Vec<String>,
}

/// The note the user reads the first time a command runs in a repository whose objects are
/// hidden for `leaked`; `None` after that.
pub(super) fn note_once(root: &Path, leaked: &Leaked, section: &str) -> Option<String> {
    static NOTED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut noted = NOTED.lock().unwrap_or_else(PoisonError::into_inner);
    if noted.contains(&leaked.objects) {
        return None;
    }
    noted.push(leaked.objects.clone());
    let text = format!(
        "the git history of {} holds files that .clineignore blocks ({}): commands cannot read \
         its objects ({}), so git does not work there inside the sandbox. Remove those files \
         from the history to use git in commands again, or set {section}.hide_committed_ignored \
         = false to let commands read them",
        root.display(),
        leaked.files.join(", "),
        leaked.objects.display()
    );
    tracing::warn!(target: "toolhost::sandbox", "{text}");
    Some(text)
}

/// How many of the blocked paths are named.
const NAMED: usize = 5;

/// What was found in one repository, and the refs it was found for.
#[derive(Debug, Clone, Default)]
struct Seen {
    /// `None` until the history was read once (a repository without commits has no tips).
    fingerprint: Option<u64>,
    /// How often the history was read (git ran).
    reads: usize,
    tips: Vec<String>,
    files: Vec<String>,
}

/// What was seen, by workspace root and rules.
static SEEN: Mutex<Option<HashMap<(PathBuf, String), Seen>>> = Mutex::new(None);

/// The blocked files the history of `root`'s repository holds, if any. Without a usable git
/// the answer is unknown, and the object store is hidden all the same (a command could read
/// the objects without git).
pub(super) fn committed_ignored(root: &Path, ignore: &ClineIgnore) -> Option<Leaked> {
    if !ignore.is_active() {
        return None;
    }
    let found = match Repository::cached(root) {
        Ok(Some(repository)) => repository,
        Ok(None) => return None,
        Err(objects) => {
            return Some(Leaked {
                objects,
                files: vec!["(git could not be run to look)".to_string()],
            })
        }
    };
    let key = (
        root.to_path_buf(),
        ignore.expanded_text().unwrap_or_default().to_string(),
    );
    let fingerprint = found.fingerprint();
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = seen.get_or_insert_with(HashMap::new);
    let entry = cache.entry(key).or_default();
    if entry.fingerprint != Some(fingerprint) {
        match found.blocked_in_history(ignore, &entry.tips) {
            Ok((tips, files)) => {
                entry.files.extend(files);
                entry.files.sort();
                entry.files.dedup();
                entry.tips = tips;
                entry.fingerprint = Some(fingerprint);
                entry.reads += 1;
            }
            Err(()) => {
                return Some(Leaked {
                    objects: found.objects(),
                    files: vec!["(its history could not be read)".to_string()],
                })
            }
        }
    }
    if entry.files.is_empty() {
        return None;
    }
    Some(Leaked {
        objects: found.objects(),
        files: entry.files.iter().take(NAMED).cloned().collect(),
    })
}

/// A repository a workspace root is in.
#[derive(Debug, Clone)]
struct Repository {
    root: PathBuf,
    common_dir: PathBuf,
    /// The root's path inside the repository (`""` at its top), with a trailing `/`.
    prefix: String,
}

/// What [`Repository::of`] found for a root, and the `.git` of the root it was found with.
type Located = (Option<(u64, u64, i64)>, Result<Option<Repository>, PathBuf>);

/// The repositories of the roots looked at, so that git runs again only when a root's `.git`
/// changed (made, removed, replaced).
static LOCATED: Mutex<Option<HashMap<PathBuf, Located>>> = Mutex::new(None);

impl Repository {
    /// [`Repository::of`], asked again only when `root/.git` is not the one it was.
    fn cached(root: &Path) -> Result<Option<Self>, PathBuf> {
        let id = std::fs::symlink_metadata(root.join(".git"))
            .ok()
            // A directory's status changes with every commit; its identity is what counts.
            // A `.git` file is read for where it points, so its changes count too.
            .map(|m| (m.dev(), m.ino(), if m.is_dir() { 0 } else { m.ctime() }));
        let mut located = LOCATED.lock().unwrap_or_else(PoisonError::into_inner);
        let located = located.get_or_insert_with(HashMap::new);
        if let Some((seen, found)) = located.get(root) {
            if *seen == id {
                return found.clone();
            }
        }
        let found = Self::of(root);
        located.insert(root.to_path_buf(), (id, found.clone()));
        found
    }

    /// The repository of `root`: `Ok(None)` when it is in none; `Err(objects)` when it has a
    /// `.git` but git cannot say more.
    fn of(root: &Path) -> Result<Option<Self>, PathBuf> {
        let dot_git = root.join(".git");
        let has_git = std::fs::symlink_metadata(&dot_git).is_ok();
        let output = git(root)
            .args(["rev-parse", "--git-common-dir", "--show-prefix"])
            .stderr(Stdio::null())
            .output();
        let text = match output {
            Ok(output) if output.status.success() => {
                String::from_utf8_lossy(&output.stdout).into_owned()
            }
            _ if has_git => return Err(dot_git.join("objects")),
            _ => return Ok(None),
        };
        let mut lines = text.lines();
        let common = lines.next().unwrap_or_default();
        let prefix = lines.next().unwrap_or_default().to_string();
        Ok(Some(Self {
            root: root.to_path_buf(),
            common_dir: root.join(common),
            prefix,
        }))
    }

    fn objects(&self) -> PathBuf {
        self.common_dir.join("objects")
    }

    /// A fingerprint of the refs and reflogs: changes when a commit, fetch or reset happens.
    fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        let mut stack = vec![
            self.common_dir.join("refs"),
            self.common_dir.join("logs"),
            self.common_dir.join("packed-refs"),
            self.common_dir.join("HEAD"),
        ];
        while let Some(path) = stack.pop() {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                let mut entries: Vec<PathBuf> = std::fs::read_dir(&path)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .collect();
                entries.sort();
                stack.extend(entries);
            } else {
                (
                    &path,
                    meta.len(),
                    meta.mtime(),
                    meta.mtime_nsec(),
                    meta.ino(),
                )
                    .hash(&mut hasher);
            }
        }
        hasher.finish()
    }

    /// The current tips (every ref and reflog entry) and the blocked paths of the objects
    /// reachable from them but not from `known` (the tips of the last look).
    fn blocked_in_history(
        &self,
        ignore: &ClineIgnore,
        known: &[String],
    ) -> Result<(Vec<String>, Vec<String>), ()> {
        let tips = self.tips()?;
        // The known tips go in on standard input (there may be more than a command line
        // takes), each excluded with `^`.
        let mut child = git(&self.root)
            .args(["rev-list", "--objects", "--all", "--reflog", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|_| ())?;
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write;
            let excluded: String = known.iter().map(|tip| format!("^{tip}\n")).collect();
            // The writer goes on a thread: git may fill its output before it has read all.
            std::thread::spawn(move || {
                let _ = stdin.write_all(excluded.as_bytes());
            });
        }
        let mut files = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Some((_, path)) = line.split_once(' ') else {
                    continue;
                };
                let Some(relative) = path.strip_prefix(&self.prefix) else {
                    continue;
                };
                if ignore.blocks(Path::new(relative), false) {
                    files.push(relative.to_string());
                }
            }
        }
        match child.wait() {
            Ok(status) if status.success() => Ok((tips, files)),
            _ => Err(()),
        }
    }

    /// Every commit a ref or a reflog points at.
    fn tips(&self) -> Result<Vec<String>, ()> {
        let output = git(&self.root)
            .args(["rev-list", "--all", "--reflog", "--no-walk"])
            .stderr(Stdio::null())
            .output()
            .map_err(|_| ())?;
        if !output.status.success() {
            return Err(());
        }
        Ok(String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_string)
            .collect())
    }
}

/// The user's git in `root`, with nothing of the repository's configuration that could run a
/// program (this is the host, outside any sandbox) and no terminal prompts.
fn git(root: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(root)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.alternateRefsCommand=",
        ])
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null());
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_ok(root: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .stdout(Stdio::null())
            .status();
        assert!(status.is_ok_and(|s| s.success()), "git {args:?}");
    }

    fn reads(root: &Path, ignore: &ClineIgnore) -> usize {
        let key = (
            root.to_path_buf(),
            ignore.expanded_text().unwrap_or_default().to_string(),
        );
        let seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
        seen.as_ref()
            .and_then(|seen| seen.get(&key))
            .map_or(0, |entry| entry.reads)
    }

    #[test]
    fn the_history_is_read_again_only_when_the_refs_change() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        git_ok(root, &["init", "-q", "."]);
        let ignore = ClineIgnore::from_text(root, ".env\n");
        // A repository without commits: nothing to find, and nothing to look for again.
        assert_eq!(committed_ignored(root, &ignore), None);
        assert_eq!(committed_ignored(root, &ignore), None);
        assert_eq!(reads(root, &ignore), 1);
        std::fs::write(root.join("notes.md"), "notes").ok();
        git_ok(root, &["add", "notes.md"]);
        git_ok(root, &["commit", "-qm", "one"]);
        assert_eq!(committed_ignored(root, &ignore), None);
        assert_eq!(committed_ignored(root, &ignore), None);
        assert_eq!(reads(root, &ignore), 2);
    }

    #[test]
    fn committed_blocked_files_are_found_also_when_removed_since() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        git_ok(root, &["init", "-q", "."]);
        std::fs::write(root.join("notes.md"), "notes").ok();
        git_ok(root, &["add", "notes.md"]);
        git_ok(root, &["commit", "-qm", "one"]);
        let ignore = ClineIgnore::from_text(root, "secrets/\n.env\n");
        assert_eq!(committed_ignored(root, &ignore), None);
        std::fs::create_dir(root.join("secrets")).ok();
        std::fs::write(root.join("secrets/key.pem"), "k").ok();
        git_ok(root, &["add", "secrets/key.pem"]);
        git_ok(root, &["commit", "-qm", "two"]);
        git_ok(root, &["rm", "-rq", "secrets"]);
        git_ok(root, &["commit", "-qm", "three"]);
        let found = committed_ignored(root, &ignore).unwrap_or_else(|| panic!("not found"));
        assert_eq!(found.files, ["secrets/key.pem"]);
        assert!(found.objects.ends_with(".git/objects"), "{found:?}");
        // Nothing blocks it: nothing to hide.
        assert_eq!(
            committed_ignored(root, &ClineIgnore::from_text(root, "other\n")),
            None
        );
    }
}
