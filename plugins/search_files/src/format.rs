//! The text the model receives (Cline's `formatResults`).
//!
//! ```text
//! Found 2 results.
//!
//! src/a.ts
//! │----
//! │line before
//! │the match
//! │line after
//! │----
//! │the second match
//! │----
//! ```
//!
//! Files in the order given, each result's lines with trailing white space trimmed, `│----`
//! between the results of a file, a blank line between files. At most [`MAX_RESULTS`] results;
//! reaching that many switches the header to "Showing first 300 of 300+ results". The whole
//! text stays under [`MAX_OUTPUT_BYTES`]: a file header, result, separator or closing that
//! would reach it ends the output, followed by [`TRUNCATION_NOTICE`] if that still fits.

use std::path::Path;

use crate::collect::FileHits;
use crate::sink::Hit;

/// The most results listed.
pub const MAX_RESULTS: usize = 300;

/// The byte budget of the whole text: 0.25 MiB.
pub const MAX_OUTPUT_BYTES: usize = 262_144;

/// The text when nothing was found, and when the search could not run.
pub const NO_RESULTS: &str = "Found 0 results.";

/// Appended when the byte budget cut the output short.
pub const TRUNCATION_NOTICE: &str = "\n[Results truncated due to exceeding the 0.25MB size limit. Please use a more specific search pattern.]";

/// Between two results of one file, and after a file's last result.
const SEPARATOR: &str = "│----\n";

/// Formats the results of a search; paths are shown relative to `cwd` with `/` separators.
pub fn format_results(files: &[FileHits], cwd: &Path) -> String {
    let total: usize = files.iter().map(|f| f.hits.len()).sum();
    let header = if total >= MAX_RESULTS {
        format!(
            "Showing first {MAX_RESULTS} of {MAX_RESULTS}+ results. Use a more specific search if necessary.\n\n"
        )
    } else if total == 1 {
        "Found 1 result.\n\n".to_string()
    } else {
        format!("Found {total} results.\n\n")
    };
    let mut out = Output::new(header);
    let mut remaining = MAX_RESULTS;
    for file in files {
        if remaining == 0 || out.is_full() {
            break;
        }
        let hits = &file.hits[..file.hits.len().min(remaining)];
        remaining -= hits.len();
        write_file(&mut out, &display_path(&file.path, cwd), hits);
    }
    out.finish()
}

/// One file's block; stops where the budget runs out.
fn write_file(out: &mut Output, shown: &str, hits: &[Hit]) {
    if !out.push(&format!("{shown}\n{SEPARATOR}")) {
        return;
    }
    for (index, hit) in hits.iter().enumerate() {
        // A result goes in whole or not at all.
        if !out.push(&result_lines(hit)) {
            return;
        }
        if index + 1 < hits.len() && !out.push(SEPARATOR) {
            return;
        }
    }
    out.push(&format!("{SEPARATOR}\n"));
}

/// A result's lines (context before, the match, context after), each as `│text\n`.
fn result_lines(hit: &Hit) -> String {
    let mut text = String::new();
    for line in hit.before.iter().chain([&hit.line]).chain(&hit.after) {
        text.push('│');
        text.push_str(trim_end_js(&String::from_utf8_lossy(line)));
        text.push('\n');
    }
    text
}

/// The output with its byte budget.
struct Output {
    text: String,
    full: bool,
}

impl Output {
    fn new(header: String) -> Self {
        Self {
            text: header,
            full: false,
        }
    }

    /// Appends `piece` unless that would reach the budget, which then counts as exhausted.
    fn push(&mut self, piece: &str) -> bool {
        if self.full || self.text.len() + piece.len() >= MAX_OUTPUT_BYTES {
            self.full = true;
            return false;
        }
        self.text.push_str(piece);
        true
    }

    fn is_full(&self) -> bool {
        self.full
    }

    fn finish(mut self) -> String {
        if self.full && self.text.len() + TRUNCATION_NOTICE.len() < MAX_OUTPUT_BYTES {
            self.text.push_str(TRUNCATION_NOTICE);
        }
        trim_js(&self.text).to_string()
    }
}

/// `path` relative to `cwd` with `/` separators (Node's `path.relative`, then POSIX form).
pub fn display_path(path: &Path, cwd: &Path) -> String {
    let relative = pathdiff::diff_paths(path, cwd).unwrap_or_else(|| path.to_path_buf());
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// JavaScript's white space (`String.prototype.trim`): Rust's `char::is_whitespace` differs by
/// U+0085 (white space only in Rust) and U+FEFF (only in JavaScript).
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// JavaScript's `trimEnd`.
fn trim_end_js(text: &str) -> &str {
    text.trim_end_matches(is_js_whitespace)
}

/// JavaScript's `trim`.
fn trim_js(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn hit(before: &[&str], line: &str, after: &[&str]) -> Hit {
        let b = |s: &&str| s.as_bytes().to_vec();
        Hit {
            before: before.iter().map(b).collect(),
            line: line.as_bytes().to_vec(),
            after: after.iter().map(b).collect(),
        }
    }

    fn file(path: &str, hits: Vec<Hit>) -> FileHits {
        FileHits {
            path: PathBuf::from("/ws").join(path),
            hits,
        }
    }

    #[test]
    fn results_are_grouped_by_file_with_separators() {
        let files = vec![
            file(
                "src/a.ts",
                vec![
                    hit(&["before\n"], "TODO one  \r\n", &[]),
                    hit(&[], "TODO two\n", &["after\n"]),
                ],
            ),
            file("b.txt", vec![hit(&[], "TODO\n", &[])]),
        ];
        assert_eq!(
            format_results(&files, Path::new("/ws")),
            "Found 3 results.\n\nsrc/a.ts\n│----\n│before\n│TODO one\n│----\n│TODO two\n│after\n│----\n\nb.txt\n│----\n│TODO\n│----"
        );
    }

    #[test]
    fn one_result_and_none() {
        let files = vec![file("a", vec![hit(&[], "x\n", &[])])];
        assert_eq!(
            format_results(&files, Path::new("/ws")),
            "Found 1 result.\n\na\n│----\n│x\n│----"
        );
        assert_eq!(format_results(&[], Path::new("/ws")), NO_RESULTS);
    }

    #[test]
    fn the_cap_switches_the_header_and_limits_the_list() {
        let files = vec![
            file("a", vec![hit(&[], "x\n", &[]); 299]),
            file("b", vec![hit(&[], "y\n", &[]); 5]),
        ];
        let text = format_results(&files, Path::new("/ws"));
        assert!(text.starts_with(
            "Showing first 300 of 300+ results. Use a more specific search if necessary.\n\na\n"
        ));
        assert!(text.ends_with("\n\nb\n│----\n│y\n│----"), "{text}");
        assert_eq!(text.matches("│y").count(), 1);
    }

    #[test]
    fn the_byte_budget_cuts_whole_results_and_says_so() {
        let long = format!("{}\n", "w".repeat(100_000));
        let files = vec![file("wide", vec![hit(&[], &long, &[]); 3])];
        let text = format_results(&files, Path::new("/ws"));
        let expected = format!(
            "Found 3 results.\n\nwide\n│----\n│{w}\n│----\n│{w}\n│----\n{TRUNCATION_NOTICE}",
            w = "w".repeat(100_000)
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn paths_outside_cwd_are_relative_with_dot_dot() {
        assert_eq!(
            display_path(Path::new("/other/x/y.txt"), Path::new("/ws/sub")),
            "../../other/x/y.txt"
        );
        assert_eq!(display_path(Path::new("/ws/a/b"), Path::new("/ws")), "a/b");
    }

    #[test]
    fn trimming_follows_javascript() {
        assert_eq!(trim_end_js("a \t\u{feff}\u{3000}\r\n"), "a");
        assert_eq!(trim_end_js("a\u{85}"), "a\u{85}");
    }
}
