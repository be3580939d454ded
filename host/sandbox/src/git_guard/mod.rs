//! Git repositories below the writable roots: what in them a sandboxed command must not make
//! or change, because git runs it later outside the sandbox (hooks, `core.fsmonitor` and the
//! other programs a configuration names) or because it points git at another repository
//! (`commondir`, `gitdir`, a `.git` file).
//!
//! [`Repositories::find`] walks the roots before the command: every `.git` (a directory, a
//! file naming a git directory, a link), every git directory a `.git` file leads to inside the
//! roots, and the hooks directories their configurations name (`core.hooksPath`). What exists
//! is protected by mounts ([`Repositories::protected`]): the guarded entries of each git
//! directory bound read-only, the git directory pinned so that it cannot be moved aside.
//!
//! A name that does not exist yet cannot be mounted over (and Landlock grants rights to whole
//! directories, not to names), so [`Repositories::set_aside_new`] looks again when the command
//! has ended and sets aside (renames, so that nothing is lost and nothing runs) every guarded
//! entry and every `.git` the command made. The second look re-reads only the directories
//! whose status changed since the first (their `ctime`: adding or renaming an entry sets it,
//! and unlike `mtime` no command can set it back), and all of a directory that is new.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::policy::Protected;
use config::{hooks_path, pointed_at, user_git_configs};
use paths::normalize;
use walk::{changed_since, walk, Budget, Kind, WALK_ENTRIES, WALK_TIME};

mod config;
mod paths;
mod walk;

/// The entries of a git directory that run code later or lead git elsewhere: the
/// configuration (and a worktree's own), hooks, `info/` (attributes, which pick filters; the
/// sparse-checkout and exclude rules), `commondir` and `gitdir` (where a linked worktree's
/// repository is), the submodules' repositories and the linked worktrees' directories.
pub const GUARDED_ENTRIES: [&str; 8] = [
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "gitdir",
    "modules",
    "worktrees",
];

/// What a set-aside entry's name gets (before a number, when the name is taken).
pub const SET_ASIDE_SUFFIX: &str = ".toolhost-set-aside";

/// How far before the first look a change still counts as the command's: `ctime` is taken
/// from the kernel's coarse clock, which may lag the clock read here by a tick.
const CLOCK_MARGIN: Duration = Duration::from_secs(1);

/// A git directory and which of its [`GUARDED_ENTRIES`] existed at the first look.
#[derive(Debug, Clone)]
struct GitDir {
    path: PathBuf,
    present: HashSet<&'static str>,
}

/// The repositories below a set of roots, as found before a command.
#[derive(Debug, Clone)]
pub struct Repositories {
    roots: Vec<PathBuf>,
    /// Every directory seen, for the second look.
    dirs: HashSet<PathBuf>,
    /// Every `.git` entry.
    dot_git: HashMap<PathBuf, Kind>,
    git_dirs: Vec<GitDir>,
    /// Hooks directories named by `core.hooksPath` inside the roots, and whether they existed.
    hooks_paths: Vec<(PathBuf, bool)>,
    /// When the first look started.
    taken_at: SystemTime,
}

/// A guarded entry or `.git` the command made, and where it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// What the command made.
    pub path: PathBuf,
    /// Its new name, or why it could not be renamed.
    pub moved_to: Result<PathBuf, String>,
}

impl SetAside {
    /// One line for the command's output.
    pub fn message(&self) -> String {
        match &self.moved_to {
            Ok(to) => format!(
                "set aside {} (made by the command; git would run or follow it later, outside \
                 the sandbox): it is now {}",
                self.path.display(),
                to.display()
            ),
            Err(e) => format!(
                "could not set aside {}, which the command made (git would run or follow it \
                 later, outside the sandbox): {e}; remove it before using git there",
                self.path.display()
            ),
        }
    }
}

/// Why the roots could not be looked through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    /// The root being walked.
    pub root: PathBuf,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is too large to find every git repository in it ({WALK_ENTRIES} entries, {} s), \
             and a command could plant code that git runs later in one not found",
            self.root.display(),
            WALK_TIME.as_secs()
        )
    }
}

impl Repositories {
    /// Looks through `roots` (nested roots once).
    pub fn find(roots: &[PathBuf]) -> Result<Self, TooLarge> {
        let taken_at = SystemTime::now();
        let roots = outermost(roots);
        let mut found = Self {
            roots: roots.clone(),
            dirs: HashSet::new(),
            dot_git: HashMap::new(),
            git_dirs: Vec::new(),
            hooks_paths: Vec::new(),
            taken_at,
        };
        let mut budget = Budget::new();
        for root in &roots {
            let mut dot_git = Vec::new();
            walk(root, &mut budget, &mut found.dirs, &mut dot_git)
                .map_err(|()| TooLarge { root: root.clone() })?;
            found.dot_git.extend(dot_git);
        }
        found.git_dirs = found.find_git_dirs();
        found.hooks_paths = found.find_hooks_paths();
        Ok(found)
    }

    /// The mounts that protect what exists: each git directory pinned and its guarded entries
    /// bound read-only (a git directory without a configuration of its own or elsewhere,
    /// read-only as a whole: git would take one the command wrote); each `.git` file and link
    /// read-only; the configured hooks directories read-only.
    pub fn protected(&self) -> Protected {
        let mut protected = Protected::default();
        for (path, kind) in sorted(&self.dot_git) {
            if *kind != Kind::Dir {
                protected.read_only.push(path.clone());
            }
        }
        for git_dir in &self.git_dirs {
            let has = |name| git_dir.present.contains(name);
            if !has("config") && !has("commondir") {
                protected.read_only.push(git_dir.path.clone());
                continue;
            }
            protected.pinned.push(git_dir.path.clone());
            for name in GUARDED_ENTRIES {
                if has(name) {
                    protected.read_only.push(git_dir.path.join(name));
                }
            }
        }
        for (path, existed) in &self.hooks_paths {
            if *existed {
                protected.read_only.push(path.clone());
            }
        }
        // A git directory inside a read-only one (a submodule's in `.git/modules`) is
        // read-only with it: a pin there, bound first, would be carried writable into the
        // read-only bind above it.
        let read_only = protected.read_only.clone();
        let covered = |path: &PathBuf| read_only.iter().any(|r| r != path && path.starts_with(r));
        protected.pinned.retain(|p| !covered(p));
        protected.read_only.retain(|p| !covered(p));
        protected
    }

    /// Looks again after the command and sets aside what it made: new `.git` entries anywhere
    /// below the roots, new guarded entries of the git directories found before, new hooks
    /// directories.
    pub fn set_aside_new(&self) -> Vec<SetAside> {
        let mut made = Vec::new();
        let since = self
            .taken_at
            .checked_sub(CLOCK_MARGIN)
            .unwrap_or(UNIX_EPOCH);
        let mut dirs: Vec<&PathBuf> = self.dirs.iter().collect();
        dirs.sort();
        for dir in dirs {
            if !changed_since(dir, since) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if entry.file_name() == ".git" {
                    if !self.dot_git.contains_key(&path) {
                        made.push(path);
                    }
                } else if kind.is_dir() && !self.dirs.contains(&path) {
                    let mut new_dirs = HashSet::new();
                    let mut dot_git = Vec::new();
                    // Unbounded by design: a command may make a large tree, and all of it is
                    // new; the budget only keeps the first look from refusing late.
                    let _ = walk(&path, &mut Budget::unlimited(), &mut new_dirs, &mut dot_git);
                    made.extend(dot_git.into_iter().map(|(p, _)| p));
                }
            }
        }
        for git_dir in &self.git_dirs {
            for name in GUARDED_ENTRIES {
                let path = git_dir.path.join(name);
                if !git_dir.present.contains(name) && exists(&path) {
                    made.push(path);
                }
            }
        }
        for (path, existed) in &self.hooks_paths {
            if !existed && exists(path) {
                made.push(path.clone());
            }
        }
        made.sort();
        made.dedup();
        made.into_iter()
            .map(|path| SetAside {
                moved_to: set_aside(&path),
                path,
            })
            .collect()
    }

    /// The git directories to guard: every `.git` directory, and where `.git` files and
    /// linked git directories (`commondir`) lead inside the roots.
    fn find_git_dirs(&self) -> Vec<GitDir> {
        let mut paths: Vec<PathBuf> = Vec::new();
        for (path, kind) in sorted(&self.dot_git) {
            match kind {
                Kind::Dir => paths.push(path.clone()),
                Kind::File => {
                    if let Some(target) = pointed_at(path, "gitdir:") {
                        paths.push(target);
                    }
                }
                Kind::Link => {}
            }
        }
        let mut i = 0;
        while i < paths.len() {
            let commondir = paths[i].join("commondir");
            if let Some(common) = pointed_at(&commondir, "") {
                paths.push(common);
            }
            i += 1;
        }
        let mut seen = HashSet::new();
        paths
            .into_iter()
            .filter(|p| self.inside_roots(p) && p.is_dir() && seen.insert(p.clone()))
            .map(|path| GitDir {
                present: GUARDED_ENTRIES
                    .into_iter()
                    .filter(|name| exists(&path.join(name)))
                    .collect(),
                path,
            })
            .collect()
    }

    /// The hooks directories the repositories' configurations (and the user's) name, inside
    /// the roots.
    fn find_hooks_paths(&self) -> Vec<(PathBuf, bool)> {
        let mut configs: Vec<(PathBuf, PathBuf)> = Vec::new();
        for git_dir in &self.git_dirs {
            // A relative hooks path is taken from the top of the working tree.
            let top = git_dir.path.parent().unwrap_or(&git_dir.path).to_path_buf();
            configs.push((git_dir.path.join("config"), top));
        }
        for config in user_git_configs() {
            for git_dir in &self.git_dirs {
                let top = git_dir.path.parent().unwrap_or(&git_dir.path).to_path_buf();
                configs.push((config.clone(), top));
            }
        }
        let mut found = Vec::new();
        for (config, top) in configs {
            let Some(value) = std::fs::read_to_string(&config)
                .ok()
                .and_then(|text| hooks_path(&text))
            else {
                continue;
            };
            let path = if let Some(rest) = value.strip_prefix("~/") {
                match std::env::var_os("HOME") {
                    Some(home) => PathBuf::from(home).join(rest),
                    None => continue,
                }
            } else {
                top.join(value)
            };
            let path = normalize(&path);
            if self.inside_roots(&path) && !found.iter().any(|(p, _)| *p == path) {
                let existed = exists(&path);
                found.push((path, existed));
            }
        }
        found
    }

    fn inside_roots(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }
}

/// Renames `path` to a free name beside it that git does not read.
fn set_aside(path: &Path) -> Result<PathBuf, String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 0..100 {
        let suffix = if n == 0 {
            SET_ASIDE_SUFFIX.to_string()
        } else {
            format!("{SET_ASIDE_SUFFIX}-{n}")
        };
        let target = path.with_file_name(format!("{name}{suffix}"));
        // Checked first because a rename onto an empty directory replaces it; nothing else
        // writes here now (the command's processes are gone).
        if std::fs::symlink_metadata(&target).is_ok() {
            continue;
        }
        return std::fs::rename(path, &target)
            .map(|()| target)
            .map_err(|e| e.to_string());
    }
    Err("every set-aside name is taken".to_string())
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The roots that are not inside another.
fn outermost(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut sorted: Vec<PathBuf> = roots.iter().map(|r| normalize(r)).collect();
    sorted.sort();
    sorted.dedup();
    let mut kept: Vec<PathBuf> = Vec::new();
    for root in sorted {
        if !kept.iter().any(|k| root.starts_with(k)) {
            kept.push(root);
        }
    }
    kept
}

fn sorted(map: &HashMap<PathBuf, Kind>) -> Vec<(&PathBuf, &Kind)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort();
    entries
}

#[cfg(test)]
mod tests;
