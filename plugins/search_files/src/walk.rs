//! Which files a search visits.
//!
//! Both modes start from ripgrep's defaults (the `ignore` crate's, plus `.rgignore` files):
//! hidden files and directories are skipped, and `.gitignore` (inside a git repository),
//! `.ignore`, `.rgignore`, `.git/info/exclude` and the global git excludes apply. They differ in
//! how `file_pattern` is applied:
//!
//! - Default: the pattern only narrows the walk. A file must match it (a `!` pattern excludes),
//!   and hidden or ignored files stay out whatever the pattern says.
//! - Cline's (`search_files.include_hidden`): the pattern is a ripgrep `--glob` override, as
//!   Cline passes it, `*` when none is given. A matching override takes precedence over the
//!   hidden and ignore rules, so `*` searches hidden and gitignored files too; a pattern made
//!   only of `!` exclusions overrides nothing, and the rules apply as usual.
//!
//! Patterns are relative to the searched directory. (ripgrep anchors `--glob` at its own working
//! directory, which for Cline is the editor's, so a pattern with a `/` never matched there.)

use std::path::Path;

use ignore::overrides::{Override, OverrideBuilder};
use ignore::{WalkBuilder, WalkParallel};

/// The pattern used when the model gives none (Cline's default).
pub const DEFAULT_PATTERN: &str = "*";

/// The parallel walk over `root` for a search with `file_pattern`.
///
/// `root` itself is always visited, even when a rule or the pattern would exclude it: a file
/// named explicitly is searched, as ripgrep does. An invalid pattern is an error.
pub fn walker(
    root: &Path,
    file_pattern: Option<&str>,
    include_hidden: bool,
) -> Result<WalkParallel, ignore::Error> {
    let pattern = file_pattern
        .filter(|p| !p.is_empty())
        .unwrap_or(DEFAULT_PATTERN);
    let globs = globs(root, pattern)?;
    let mut builder = WalkBuilder::new(root);
    builder.add_custom_ignore_filename(".rgignore");
    if include_hidden {
        builder.overrides(globs);
    } else if pattern != DEFAULT_PATTERN {
        builder.filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            !globs.matched(entry.path(), is_dir).is_ignore()
        });
    }
    Ok(builder.build_parallel())
}

/// Checks that `file_pattern` is a valid glob (ripgrep refuses an invalid `--glob` whatever it
/// searches, a single file included).
pub fn check_pattern(root: &Path, file_pattern: Option<&str>) -> Result<(), ignore::Error> {
    let pattern = file_pattern
        .filter(|p| !p.is_empty())
        .unwrap_or(DEFAULT_PATTERN);
    globs(root, pattern).map(|_| ())
}

/// The pattern as ripgrep's glob matcher: `!` negates, a pattern without `/` matches names at
/// any depth, a pattern that selects files leaves directories alone.
fn globs(root: &Path, pattern: &str) -> Result<Override, ignore::Error> {
    let mut builder = OverrideBuilder::new(root);
    builder.add(pattern)?;
    builder.build()
}
