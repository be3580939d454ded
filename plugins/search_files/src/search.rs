//! The search itself: ripgrep's libraries in process, parallel over files.
//!
//! The regex and searcher are configured as ripgrep 14 configures them for
//! `rg -e REGEX --context 1` (Rust regex syntax, `^`/`$` at line boundaries, no match across a
//! line end or a NUL byte, files with a NUL byte in their first block skipped as binary, UTF-16
//! files with a byte-order mark transcoded), except that line numbers are not counted: the
//! result format does not show them, and not counting saves a pass over every byte read.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use tool_api::model::PathVerdict;
use tool_api::workspace::{Dir, FsError, Workspace};

use crate::collect::{Collector, FileHits};
use crate::format::MAX_RESULTS;
use crate::read::FileReader;
use crate::sink::FileSink;
use crate::walk::{check_pattern, walker};

/// What to search for.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// The regex, in Rust syntax.
    pub regex: &'a str,
    /// A glob that files must match (`!` excludes); `None` or `""` for every file.
    pub file_pattern: Option<&'a str>,
    /// Cline's behaviour: the pattern overrides the hidden-file and ignore-file rules.
    pub include_hidden: bool,
}

/// What the search needs from its caller while it runs; called from the search threads.
pub trait Gate: Sync {
    /// Whether `file`, which has hits, may appear in the results (`.clineignore`).
    fn allows(&self, file: &Path) -> bool;
    /// Whether the search should stop now.
    fn is_cancelled(&self) -> bool;
}

/// Why a search did not run to the end.
#[derive(Debug)]
pub enum SearchError {
    /// The regex does not compile: ripgrep's message for it.
    Regex(String),
    /// The file pattern is not a valid glob: ripgrep's message for it.
    Pattern(String),
    /// The path to search cannot be read.
    Root(FsError),
    /// The caller cancelled the search.
    Cancelled,
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Regex(e) => write!(f, "invalid regex: {e}"),
            Self::Pattern(e) => write!(f, "invalid file pattern: {e}"),
            Self::Root(e) => write!(f, "cannot search the path: {e}"),
            Self::Cancelled => write!(f, "the search was cancelled"),
        }
    }
}

impl std::error::Error for SearchError {}

/// What a search covers: a directory (recursively) or one file, reached through the workspace
/// capability.
pub enum Target<'w> {
    /// A directory: its handle and its absolute path as named (the walk reports paths below it).
    Dir {
        /// The directory's handle.
        dir: Dir<'w>,
        /// Its path as named.
        path: PathBuf,
    },
    /// One file: the handle of its directory, its name there, and its path as named.
    File {
        /// The directory holding the file.
        dir: Dir<'w>,
        /// The file's name in it.
        name: OsString,
        /// Its path as named.
        path: PathBuf,
    },
}

/// Searches a target and returns the first `cap` hits in path order (see [`Collector`]),
/// grouped by file. Files that cannot be read, or that `.clineignore` blocks, are skipped.
///
/// The walk (ripgrep's `ignore` crate) decides which names are visited and reads directories by
/// path; every file is opened beneath the target's handle without following a link, so a
/// directory swapped for a link during the walk can make it visit a name, but never read
/// anything outside the target.
pub fn search(
    target: &Target<'_>,
    query: &Query<'_>,
    cap: usize,
    gate: &dyn Gate,
) -> Result<Vec<FileHits>, SearchError> {
    let matcher = matcher(query.regex)?;
    let (anchor, root) = match target {
        Target::Dir { dir, path } => (dir, path.as_path()),
        Target::File { dir, name, path } => {
            check_pattern(path, query.file_pattern)
                .map_err(|e| SearchError::Pattern(e.to_string()))?;
            let searcher = searcher(cap);
            let collector = Collector::new(cap);
            let mut sink = FileSink::default();
            let mut file = dir.open_file(name).map_err(SearchError::Root)?;
            FileReader::default()
                .search_file(&mut searcher.clone(), &matcher, &mut file, &mut sink)
                .map_err(|e| SearchError::Root(FsError::Io(e)))?;
            let hits = sink.into_hits();
            if !hits.is_empty() && gate.allows(path) {
                collector.add(path.clone(), hits);
            }
            return Ok(collector.into_files());
        }
    };
    let walk = walker(root, query.file_pattern, query.include_hidden)
        .map_err(|e| SearchError::Pattern(e.to_string()))?;
    let searcher = searcher(cap);
    let collector = Collector::new(cap);
    let cancelled = AtomicBool::new(false);
    walk.run(|| {
        let matcher = matcher.clone();
        let mut searcher = searcher.clone();
        let mut reader = FileReader::default();
        let collector = &collector;
        let cancelled = &cancelled;
        Box::new(move |entry| {
            // Unreadable directories and entries are skipped, as ripgrep skips them.
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if gate.is_cancelled() {
                cancelled.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            let path = entry.path();
            if collector.is_beyond_cutoff(path) {
                return WalkState::Skip;
            }
            let file_type = entry.file_type();
            // Only regular files; a symbolic link is not followed.
            let is_file = file_type.is_some_and(|t| t.is_file());
            if !is_file {
                return WalkState::Continue;
            }
            let Ok(relative) = path.strip_prefix(root) else {
                return WalkState::Continue;
            };
            let mut sink = FileSink::default();
            if reader
                .search(&mut searcher, &matcher, anchor, relative, &mut sink)
                .is_ok()
            {
                let hits = sink.into_hits();
                if !hits.is_empty() && gate.allows(path) {
                    collector.add(path.to_path_buf(), hits);
                }
            }
            WalkState::Continue
        })
    });
    if cancelled.load(Ordering::Relaxed) {
        return Err(SearchError::Cancelled);
    }
    Ok(collector.into_files())
}

/// Searches what a verdict names: a directory, recursively, or one file.
pub(crate) fn search_verdict(
    workspace: &Workspace,
    verdict: &PathVerdict,
    query: &Query<'_>,
    gate: &dyn Gate,
) -> Result<Vec<FileHits>, SearchError> {
    let target = match workspace.open_dir(verdict) {
        Ok(dir) => Target::Dir {
            dir,
            path: PathBuf::from(&verdict.absolute),
        },
        Err(FsError::NotADirectory) => {
            let (dir, name, _) = workspace
                .parent_dir(verdict, false)
                .map_err(SearchError::Root)?;
            Target::File {
                dir,
                name,
                path: PathBuf::from(&verdict.absolute),
            }
        }
        Err(e) => return Err(SearchError::Root(e)),
    };
    search(&target, query, MAX_RESULTS, gate)
}

/// Checks the regex and the file pattern as ripgrep does before it searches anything: an
/// invalid one is an error whatever the path (`root` anchors the pattern).
pub fn validate(query: &Query<'_>, root: &Path) -> Result<(), SearchError> {
    matcher(query.regex)?;
    check_pattern(root, query.file_pattern).map_err(|e| SearchError::Pattern(e.to_string()))
}

/// The regex as ripgrep builds it for a line-oriented search.
fn matcher(regex: &str) -> Result<RegexMatcher, SearchError> {
    RegexMatcherBuilder::new()
        .multi_line(true)
        .octal(false)
        .line_terminator(Some(b'\n'))
        .dot_matches_new_line(false)
        .ban_byte(Some(b'\0'))
        .build(regex)
        .map_err(|e| SearchError::Regex(regex_error(regex, &e.to_string())))
}

/// What ripgrep prints for a regex it refuses: the parser's error on the pattern as given
/// (grep-regex's own message quotes the pattern wrapped in a group), else grep-regex's message.
fn regex_error(regex: &str, matcher_error: &str) -> String {
    match regex_syntax::ParserBuilder::new()
        .multi_line(true)
        .octal(false)
        .build()
        .parse(regex)
    {
        Err(e) => e.to_string(),
        Ok(_) => matcher_error.to_string(),
    }
}

/// One line of context each side; a file stops after `cap` matches (and that match's context
/// line), since no more of its hits could be shown.
fn searcher(cap: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(false)
        .before_context(1)
        .after_context(1)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .max_matches(u64::try_from(cap).ok())
        .build()
}
