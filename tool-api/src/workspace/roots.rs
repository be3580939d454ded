//! Several named roots (Cline's multi-root workspaces): how a workspace is made of them (from
//! directories, or from a task context), and how a `@name:path` hint selects one.
//!
//! With one root, paths resolve against it as Node's `path.resolve` would, and a leading `@` is
//! an ordinary character (Cline parses hints only in multi-root mode). With several, a path may
//! start with a hint, `@name:rest`: the hint is everything between the `@` and the first `:`
//! (trimmed), the rest is trimmed too. The hint selects the root of that name, else the first
//! root whose path equals or contains the hint's text, else the primary root; an absolute rest
//! is used as it is. Without a hint, relative paths resolve against the primary root.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::ignore::ClineIgnore;
use super::paths::normalize;
use super::{Root, Workspace};
use crate::model::TaskContext;

/// One root of a workspace being built: its directory and, optionally, its name (else the
/// directory's name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSpec {
    /// The name hints use (`@name:path`); `None` for the directory's own name.
    pub name: Option<String>,
    /// The directory (made absolute against the process's directory).
    pub path: PathBuf,
}

impl RootSpec {
    /// A root named after its directory.
    pub fn unnamed(path: impl Into<PathBuf>) -> Self {
        Self {
            name: None,
            path: path.into(),
        }
    }

    /// A root with a name of its own.
    pub fn named(name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            name: Some(name.into()),
            path: path.into(),
        }
    }

    /// Reads `NAME=PATH` (the command line's `--workspace`).
    pub fn parse_named(text: &str) -> Result<Self, String> {
        match text.split_once('=') {
            Some((name, path)) if !name.is_empty() && !path.is_empty() => {
                Ok(Self::named(name, path))
            }
            _ => Err(format!(
                "`{text}` is not NAME=PATH (a workspace root's name and its directory)"
            )),
        }
    }
}

/// Splits Cline's workspace hint off a path: `@name:rest` gives `("name", "rest")`, both
/// trimmed. `None` when the path has no hint (no leading `@`, no `:` after a non-empty name, or
/// a line break after the `:`, which Cline's pattern does not match).
pub fn parse_hint(value: &str) -> Option<(&str, &str)> {
    let (hint, rest) = value.strip_prefix('@')?.split_once(':')?;
    if hint.is_empty() || rest.contains(['\n', '\r', '\u{2028}', '\u{2029}']) {
        return None;
    }
    Some((hint.trim(), rest.trim()))
}

/// Splits Cline's workspace hint off a command: `@name:command` gives `("name", "command")`
/// (trimmed) when the name is word characters only (`[A-Za-z0-9_]`: a hyphenated name does not
/// match, as in Cline) and the command is one line.
pub fn parse_command_hint(command: &str) -> Option<(&str, &str)> {
    let (hint, rest) = command.strip_prefix('@')?.split_once(':')?;
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if hint.is_empty()
        || !hint.chars().all(word)
        || rest.is_empty()
        || rest.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
    {
        return None;
    }
    Some((hint, rest.trim()))
}

impl Workspace {
    /// A workspace with one root, `cwd` (made absolute against the process's directory), and
    /// the root's `.clineignore`. Fails when the directory cannot be opened.
    pub fn new(cwd: &Path) -> io::Result<Self> {
        Self::with_roots(&[RootSpec::unnamed(cwd)])
    }

    /// The workspace a task context describes (what a plugin sees): its roots and the rules
    /// the host read for them. Roots are opened on first use.
    pub fn from_context(task: &TaskContext) -> Self {
        let mut roots: Vec<Root> = task
            .workspace_roots
            .iter()
            .map(|root| {
                let path = normalize(Path::new(&root.path));
                let ignore = match &root.clineignore {
                    Some(text) => compiled_rules(&path, text),
                    None => Arc::new(ClineIgnore::default()),
                };
                Root::new(root.name.clone(), path, ignore)
            })
            .collect();
        if roots.is_empty() {
            let cwd = normalize(Path::new(&task.cwd));
            let name = directory_name(&cwd);
            roots.push(Root::new(name, cwd, Arc::new(ClineIgnore::default())));
        }
        Self { roots }
    }

    /// A workspace of several roots; the first is the primary (`cwd`). Each root keeps its own
    /// `.clineignore`. Fails when a directory cannot be opened, when two roots share a name or
    /// a directory, or when a name cannot be used in a hint (empty, a `:`, white space at
    /// either end; checked when there are several roots or the name is given).
    pub fn with_roots(specs: &[RootSpec]) -> io::Result<Self> {
        if specs.is_empty() {
            return Err(io::Error::other("a workspace needs at least one root"));
        }
        let mut roots: Vec<Root> = Vec::with_capacity(specs.len());
        for spec in specs {
            let path = absolute(&spec.path)?;
            let name = match &spec.name {
                Some(name) => name.clone(),
                None => directory_name(&path),
            };
            // A single unnamed root is never hinted, whatever its directory is called.
            if specs.len() > 1 || spec.name.is_some() {
                check_name(&name, &path)?;
            }
            if roots.iter().any(|r| r.path == path) {
                return Err(io::Error::other(format!(
                    "{} is given twice as a workspace root",
                    path.display()
                )));
            }
            if let Some(other) = roots.iter().find(|r| r.name == name) {
                return Err(io::Error::other(format!(
                    "two workspace roots are named `{name}` ({} and {}): give one another \
                     name with --workspace NAME=PATH",
                    other.path.display(),
                    path.display()
                )));
            }
            let ignore = Arc::new(ClineIgnore::load(&path));
            let root = Root::new(name, path, ignore);
            root.handle()?;
            roots.push(root);
        }
        Ok(Self { roots })
    }

    /// Whether the workspace has several roots (Cline's multi-root mode: hints are parsed,
    /// searches cover every root).
    pub fn is_multi_root(&self) -> bool {
        self.roots.len() > 1
    }

    /// How many roots there are.
    pub fn root_count(&self) -> usize {
        self.roots.len()
    }

    /// A root's name.
    pub fn root_name(&self, index: usize) -> &str {
        &self.roots[index].name
    }

    /// A root's path as configured.
    pub fn root_path(&self, index: usize) -> &Path {
        &self.roots[index].path
    }

    /// A root's `.clineignore` rules.
    pub fn root_ignore(&self, index: usize) -> &ClineIgnore {
        &self.roots[index].ignore
    }

    /// The root a hint selects: the one of that name, else the first whose path equals or
    /// contains the hint's text (Cline's fallback), else none.
    pub fn root_for_hint(&self, hint: &str) -> Option<usize> {
        if hint.is_empty() {
            return None;
        }
        self.roots.iter().position(|r| r.name == hint).or_else(|| {
            self.roots
                .iter()
                .position(|r| r.path.to_string_lossy().contains(hint))
        })
    }

    /// The root a command's hint runs it in: the root [`Workspace::root_for_hint`] selects,
    /// else the primary.
    pub fn command_root(&self, hint: &str) -> usize {
        self.root_for_hint(hint).unwrap_or(0)
    }

    /// The root of that exact name.
    pub fn root_named(&self, name: &str) -> Option<usize> {
        self.roots.iter().position(|r| r.name == name)
    }

    /// Resolves `path` lexically, as Cline (Node's `path.resolve`, `path.join`) does: in a
    /// multi-root workspace a `@name:` hint selects a root ([`parse_hint`]); other relative
    /// paths resolve against the primary root; `..` removes the previous component without
    /// looking at the disk.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let (base, rest) = self.base_of(path);
        normalize(&base.join(rest))
    }

    /// The root a path is relative to, and the path without its hint.
    fn base_of<'p>(&self, path: &'p str) -> (&Path, &'p str) {
        if self.is_multi_root() {
            if let Some((hint, rest)) = parse_hint(path) {
                let root = self.root_for_hint(hint).unwrap_or(0);
                return (&self.roots[root].path, rest);
            }
        }
        (self.cwd(), path)
    }
}

/// The compiled rules of a root, shared between the calls that carry the same text (plugins
/// build a workspace per call; the matcher is built once per text).
fn compiled_rules(root: &Path, text: &str) -> Arc<ClineIgnore> {
    type Cache = Mutex<Vec<(PathBuf, String, Arc<ClineIgnore>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, _, rules)) = cache.iter().find(|(p, t, _)| p == root && t == text) {
        return rules.clone();
    }
    let rules = Arc::new(ClineIgnore::from_expanded(root, text));
    if cache.len() >= 8 {
        cache.remove(0);
    }
    cache.push((root.to_path_buf(), text.to_string(), rules.clone()));
    rules
}

/// `path` made absolute against the process's directory, `.` and `..` removed.
fn absolute(path: &Path) -> io::Result<PathBuf> {
    Ok(if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&std::env::current_dir()?.join(path))
    })
}

/// A directory's own name (`/` for the file system's root).
fn directory_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/".to_string())
}

fn check_name(name: &str, path: &Path) -> io::Result<()> {
    if name.is_empty() || name.contains(':') || name.trim() != name {
        return Err(io::Error::other(format!(
            "`{name}` (the workspace root {}) cannot be used in a `@name:path` hint: give the \
             root a name without `:` or surrounding spaces with --workspace NAME=PATH",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn hints_are_parsed_as_cline_parses_them() {
        assert_eq!(
            parse_hint("@frontend:src/a.ts"),
            Some(("frontend", "src/a.ts"))
        );
        assert_eq!(
            parse_hint("@my-app: src/b.ts "),
            Some(("my-app", "src/b.ts"))
        );
        assert_eq!(parse_hint("@ api :x"), Some(("api", "x")));
        assert_eq!(parse_hint("@api:"), Some(("api", "")));
        assert_eq!(parse_hint("@api:a:b"), Some(("api", "a:b")));
        assert_eq!(parse_hint("@:x"), None);
        assert_eq!(parse_hint("@api"), None);
        assert_eq!(parse_hint("api:x"), None);
        assert_eq!(parse_hint("@api:a\nb"), None);
    }

    #[test]
    fn command_hints_are_word_characters_and_one_line() {
        assert_eq!(
            parse_command_hint("@api:npm test"),
            Some(("api", "npm test"))
        );
        assert_eq!(parse_command_hint("@api_2: ls "), Some(("api_2", "ls")));
        assert_eq!(parse_command_hint("@my-app:ls"), None);
        assert_eq!(parse_command_hint("@api:"), None);
        assert_eq!(parse_command_hint("@api:ls\nrm x"), None);
        assert_eq!(parse_command_hint("echo @api:ls"), None);
    }

    #[test]
    fn hints_select_roots_by_name_then_path_and_fall_back_to_the_primary() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let ws = Workspace::with_roots(&[
            RootSpec::named("front", a.path()),
            RootSpec::named("back", b.path()),
        ])
        .unwrap();
        assert!(ws.is_multi_root());
        assert_eq!(ws.resolve("@back:src/x"), b.path().join("src/x"));
        assert_eq!(ws.resolve("@back:"), b.path());
        assert_eq!(ws.resolve("src/x"), a.path().join("src/x"));
        assert_eq!(ws.resolve("@nope:src/x"), a.path().join("src/x"));
        assert_eq!(
            ws.resolve("@back:/etc/passwd"),
            PathBuf::from("/etc/passwd")
        );
        let tail = b.path().file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(ws.resolve(&format!("@{tail}:y")), b.path().join("y"));
        // `..` leaves the root lexically; the verdict then says it is outside.
        assert!(!ws.verdict("@back:../elsewhere").inside_workspace);
        assert!(ws.verdict("@back:new.txt").inside_workspace);
        // One root: a hint is an ordinary file name, as in Cline.
        let single = Workspace::new(a.path()).unwrap();
        assert_eq!(single.resolve("@front:x"), a.path().join("@front:x"));
    }

    #[test]
    fn names_must_be_unique_and_usable_in_hints() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let error = |specs: &[RootSpec]| Workspace::with_roots(specs).unwrap_err().to_string();
        assert!(error(&[
            RootSpec::named("x", a.path()),
            RootSpec::named("x", b.path())
        ])
        .contains("two workspace roots are named `x`"));
        assert!(error(&[RootSpec::named("a:b", a.path())]).contains("cannot be used"));
        assert!(
            error(&[RootSpec::unnamed(a.path()), RootSpec::unnamed(a.path())])
                .contains("given twice")
        );
        assert!(error(&[RootSpec::unnamed(a.path().join("missing"))]).contains("cannot open"));
        assert_eq!(
            RootSpec::parse_named("api=../api").unwrap(),
            RootSpec::named("api", "../api")
        );
        assert!(RootSpec::parse_named("api").is_err());
    }
}
