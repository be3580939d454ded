//! The product's Rust sources, read into memory once: the rules run on a [`Tree`], so that
//! their tests can run on samples.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Source files by their path relative to the workspace root.
#[derive(Debug, Default)]
pub struct Tree {
    files: BTreeMap<PathBuf, String>,
    /// Files that could not be read.
    pub problems: Vec<String>,
}

impl Tree {
    /// The `.rs` files below `dirs` of `root`, `target/` directories left out.
    pub fn read(root: &Path, dirs: &[&str]) -> Self {
        let mut tree = Tree::default();
        let mut found = Vec::new();
        for dir in dirs {
            collect_rs(&root.join(dir), &mut found);
        }
        for file in found {
            let Ok(relative) = file.strip_prefix(root) else {
                continue;
            };
            if relative.components().any(|c| c.as_os_str() == "target") {
                continue;
            }
            match std::fs::read_to_string(&file) {
                Ok(text) => {
                    tree.files.insert(relative.to_path_buf(), text);
                }
                Err(e) => tree
                    .problems
                    .push(format!("{}: cannot be read: {e}", relative.display())),
            }
        }
        tree
    }

    /// A tree of samples: (path, text).
    #[cfg(test)]
    pub fn of(files: &[(&str, &str)]) -> Self {
        Tree {
            files: files
                .iter()
                .map(|(path, text)| (PathBuf::from(path), (*text).to_string()))
                .collect(),
            problems: Vec::new(),
        }
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl Iterator<Item = (&Path, &str)> {
        self.files.iter().map(|(p, t)| (p.as_path(), t.as_str()))
    }

    /// The text of one file (`path` is normalised: `a/./b/../c.rs` is `a/c.rs`).
    pub fn get(&self, path: &Path) -> Option<&str> {
        self.files.get(&normalise(path)).map(String::as_str)
    }

    /// The number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }
}

/// `path` without `.` and `..` components.
pub fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
