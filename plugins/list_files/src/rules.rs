//! The ignore rules of a recursive listing, as Cline builds them for its glob library.
//!
//! Cline hands globby a list of ignore globs, matched against paths relative to the listed
//! directory: `**/<d>/**` for each default directory name, `**/.*/**` for hidden directories,
//! and two globs per `.gitignore` line (`**/<p>` and `**/<p>/**`). In globby a glob ending in
//! `/**` hides a directory (it is tested with a trailing slash) and everything in it, but not a
//! file of that name; a glob without it hides files and directories alike. Each glob becomes
//! gitignore lines with the same meaning: `**/<p>/**` becomes `**/<p>/` (the directory itself)
//! plus `**/<p>/**` (its contents), and `**/<p>` stays as it is. The `ignore` crate does the glob
//! matching; no rule is negated, so a path is hidden as soon as one matcher matches it.

use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Directory names Cline never descends into during a recursive listing (as `**/<d>/**`).
pub const DEFAULT_IGNORED_DIRS: [&str; 14] = [
    "node_modules",
    "__pycache__",
    "env",
    "venv",
    "target/dependency",
    "build/dependencies",
    "dist",
    "out",
    "bundle",
    "vendor",
    "tmp",
    "temp",
    "deps",
    "Pods",
];

/// The ignore rules gathered so far in one walk.
#[derive(Debug, Default)]
pub struct IgnoreRules {
    /// One matcher for the defaults and one per `.gitignore` read, in the order they were added.
    matchers: Vec<Gitignore>,
}

impl IgnoreRules {
    /// The default rules for listing `dir`: the ignored directory names, and hidden directories
    /// unless `dir` is itself hidden (listing `.github` shows what is inside it).
    pub fn defaults(dir: &Path) -> Self {
        let mut globs: Vec<String> = DEFAULT_IGNORED_DIRS
            .iter()
            .map(|d| format!("**/{d}/**"))
            .collect();
        let target_hidden = dir
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'));
        if !target_hidden {
            globs.push("**/.*/**".to_string());
        }
        let mut rules = Self::default();
        rules.add_globs(dir, &globs);
        rules
    }

    /// Adds the rules of a `.gitignore` text; `root` is the listed directory.
    pub fn add_gitignore_text(&mut self, root: &Path, text: &str) {
        let globs = gitignore_to_globs(text);
        self.add_globs(root, &globs);
    }

    /// Whether a path relative to the listed directory (with `/` separators) is hidden.
    pub fn is_ignored(&self, relative: &str, is_dir: bool) -> bool {
        self.matchers
            .iter()
            .any(|m| m.matched(relative, is_dir).is_ignore())
    }

    fn add_globs(&mut self, root: &Path, globs: &[String]) {
        if globs.is_empty() {
            return;
        }
        let mut builder = GitignoreBuilder::new(root);
        for glob in globs {
            let lines = match glob.strip_suffix("/**") {
                Some(dir) => vec![format!("{dir}/"), glob.clone()],
                None => vec![glob.clone()],
            };
            for line in lines {
                // A glob the matcher cannot parse (an unclosed `[`, a dangling `\`) hides
                // nothing, which is also what it does in Cline's glob library.
                let _ = builder.add_line(None, &line);
            }
        }
        if let Ok(matcher) = builder.build() {
            self.matchers.push(matcher);
        }
    }
}

/// Cline's conversion of a `.gitignore` file into ignore globs: lines are trimmed; blank lines,
/// `#` comments and `!` negations are skipped; `dir/` gives `**/dir` and `**/dir/**`; any other
/// pattern `p` gives `**/p` and `**/p/**`. Patterns therefore apply at any depth below the listed
/// directory, whichever directory their `.gitignore` came from.
///
/// A leading `/` (an anchored gitignore pattern) is dropped: Cline's `**//coverage` hides every
/// `coverage` entry, exactly as `**/coverage` does.
pub fn gitignore_to_globs(text: &str) -> Vec<String> {
    let mut globs = Vec::new();
    for line in text.split('\n') {
        // JavaScript's trim(), which also removes a byte-order mark.
        let trimmed = line.trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}');
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        let pattern = trimmed.strip_suffix('/').unwrap_or(trimmed);
        let pattern = pattern.trim_start_matches('/');
        if pattern.is_empty() {
            continue;
        }
        globs.push(format!("**/{pattern}"));
        globs.push(format!("**/{pattern}/**"));
    }
    globs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignore_lines_become_recursive_globs() {
        let globs = gitignore_to_globs("# build output\ndist/\n*.log\r\n/coverage\n!keep.log\n\n");
        assert_eq!(
            globs,
            [
                "**/dist",
                "**/dist/**",
                "**/*.log",
                "**/*.log/**",
                "**/coverage",
                "**/coverage/**"
            ]
        );
    }

    #[test]
    fn directory_globs_hide_directories_but_not_files() {
        let rules = IgnoreRules::defaults(Path::new("/work/project"));
        assert!(rules.is_ignored(".git", true));
        assert!(rules.is_ignored("src/.cache", true));
        assert!(!rules.is_ignored(".env", false));
        assert!(rules.is_ignored("node_modules", true));
        assert!(!rules.is_ignored("node_modules", false));
        assert!(rules.is_ignored("target/dependency", true));
        assert!(!rules.is_ignored("target/debug", true));
        assert!(rules.is_ignored("a/build/dependencies", true));
    }

    #[test]
    fn hidden_targets_lift_the_hidden_directory_rule() {
        let rules = IgnoreRules::defaults(Path::new("/work/project/.github"));
        assert!(!rules.is_ignored("workflows/.cache", true));
        assert!(rules.is_ignored("workflows/node_modules", true));
    }
}
