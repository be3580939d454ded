//! The crates of the product as module trees, read from each crate's root file down its
//! `mod` declarations (`a.rs` and `a/mod.rs` are module `a`; `#[path = "…"]` is followed).
//! Test modules (`#[cfg(test)] mod x;`, `mod tests;`) and what is below them are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::syntax::{self, FileFacts, ModPath, RawPath};
use super::tree::{normalise, Tree};

/// One crate: its root file, its files and its modules.
#[derive(Debug)]
pub struct Crate {
    /// The root file (`host/src/lib.rs`).
    pub root: PathBuf,
    /// Every file of the crate outside test modules, in path order.
    pub files: Vec<CrateFile>,
    /// Every module, the inline ones too.
    pub modules: BTreeMap<ModPath, Module>,
    /// Files that could not be found or read as Rust.
    pub problems: Vec<String>,
}

/// One file of a crate.
#[derive(Debug)]
pub struct CrateFile {
    /// Its path relative to the workspace root.
    pub path: PathBuf,
    /// The module it is.
    pub module: ModPath,
    /// What it holds.
    pub facts: FileFacts,
}

/// The names one module gives.
#[derive(Debug, Default)]
pub struct Module {
    /// The module of the file it is written in (itself, unless it is an inline module).
    pub file_module: ModPath,
    /// Its child modules.
    pub children: BTreeSet<String>,
    /// The names its `use` items bind, with the path each stands for.
    pub aliases: BTreeMap<String, RawPath>,
    /// Its glob imports.
    pub globs: Vec<RawPath>,
    /// The names of the items defined in it.
    pub defined: BTreeSet<String>,
}

/// The root files of the crates in `tree`: every `src/lib.rs`, `src/main.rs` and
/// `src/bin/*.rs`.
pub fn roots(tree: &Tree) -> Vec<PathBuf> {
    tree.files()
        .map(|(path, _)| path)
        .filter(|path| {
            let parent = path.parent().and_then(Path::file_name);
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let in_bin = parent.is_some_and(|p| p == "bin")
                && path
                    .parent()
                    .and_then(Path::parent)
                    .and_then(Path::file_name)
                    .is_some_and(|p| p == "src");
            (parent.is_some_and(|p| p == "src") && matches!(name, "lib.rs" | "main.rs")) || in_bin
        })
        .map(Path::to_path_buf)
        .collect()
}

impl Crate {
    /// Reads the crate whose root file is `root`.
    pub fn load(tree: &Tree, root: &Path) -> Self {
        let mut krate = Crate {
            root: root.to_path_buf(),
            files: Vec::new(),
            modules: BTreeMap::new(),
            problems: Vec::new(),
        };
        let mut seen = BTreeSet::new();
        // (file, its module, whether it is a "mod-rs" file whose children live beside it)
        let mut queue = vec![(root.to_path_buf(), ModPath::new(), true)];
        while let Some((path, module, mod_rs)) = queue.pop() {
            if !seen.insert(path.clone()) {
                continue;
            }
            let Some(text) = tree.get(&path) else {
                continue;
            };
            let facts = match syntax::read(&module, text) {
                Ok(facts) => facts,
                Err(e) => {
                    let file = path.display();
                    krate
                        .problems
                        .push(format!("{file}: cannot be read as Rust: {e}"));
                    continue;
                }
            };
            for facts in &facts.modules {
                let inline = &facts.path[module.len()..];
                for (name, attribute) in &facts.declared {
                    let mut child = facts.path.clone();
                    child.push(name.clone());
                    match child_file(tree, &path, mod_rs, inline, name, attribute.as_deref()) {
                        Some((file, mod_rs)) => queue.push((file, child, mod_rs)),
                        None => krate
                            .problems
                            .push(format!("{}: no file for `mod {name};`", path.display())),
                    }
                }
                let entry = krate.modules.entry(facts.path.clone()).or_default();
                entry.file_module = module.clone();
                entry
                    .children
                    .extend(facts.declared.iter().map(|(n, _)| n.clone()));
                entry.children.extend(facts.inline.iter().cloned());
                for (name, raw) in &facts.aliases {
                    entry
                        .aliases
                        .entry(name.clone())
                        .or_insert_with(|| raw.clone());
                }
                entry.globs.extend(facts.globs.iter().cloned());
                entry.defined.extend(facts.defined.iter().cloned());
            }
            krate.files.push(CrateFile {
                path,
                module,
                facts,
            });
        }
        krate.files.sort_by(|a, b| a.path.cmp(&b.path));
        krate
    }
}

/// The file of `mod name;` declared in `parent` (inside its inline modules `inline`), and
/// whether that file is a mod-rs file.
fn child_file(
    tree: &Tree,
    parent: &Path,
    mod_rs: bool,
    inline: &[String],
    name: &str,
    attribute: Option<&str>,
) -> Option<(PathBuf, bool)> {
    let dir = parent.parent().unwrap_or(Path::new(""));
    let mut base = dir.to_path_buf();
    if !mod_rs {
        base.push(parent.file_stem()?);
    }
    base.extend(inline);
    if let Some(attribute) = attribute {
        // Relative to the file's directory, or inside the inline modules' directory.
        let file = normalise(&if inline.is_empty() {
            dir.join(attribute)
        } else {
            base.join(attribute)
        });
        // A file named by `#[path]` keeps its children beside it.
        return tree.get(&file).map(|_| (file, true));
    }
    let flat = base.join(format!("{name}.rs"));
    let nested = base.join(name).join("mod.rs");
    [(flat, false), (nested, true)]
        .into_iter()
        .find(|(file, _)| tree.get(file).is_some())
}
