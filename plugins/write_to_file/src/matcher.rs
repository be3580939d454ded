//! The SEARCH/REPLACE matcher (Cline's `constructNewFileContent`, version v1), as a pure function.
//!
//! A diff is a list of blocks:
//!
//! ```text
//! ------- SEARCH
//! text to find
//! =======
//! text to put in its place
//! +++++++ REPLACE
//! ```
//!
//! Each SEARCH text is looked for after the end of the previous block's match: exactly first,
//! then line by line ignoring surrounding whitespace, then (for longer blocks) by its first and
//! last lines only, and as a last resort exactly anywhere in the file (an out-of-order block).
//! The behaviour, quirks included, follows Cline v4.0.12 as pinned by the conformance vectors
//! (`replace_in_file.jsonl`); see the spec, §5.5.
//!
//! Offsets are UTF-8 byte offsets inside this module and UTF-16 code units (JavaScript's string
//! indices) in [`Replaced::match_indices`].

use crate::js;

/// The outcome of applying a diff to a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// The new text of the file. For a non-final (streaming) call: the text up to the end of the
    /// last replacement line seen so far.
    pub new_content: String,
    /// Where each applied block matched in the original, in UTF-16 code units: sorted by position
    /// for a final call, in block order otherwise.
    pub match_indices: Vec<usize>,
    /// The 1-based line in the original of each entry of `match_indices`.
    pub start_line_numbers: Vec<usize>,
}

/// The error for an empty SEARCH section applied to a non-empty file.
pub const EMPTY_SEARCH_ERROR: &str = "Empty SEARCH block detected with non-empty file. This usually indicates a malformed SEARCH marker.\nPlease ensure your SEARCH marker follows the correct format:\n- Use '------- SEARCH' (7+ dashes + space + SEARCH)\n";

/// One resolved block: replace `original[start..end]` (bytes) with `content`.
///
/// `end` may be one past the end of the original: a line-based match counts a newline after
/// every matched line, including a last line that has none (Cline's arithmetic; slicing clamps).
#[derive(Debug, Clone)]
struct Replacement {
    start: usize,
    end: usize,
    content: String,
}

/// Applies `diff` to `original`. `is_final` is false while the tool call is still streaming.
///
/// Errors carry Cline's exact messages (`...does not match anything in the file.`,
/// `...is malformatted.`, [`EMPTY_SEARCH_ERROR`]).
pub fn construct_new_file_content(
    diff: &str,
    original: &str,
    is_final: bool,
) -> Result<Replaced, String> {
    let mut lines: Vec<&str> = diff.split('\n').collect();
    // While streaming, the last line may be a marker that is still being typed; drop it so it
    // does not end up in the text. The check runs for final calls too (Cline does the same).
    if lines.last().is_some_and(|last| is_partial_marker(last)) {
        lines.pop();
    }

    let mut state = State::default();
    for line in lines {
        state.process_line(line, original)?;
    }
    Ok(state.finish(original, is_final))
}

/// The matcher's state while it walks the diff's lines. The fields mirror Cline's local
/// variables one to one, so that malformed diffs behave exactly as they do there.
#[derive(Default)]
struct State {
    /// The text built so far for a streaming preview.
    result: String,
    /// End of the previous in-order match: where the next SEARCH starts looking.
    last_processed: usize,
    search: String,
    replace: String,
    in_search: bool,
    in_replace: bool,
    /// The current block's match (`searchMatchIndex` / `searchEndIndex`); `None` is Cline's -1.
    matched: Option<(usize, usize)>,
    /// The current block matched before `last_processed`.
    out_of_order: bool,
    replacements: Vec<Replacement>,
}

impl State {
    fn process_line(&mut self, line: &str, original: &str) -> Result<(), String> {
        if is_search_start(line) {
            // Cline leaves `inReplace` and the match as they are here; a block without its
            // REPLACE marker is then overwritten by the next one.
            self.in_search = true;
            self.search.clear();
            self.replace.clear();
        } else if is_separator(line) {
            self.in_search = false;
            self.in_replace = true;
            let (start, end) = resolve_search(&self.search, original, self.last_processed)?;
            self.matched = Some((start, end));
            if start < self.last_processed {
                self.out_of_order = true;
            }
            if !self.out_of_order {
                self.result
                    .push_str(js::slice(original, self.last_processed, start));
            }
        } else if is_replace_end(line) {
            let Some((start, end)) = self.matched else {
                return Err(format!(
                    "The SEARCH block:\n{}\n...is malformatted.",
                    js::trim_end(&self.search)
                ));
            };
            self.replacements.push(Replacement {
                start,
                end,
                content: std::mem::take(&mut self.replace),
            });
            if !self.out_of_order {
                self.last_processed = end;
            }
            self.in_search = false;
            self.in_replace = false;
            self.search.clear();
            self.matched = None;
            self.out_of_order = false;
        } else if self.in_search {
            // Lines come back with the newline the split removed, so a SEARCH text always ends
            // in "\n" and only matches whole lines' ends.
            self.search.push_str(line);
            self.search.push('\n');
        } else if self.in_replace {
            self.replace.push_str(line);
            self.replace.push('\n');
            if self.matched.is_some() && !self.out_of_order {
                self.result.push_str(line);
                self.result.push('\n');
            }
        }
        // Anything else (prose around the blocks) is ignored.
        Ok(())
    }

    fn finish(mut self, original: &str, is_final: bool) -> Replaced {
        if is_final {
            // A last block without its `+++++++ REPLACE` marker is completed implicitly.
            if self.in_replace {
                if let Some((start, end)) = self.matched {
                    self.replacements.push(Replacement {
                        start,
                        end,
                        content: std::mem::take(&mut self.replace),
                    });
                }
            }
            // Stable, like JavaScript's sort: equal starts keep block order.
            self.replacements.sort_by_key(|r| r.start);
            let mut text = String::with_capacity(original.len());
            let mut position = 0;
            for replacement in &self.replacements {
                // Overlapping blocks are not detected (Cline's quirk): a start before the
                // current position copies nothing, and the position follows the block's end.
                text.push_str(js::slice(original, position, replacement.start));
                text.push_str(&replacement.content);
                position = replacement.end;
            }
            text.push_str(js::slice(original, position, original.len()));
            self.result = text;
        }
        let starts: Vec<usize> = self.replacements.iter().map(|r| r.start).collect();
        Replaced {
            new_content: self.result,
            match_indices: starts
                .iter()
                .map(|&s| js::utf16_offset(original, s))
                .collect(),
            start_line_numbers: starts.iter().map(|&s| line_number(original, s)).collect(),
        }
    }
}

/// Finds where a SEARCH text applies, trying Cline's strategies in order.
fn resolve_search(
    search: &str,
    original: &str,
    last_processed: usize,
) -> Result<(usize, usize), String> {
    if search.is_empty() {
        // An empty SEARCH inserts into an empty file; anywhere else it is most likely a
        // mistyped SEARCH marker whose lines were skipped.
        return if original.is_empty() {
            Ok((0, 0))
        } else {
            Err(EMPTY_SEARCH_ERROR.to_string())
        };
    }
    if let Some(i) = js::index_of(original, search, last_processed) {
        return Ok((i, i + search.len()));
    }
    if let Some(span) = line_trimmed_match(original, search, last_processed) {
        return Ok(span);
    }
    if let Some(span) = block_anchor_match(original, search, last_processed) {
        return Ok(span);
    }
    // Last resort: an exact match anywhere, even before the previous block.
    if let Some(i) = js::index_of(original, search, 0) {
        return Ok((i, i + search.len()));
    }
    Err(format!(
        "The SEARCH block:\n{}\n...does not match anything in the file.",
        js::trim_end(search)
    ))
}

/// The original's lines (split on "\n", so a "\r" stays on its line) and the byte offset where
/// each starts, counting one newline after every line (also after the last, as Cline does).
struct Lines<'a> {
    lines: Vec<&'a str>,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let lines: Vec<&str> = text.split('\n').collect();
        let mut starts = Vec::with_capacity(lines.len() + 1);
        let mut offset = 0;
        for line in &lines {
            starts.push(offset);
            offset += line.len() + 1;
        }
        starts.push(offset);
        Self { lines, starts }
    }

    /// The first line at or after `index`: Cline advances whole lines while their start is
    /// before `index`, so an index inside a line moves on to the next one.
    fn first_line_from(&self, index: usize) -> usize {
        let mut line = 0;
        while line < self.lines.len() && self.starts[line] < index {
            line += 1;
        }
        line
    }

    /// The byte span of lines `first..first + count`, each with its newline.
    fn span(&self, first: usize, count: usize) -> (usize, usize) {
        (self.starts[first], self.starts[first + count])
    }
}

/// The SEARCH text's lines without the empty one its final newline produces.
fn search_lines(search: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = search.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// Line-by-line match with both sides trimmed, from the line at `start_index` on; the span
/// covers the original's whole lines. (This also lets LF SEARCH text match a CRLF file.)
fn line_trimmed_match(original: &str, search: &str, start_index: usize) -> Option<(usize, usize)> {
    let original_lines = Lines::new(original);
    let wanted: Vec<&str> = search_lines(search).into_iter().map(js::trim).collect();
    let count = wanted.len();
    let last_start = original_lines.lines.len().checked_sub(count)?;
    (original_lines.first_line_from(start_index)..=last_start)
        .find(|&i| {
            wanted
                .iter()
                .enumerate()
                .all(|(j, w)| js::trim(original_lines.lines[i + j]) == *w)
        })
        .map(|i| original_lines.span(i, count))
}

/// Match on the first and last lines only (trimmed), for SEARCH texts of three or more lines.
fn block_anchor_match(original: &str, search: &str, start_index: usize) -> Option<(usize, usize)> {
    // Cline counts the lines before dropping the empty one after the final newline, so a
    // two-line SEARCH text already qualifies (and then behaves like the line-trimmed match).
    if search.split('\n').count() < 3 {
        return None;
    }
    let lines = search_lines(search);
    let (first, last) = (js::trim(lines.first()?), js::trim(lines.last()?));
    let size = lines.len();
    let original_lines = Lines::new(original);
    let last_start = original_lines.lines.len().checked_sub(size)?;
    (original_lines.first_line_from(start_index)..=last_start)
        .find(|&i| {
            js::trim(original_lines.lines[i]) == first
                && js::trim(original_lines.lines[i + size - 1]) == last
        })
        .map(|i| original_lines.span(i, size))
}

/// The 1-based line of a byte offset (Cline's `getLineNumberFromCharIndex`).
fn line_number(text: &str, offset: usize) -> usize {
    js::slice(text, 0, offset).matches('\n').count() + 1
}

/// `^-{3,} SEARCH>?$` or the legacy `^<{3,} SEARCH>?$`.
fn is_search_start(line: &str) -> bool {
    is_marker(line, '-', "SEARCH") || is_marker(line, '<', "SEARCH")
}

/// Whether any line of `diff` is a SEARCH marker (`------- SEARCH` or the legacy `<<<<<<< SEARCH`).
pub fn has_search_marker(diff: &str) -> bool {
    diff.split('\n').any(is_search_start)
}

/// `^={3,}$`.
fn is_separator(line: &str) -> bool {
    line.len() >= 3 && line.bytes().all(|b| b == b'=')
}

/// `^\+{3,} REPLACE>?$` or the legacy `^>{3,} REPLACE>?$`.
fn is_replace_end(line: &str) -> bool {
    is_marker(line, '+', "REPLACE") || is_marker(line, '>', "REPLACE")
}

/// Three or more `fill` characters, a space, `word`, and an optional `>`; nothing else.
fn is_marker(line: &str, fill: char, word: &str) -> bool {
    let rest = line.trim_start_matches(fill);
    let run = line.len() - rest.len();
    if run < 3 {
        return false;
    }
    let rest = rest.strip_prefix(' ').and_then(|r| r.strip_prefix(word));
    matches!(rest, Some("" | ">"))
}

/// A last line that starts like a marker but is not a complete one.
fn is_partial_marker(line: &str) -> bool {
    line.starts_with(['-', '<', '=', '+', '>'])
        && !is_search_start(line)
        && !is_separator(line)
        && !is_replace_end(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_recognised_exactly() {
        assert!(is_search_start("------- SEARCH"));
        assert!(is_search_start("--- SEARCH>"));
        assert!(is_search_start("<<<<<<< SEARCH"));
        assert!(!is_search_start("-- SEARCH"));
        assert!(!is_search_start("------- SEARCH "));
        assert!(!is_search_start("------- search"));
        assert!(!is_search_start("-------SEARCH"));
        assert!(is_separator("==="));
        assert!(!is_separator("=="));
        assert!(!is_separator("======= "));
        assert!(is_replace_end("+++++++ REPLACE"));
        assert!(is_replace_end(">>>>>>> REPLACE>"));
        assert!(!is_replace_end("+++++++ REPLACE>>"));
        assert!(is_partial_marker("+++"));
        assert!(is_partial_marker("-"));
        assert!(!is_partial_marker("plain"));
        assert!(!is_partial_marker("======="));
    }

    #[test]
    fn non_ascii_offsets_are_reported_in_utf16_units() {
        let original = "😀 smile\nkeep\nchange me\n";
        let diff = "------- SEARCH\nchange me\n=======\nchanged\n+++++++ REPLACE";
        let replaced = construct_new_file_content(diff, original, true);
        assert_eq!(
            replaced,
            Ok(Replaced {
                new_content: "😀 smile\nkeep\nchanged\n".to_string(),
                // "😀 smile\n" is 9 UTF-16 units (the emoji counts 2), "keep\n" 5.
                match_indices: vec![14],
                start_line_numbers: vec![3],
            })
        );
    }

    #[test]
    fn a_bom_is_trimmed_away_by_the_line_match() {
        // JavaScript's trim() removes U+FEFF, so a BOM-prefixed first line matches its text.
        let original = "\u{FEFF}first\nsecond\n";
        let diff = "------- SEARCH\n  first\n=======\nFIRST\n+++++++ REPLACE";
        let replaced = construct_new_file_content(diff, original, true);
        assert_eq!(
            replaced,
            Ok(Replaced {
                new_content: "FIRST\nsecond\n".to_string(),
                match_indices: vec![0],
                start_line_numbers: vec![1],
            })
        );
    }

    #[test]
    fn an_unterminated_block_is_previewed_but_not_recorded_while_streaming() {
        let replaced =
            construct_new_file_content("------- SEARCH\nb\n=======\nB\n", "a\nb\nc\n", false);
        assert_eq!(
            replaced,
            Ok(Replaced {
                new_content: "a\nB\n\n".to_string(),
                match_indices: vec![],
                start_line_numbers: vec![],
            })
        );
    }
}
