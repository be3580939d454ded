//! `.clineignore`: gitignore-syntax rules that keep paths away from the model.
//!
//! Semantics follow Cline's: the file lives in the root; `!include FILE` lines pull in another
//! file's rules; a non-empty file always blocks itself; the root itself is never blocked.
//! Matching is case-insensitive, as the `ignore` library Cline uses is by default, and is done
//! by the `ignore` crate's gitignore implementation.

use std::path::{Component, Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::paths::normalize;

/// The file name of the rules, in a workspace root.
pub const FILE_NAME: &str = ".clineignore";

/// The parsed `.clineignore` of one root, or nothing when there is none.
#[derive(Debug, Clone, Default)]
pub struct ClineIgnore {
    matcher: Option<Gitignore>,
    /// The rules with every `!include` expanded, as they are handed to plugins.
    expanded: Option<String>,
}

impl ClineIgnore {
    /// Reads `<root>/.clineignore`. A missing or empty file blocks nothing.
    pub fn load(root: &Path) -> Self {
        match std::fs::read_to_string(root.join(FILE_NAME)) {
            Ok(text) if !text.is_empty() => {
                Self::from_expanded(root, &expand_includes(root, &text))
            }
            _ => Self::default(),
        }
    }

    /// Builds the rules from a `.clineignore` text (`!include` files are read relative to `root`).
    pub fn from_text(root: &Path, text: &str) -> Self {
        if text.is_empty() {
            return Self::default();
        }
        Self::from_expanded(root, &expand_includes(root, text))
    }

    /// Builds the rules from a text whose `!include` lines were already expanded (what
    /// [`ClineIgnore::expanded_text`] gives).
    pub fn from_expanded(root: &Path, expanded: &str) -> Self {
        let mut builder = GitignoreBuilder::new(root);
        // Cline's `ignore` library matches without regard to case.
        let _ = builder.case_insensitive(true);
        let source = root.join(FILE_NAME);
        for line in expanded.lines() {
            // A line the gitignore parser rejects (e.g. a dangling escape) matches nothing,
            // as in Cline's matcher.
            let _ = builder.add_line(Some(source.clone()), line);
        }
        let _ = builder.add_line(Some(source), FILE_NAME);
        Self {
            matcher: builder.build().ok(),
            expanded: Some(expanded.to_string()),
        }
    }

    /// Whether there are rules at all.
    pub fn is_active(&self) -> bool {
        self.matcher.is_some()
    }

    /// The rules with `!include` lines expanded; `None` when there are none.
    pub fn expanded_text(&self) -> Option<&str> {
        self.expanded.as_deref()
    }

    /// The rule that blocks `relative` (a path relative to the root, `/`-separated), or `None`
    /// when it is allowed. The root itself (`""`) is never blocked. `.` components, repeated
    /// and leading separators are dropped; a path with `..` cannot be placed under the root
    /// and counts as blocked (by the rule `..`).
    pub fn blocking_rule(&self, relative: &Path, is_dir: bool) -> Option<String> {
        let matcher = self.matcher.as_ref()?;
        // The matcher panics on a path that is not plainly under its root (`.//a`, `/a`).
        let mut plain = PathBuf::new();
        for component in relative.components() {
            match component {
                Component::Normal(part) => plain.push(part),
                Component::CurDir | Component::RootDir => {}
                Component::ParentDir | Component::Prefix(_) => return Some("..".to_string()),
            }
        }
        if plain.as_os_str().is_empty() {
            return None;
        }
        match matcher.matched_path_or_any_parents(&plain, is_dir) {
            ignore::Match::Ignore(glob) => Some(glob.original().to_string()),
            _ => None,
        }
    }

    /// Whether `relative` (see [`ClineIgnore::blocking_rule`]) is blocked.
    pub fn blocks(&self, relative: &Path, is_dir: bool) -> bool {
        self.blocking_rule(relative, is_dir).is_some()
    }

    /// Whether `path` as the model typed it (relative to `root`, or absolute) may be accessed.
    /// A trailing `/` marks a directory; paths outside `root` are not this file's concern.
    pub fn allows(&self, root: &Path, path: &str) -> bool {
        if self.matcher.is_none() {
            return true;
        }
        let path = path.replace('\\', "/");
        let is_dir = path.ends_with('/');
        let absolute = normalize(&root.join(&path));
        match absolute.strip_prefix(root) {
            Ok(relative) => !self.blocks(relative, is_dir),
            Err(_) => true,
        }
    }
}

/// The files `<root>/.clineignore` pulls in with `!include` (absolute, whether they exist or
/// not): they decide what is blocked as much as `.clineignore` itself, so they are protected
/// as it is.
pub fn included_files(root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(root.join(FILE_NAME)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(include_target)
        .map(|file| normalize(&root.join(file)))
        .collect()
}

/// The file an `!include FILE` line names.
fn include_target(line: &str) -> Option<&str> {
    line.trim_end_matches('\r')
        .trim()
        .strip_prefix("!include ")
        .map(str::trim)
}

/// The file's lines with every `!include FILE` line replaced by that file's lines (one level;
/// missing files are skipped), joined with `\n`. Carriage returns at line ends are dropped.
///
/// Each included file inside the root also gets a rule that blocks it, as `.clineignore`
/// blocks itself (Cline leaves it readable and writable: emptying it would unblock what it
/// lists). The rule is part of the expanded text, so it travels with the rules to plugins.
fn expand_includes(root: &Path, text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        match include_target(line) {
            Some(file) => {
                let included: PathBuf = root.join(file);
                if let Ok(rules) = std::fs::read_to_string(&included) {
                    lines.extend(rules.lines().map(|l| l.trim_end_matches('\r').to_string()));
                }
                if let Ok(relative) = normalize(&included).strip_prefix(root) {
                    if !relative.as_os_str().is_empty() {
                        lines.push(anchored_rule(relative));
                    }
                }
            }
            None => lines.push(line.to_string()),
        }
    }
    lines.join("\n")
}

/// A gitignore rule that matches exactly `relative` (from the root): anchored with a leading
/// `/`, with the pattern characters escaped.
fn anchored_rule(relative: &Path) -> String {
    let mut rule = String::from("/");
    for c in relative.to_string_lossy().chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#' | ' ') {
            rule.push('\\');
        }
        rule.push(c);
    }
    rule
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `paths` fuzz target: `.//secrets/a` reached the matcher as `/secrets/a`,
    /// which it refuses with a panic.
    #[test]
    fn paths_not_plainly_under_the_root_are_matched_without_a_panic() {
        let root = Path::new("/ws");
        let ignore = ClineIgnore::from_text(root, "#sely.txt*.log\nsecrets/\n");
        for path in [".//secrets/a", "/secrets/a", "./secrets/a", "secrets//a"] {
            assert_eq!(
                ignore.blocking_rule(Path::new(path), false).as_deref(),
                Some("secrets/"),
                "{path}"
            );
        }
        assert_eq!(ignore.blocking_rule(Path::new(".//a.txt"), false), None);
        assert_eq!(ignore.blocking_rule(Path::new("./"), true), None);
        assert_eq!(
            ignore
                .blocking_rule(Path::new("sub/../secrets/a"), false)
                .as_deref(),
            Some("..")
        );
    }

    #[test]
    fn matching_ignores_case_and_names_the_rule() {
        let root = Path::new("/work/project");
        let ignore = ClineIgnore::from_text(root, "secrets/\n.env\n");
        assert!(!ignore.allows(root, "SECRETS/key.txt"));
        assert!(!ignore.allows(root, ".ENV"));
        assert!(ignore.allows(root, "src/main.rs"));
        assert!(ignore.allows(root, "/elsewhere/.env"));
        assert_eq!(
            ignore
                .blocking_rule(Path::new("Secrets/a/b"), false)
                .as_deref(),
            Some("secrets/")
        );
        assert_eq!(
            ignore
                .blocking_rule(Path::new(".clineignore"), false)
                .as_deref(),
            Some(".clineignore")
        );
        assert_eq!(ignore.blocking_rule(Path::new(""), true), None);
        let again = ClineIgnore::from_expanded(root, ignore.expanded_text().unwrap_or(""));
        assert!(again.blocks(Path::new(".env"), false));
    }

    #[test]
    fn included_files_are_blocked_as_the_rules_are() {
        let Ok(dir) = tempfile::tempdir() else {
            return;
        };
        let root = dir.path();
        std::fs::create_dir(root.join("rules")).ok();
        std::fs::write(root.join("rules/secret list[1].txt"), "vault/\n").ok();
        std::fs::write(
            root.join(FILE_NAME),
            ".env\n!include rules/secret list[1].txt\n!include ../outside.txt\n",
        )
        .ok();
        let ignore = ClineIgnore::load(root);
        assert!(ignore.blocks(Path::new("vault/a"), false));
        assert!(ignore.blocks(Path::new("rules/secret list[1].txt"), false));
        assert!(!ignore.blocks(Path::new("rules/secret list1.txt"), false));
        assert!(!ignore.blocks(Path::new("rules/other.txt"), false));
        let again = ClineIgnore::from_expanded(root, ignore.expanded_text().unwrap_or(""));
        assert!(again.blocks(Path::new("rules/secret list[1].txt"), false));
        assert_eq!(
            included_files(root),
            [
                root.join("rules/secret list[1].txt"),
                root.parent().unwrap_or(root).join("outside.txt")
            ]
        );
    }

    #[test]
    fn an_empty_file_blocks_nothing() {
        let root = Path::new("/w");
        let ignore = ClineIgnore::from_text(root, "");
        assert!(!ignore.is_active());
        assert!(ignore.allows(root, ".clineignore"));
    }
}
