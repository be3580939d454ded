//! The search itself: ripgrep's libraries in process, parallel over files.
//!
//! The regex and searcher are configured as ripgrep 14 configures them for
//! `rg -e REGEX --context 1` (Rust regex syntax, `^`/`$` at line boundaries, no match across a
//! line end or a NUL byte, files with a NUL byte in their first block skipped as binary, UTF-16
//! files with a byte-order mark transcoded), except that line numbers are not counted: the
//! result format does not show them, and not counting saves a pass over every byte read.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;

use crate::collect::{Collector, FileHits};
use crate::read::FileReader;
use crate::sink::FileSink;
use crate::walk::walker;

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
    /// The regex does not compile.
    Regex(String),
    /// The file pattern is not a valid glob.
    Pattern(String),
    /// The path to search cannot be read.
    Root(std::io::Error),
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

/// Searches `root` (a directory, recursively, or one file) and returns the first `cap` hits in
/// path order (see [`Collector`]), grouped by file. Files that cannot be read are skipped.
pub fn search(
    root: &Path,
    query: &Query<'_>,
    cap: usize,
    gate: &dyn Gate,
) -> Result<Vec<FileHits>, SearchError> {
    let matcher = matcher(query.regex)?;
    let meta = std::fs::metadata(root).map_err(SearchError::Root)?;
    // A device or pipe could be read forever; ripgrep would, but a host cannot stop a search
    // thread in the middle of a read.
    if !meta.is_file() && !meta.is_dir() {
        return Err(SearchError::Root(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file or a directory",
        )));
    }
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
            // Only regular files; a symbolic link is not followed, unless it was named itself
            // (then it leads to a regular file, checked above).
            let is_file = file_type.is_some_and(|t| t.is_file())
                || (entry.depth() == 0 && !file_type.is_some_and(|t| t.is_dir()));
            if !is_file {
                return WalkState::Continue;
            }
            let mut sink = FileSink::default();
            if reader
                .search(&mut searcher, &matcher, path, &mut sink)
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

/// The regex as ripgrep builds it for a line-oriented search.
fn matcher(regex: &str) -> Result<RegexMatcher, SearchError> {
    RegexMatcherBuilder::new()
        .multi_line(true)
        .octal(false)
        .line_terminator(Some(b'\n'))
        .dot_matches_new_line(false)
        .ban_byte(Some(b'\0'))
        .build(regex)
        .map_err(|e| SearchError::Regex(e.to_string()))
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
