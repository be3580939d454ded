//! `.clineignore`: gitignore-syntax rules that keep paths away from the model.
//!
//! Semantics follow Cline's: the file lives in the primary root; `!include FILE` lines pull in
//! another file's rules; a non-empty file always blocks itself; paths outside the workspace and
//! the workspace root itself are never blocked. Matching uses the `ignore` crate's gitignore
//! implementation.

use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::workspace::normalize;

/// The parsed `.clineignore` of a workspace, or nothing when there is none.
#[derive(Debug, Clone, Default)]
pub struct ClineIgnore {
    matcher: Option<Gitignore>,
}

impl ClineIgnore {
    /// Reads `<cwd>/.clineignore`. A missing or empty file blocks nothing.
    pub fn load(cwd: &Path) -> Self {
        match std::fs::read_to_string(cwd.join(".clineignore")) {
            Ok(text) => Self::from_text(cwd, &text),
            Err(_) => Self::default(),
        }
    }

    /// Builds the rules from the file's text (`!include` files are read relative to `cwd`).
    pub fn from_text(cwd: &Path, text: &str) -> Self {
        if text.is_empty() {
            return Self::default();
        }
        let mut builder = GitignoreBuilder::new(cwd);
        let source = cwd.join(".clineignore");
        for line in expand_includes(cwd, text) {
            // A line the gitignore parser rejects (e.g. a dangling escape) matches nothing,
            // as in Cline's matcher.
            let _ = builder.add_line(Some(source.clone()), &line);
        }
        let _ = builder.add_line(Some(source), ".clineignore");
        Self {
            matcher: builder.build().ok(),
        }
    }

    /// Whether there are rules at all.
    pub fn is_active(&self) -> bool {
        self.matcher.is_some()
    }

    /// Whether `path` (relative to `cwd`, or absolute) may be accessed.
    pub fn allows(&self, cwd: &Path, path: &str) -> bool {
        let Some(matcher) = &self.matcher else {
            return true;
        };
        let path = path.replace('\\', "/");
        let is_dir = path.ends_with('/');
        let absolute = normalize(&cwd.join(&path));
        let relative = match absolute.strip_prefix(cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel,
            // Outside the workspace, or the workspace itself: never blocked.
            _ => return true,
        };
        !matcher
            .matched_path_or_any_parents(relative, is_dir)
            .is_ignore()
    }
}

impl ClineIgnore {
    /// Cline's heuristic for commands that read files: when the first word (any case) is
    /// `cat`, `less`, `more`, `head`, `tail`, `grep`, `awk`, `sed`, `get-content`, `gc`,
    /// `type`, `select-string` or `sls`, each later word that does not start with `-` or `/`
    /// and has no `:` is checked as a path; the first blocked one is returned. Pipelines and
    /// chains are not looked into, and absolute paths are never checked (as in Cline).
    pub fn blocked_command_arg(&self, cwd: &Path, command: &str) -> Option<String> {
        self.matcher.as_ref()?;
        let mut words = command.split_whitespace();
        let first = words.next()?.to_lowercase();
        if !FILE_READING_COMMANDS.contains(&first.as_str()) {
            return None;
        }
        words
            .filter(|arg| !arg.starts_with('-') && !arg.starts_with('/') && !arg.contains(':'))
            .find(|arg| !self.allows(cwd, arg))
            .map(str::to_string)
    }
}

/// The commands Cline's `.clineignore` heuristic looks at.
const FILE_READING_COMMANDS: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "awk",
    "sed",
    "get-content",
    "gc",
    "type",
    "select-string",
    "sls",
];

/// The file's lines with every `!include FILE` line replaced by that file's lines (one level;
/// missing files are skipped). Carriage returns at line ends are dropped.
fn expand_includes(cwd: &Path, text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        match line.trim().strip_prefix("!include ") {
            Some(file) => {
                if let Ok(included) = std::fs::read_to_string(cwd.join(file.trim())) {
                    lines.extend(
                        included
                            .lines()
                            .map(|l| l.trim_end_matches('\r').to_string()),
                    );
                }
            }
            None => lines.push(line.to_string()),
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_that_read_ignored_files_are_caught() {
        let cwd = Path::new("/work/project");
        let ignore = ClineIgnore::from_text(cwd, "secrets/\n.env\n");
        let blocked = |command: &str| ignore.blocked_command_arg(cwd, command);
        assert_eq!(blocked("cat README.md"), None);
        assert_eq!(
            blocked("grep -r password secrets/db.txt").as_deref(),
            Some("secrets/db.txt")
        );
        assert_eq!(blocked("  CAT .env").as_deref(), Some(".env"));
        assert_eq!(blocked("ls | cat .env"), None);
        assert_eq!(blocked("cat /work/project/.env"), None);
        assert_eq!(blocked("cat c:.env"), None);
        assert_eq!(
            ClineIgnore::default().blocked_command_arg(cwd, "cat .env"),
            None
        );
    }
}
