//! The workspace: its roots, how paths resolve against them, and where the boundary is.
//!
//! Paths resolve lexically, as Cline's (Node's `path.resolve`) do: `..` removes the previous
//! component without looking at the disk. The boundary check then follows symlinks as far as
//! the path exists, so a link inside the workspace that points outside counts as outside.

use std::path::{Component, Path, PathBuf};

use tool_api::model::{PathVerdict, WorkspaceRoot};

use super::ClineIgnore;

/// One workspace root.
#[derive(Debug, Clone)]
struct Root {
    name: String,
    path: PathBuf,
    /// The root with symlinks resolved, for boundary checks.
    real: PathBuf,
}

/// The workspace of a task: its roots (the first is the primary, `cwd`) and its `.clineignore`.
#[derive(Debug, Clone)]
pub struct Workspace {
    roots: Vec<Root>,
    ignore: ClineIgnore,
}

impl Workspace {
    /// A workspace with one root, `cwd` (made absolute against the process's directory).
    pub fn new(cwd: &Path) -> std::io::Result<Self> {
        let cwd = if cwd.is_absolute() {
            normalize(cwd)
        } else {
            normalize(&std::env::current_dir()?.join(cwd))
        };
        let real = std::fs::canonicalize(&cwd)?;
        let name = cwd
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "/".to_string());
        let ignore = ClineIgnore::load(&cwd);
        Ok(Self {
            roots: vec![Root {
                name,
                path: cwd,
                real,
            }],
            ignore,
        })
    }

    /// The primary working directory.
    pub fn cwd(&self) -> &Path {
        &self.roots[0].path
    }

    /// The roots, for the task context.
    pub fn roots(&self) -> Vec<WorkspaceRoot> {
        self.roots
            .iter()
            .map(|r| WorkspaceRoot {
                name: r.name.clone(),
                path: r.path.to_string_lossy().into_owned(),
            })
            .collect()
    }

    /// The `.clineignore` rules.
    pub fn ignore(&self) -> &ClineIgnore {
        &self.ignore
    }

    /// Resolves `path` against the workspace: a `@root:` hint selects a root by name, other
    /// relative paths resolve against `cwd`, absolute paths stay as they are.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let (base, rest) = self.split_root_hint(path);
        normalize(&base.join(rest))
    }

    fn split_root_hint<'p>(&self, path: &'p str) -> (&Path, &'p str) {
        if let Some(hinted) = path.strip_prefix('@') {
            if let Some((hint, rest)) = hinted.split_once(':') {
                let hint = hint.trim();
                if let Some(root) = self.roots.iter().find(|r| r.name == hint) {
                    return (&root.path, rest);
                }
            }
        }
        (self.cwd(), path)
    }

    /// Whether an absolute path really leads inside one of the roots (symlinks followed).
    pub fn contains(&self, absolute: &Path) -> bool {
        let real = real_path(absolute);
        self.roots.iter().any(|r| real.starts_with(&r.real))
    }

    /// Everything the policies say about `path`.
    pub fn verdict(&self, path: &str) -> PathVerdict {
        let absolute = self.resolve(path);
        let resolved = real_path(&absolute);
        let inside = self.roots.iter().any(|r| resolved.starts_with(&r.real));
        // A `@root:` hint is not part of the path the rules see.
        let absolute_text = absolute.to_string_lossy();
        let for_ignore = if path.starts_with('@') {
            absolute_text.as_ref()
        } else {
            path
        };
        PathVerdict {
            path: path.to_string(),
            absolute: absolute.to_string_lossy().into_owned(),
            resolved: resolved.to_string_lossy().into_owned(),
            inside_workspace: inside,
            ignored: !self.ignore.allows(self.cwd(), for_ignore),
            display: self.display(&absolute),
        }
    }

    /// Cline's "readable path": relative to cwd with `/` separators when inside it, the
    /// directory's name when it is cwd, absolute otherwise.
    pub fn display(&self, absolute: &Path) -> String {
        let cwd = self.cwd();
        match absolute.strip_prefix(cwd) {
            Ok(rel) if rel.as_os_str().is_empty() => cwd
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| cwd.to_string_lossy().into_owned()),
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => absolute.to_string_lossy().into_owned(),
        }
    }
}

/// Removes `.` and resolves `..` lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Where an absolute path really leads: the longest existing prefix with symlinks resolved,
/// followed by the components that do not exist yet.
pub fn real_path(absolute: &Path) -> PathBuf {
    let mut existing = absolute.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize(&out);
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return absolute.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotdot_is_lexical() {
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(normalize(Path::new("/a/../../x")), PathBuf::from("/x"));
    }

    #[test]
    fn boundary_follows_symlinks() -> std::io::Result<()> {
        let outside = tempfile::tempdir()?;
        let ws = tempfile::tempdir()?;
        std::fs::write(outside.path().join("secret"), "s")?;
        std::os::unix::fs::symlink(outside.path(), ws.path().join("link"))?;
        let workspace = Workspace::new(ws.path())?;
        assert!(workspace.verdict("a/new/file.txt").inside_workspace);
        assert!(!workspace.verdict("link/secret").inside_workspace);
        assert!(!workspace.verdict("link/not-yet").inside_workspace);
        assert!(!workspace.verdict("../x").inside_workspace);
        assert!(!workspace.verdict("/etc/passwd").inside_workspace);
        assert_eq!(workspace.verdict("a/b.txt").display, "a/b.txt");
        Ok(())
    }
}
