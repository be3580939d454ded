//! Line numbering, ranges, the size cap and the continuation hint.
//!
//! The order is the range, then the cap, then the hint: the requested lines are numbered, what
//! exceeds [`MAX_TEXT_UNITS`] of them is cut at a line boundary with Cline's `[FILE TRUNCATED: …]`
//! notice, and the hint names the first line not shown. (Cline caps the whole file's text
//! before it slices the range, so lines past the first 400 KB of a file could not be read at
//! all, and a capped read lost its hint.)

use std::fmt::Write as _;

use tool_api::sdk::js::utf16_cut;
use tool_api::texts::format_size;

/// How many lines one read shows when no end is given.
pub const DEFAULT_WINDOW: i64 = 1000;

/// The text one read returns is cut beyond this many UTF-16 code units (JavaScript's string
/// length, Cline's 400 × 1024), notices aside.
pub const MAX_TEXT_UNITS: usize = 400 * 1024;

/// Numbered text and the range the UI reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered {
    /// The text for the model.
    pub text: String,
    /// The 1-based inclusive range shown, `None` for an empty file.
    pub displayed_range: Option<(i64, i64)>,
}

/// Numbers the lines of `content` from `start` to `end` (1-based, inclusive; parsed already),
/// with the read capped at [`MAX_TEXT_UNITS`], and appends the continuation hint or the total.
pub fn format_numbered(content: &str, start: Option<i64>, end: Option<i64>) -> Numbered {
    format_capped(content, start, end, MAX_TEXT_UNITS)
}

/// [`format_numbered`] with a cap of `max_units` UTF-16 code units on the numbered lines.
pub fn format_capped(
    content: &str,
    start: Option<i64>,
    end: Option<i64>,
    max_units: usize,
) -> Numbered {
    if content.is_empty() {
        return Numbered {
            text: String::new(),
            displayed_range: None,
        };
    }
    let mut lines: Vec<&str> = content
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if content.ends_with('\n') {
        lines.pop();
    }
    let total = i64::try_from(lines.len()).unwrap_or(i64::MAX);

    let mut start = start.unwrap_or(1).max(1);
    let mut end = end.unwrap_or_else(|| start.saturating_add(DEFAULT_WINDOW - 1));
    if end < start {
        std::mem::swap(&mut start, &mut end);
        start = start.max(1);
    }
    let end = end.min(total);

    let range = if start <= end {
        let first = usize::try_from(start - 1).unwrap_or(usize::MAX);
        let last = usize::try_from(end).unwrap_or(usize::MAX);
        &lines[first..last]
    } else {
        &lines[..0]
    };
    let (mut text, shown_end, cut) = number_within(range, start, max_units);
    if let Some(cut) = cut {
        text.push_str(&truncation_notice(&cut));
    }
    if shown_end < total {
        text.push_str(&format!(
            "\n\n(Showing lines {start}-{shown_end} of {total} total. Use start_line={} to continue reading.)",
            shown_end + 1
        ));
    } else {
        text.push_str(&format!("\n\n(File has {total} lines total.)"));
    }
    Numbered {
        text,
        displayed_range: Some((start, shown_end)),
    }
}

/// The sizes of a read that was cut, in UTF-16 code units.
struct Cut {
    /// The whole range, numbered.
    total: usize,
    /// What is shown.
    shown: usize,
}

/// Numbers `lines` (the first one is line `start`) as long as they fit in `max_units`: whole
/// lines, or, when not even the first fits, the first one cut. Returns the text, the number of
/// the last line shown (`start - 1` when none) and the sizes when something was left out.
fn number_within(lines: &[&str], start: i64, max_units: usize) -> (String, i64, Option<Cut>) {
    let bytes: usize = lines.iter().map(|l| l.len() + 8).sum();
    let mut text = String::with_capacity(bytes.min(max_units.saturating_mul(4)));
    let mut units = 0usize;
    let mut shown_end = start - 1;
    let mut cut = None;
    for (number, line) in (start..).zip(lines) {
        let separator = usize::from(!text.is_empty());
        // `{number} | {line}`, counted without being built.
        let line_units = digits(number) + 3 + units_of(line);
        if cut.is_none() && units + separator + line_units > max_units {
            let shown = if text.is_empty() {
                // One line longer than the cap: its beginning is all that can be shown.
                let numbered = format!("{number} | {line}");
                let at = utf16_cut(&numbered, max_units).map_or(numbered.len(), |(at, _)| at);
                text.push_str(&numbered[..at]);
                shown_end = number;
                units_of(&text)
            } else {
                units
            };
            cut = Some(Cut {
                total: units,
                shown,
            });
        }
        match &mut cut {
            // Keep counting the size of the whole range for the notice.
            Some(cut) => cut.total += separator + line_units,
            None => {
                if separator == 1 {
                    text.push('\n');
                }
                let _ = write!(text, "{number} | ");
                text.push_str(line);
                units += separator + line_units;
                shown_end = number;
            }
        }
    }
    (text, shown_end, cut)
}

/// The decimal digits of a line number (numbers start at 1).
fn digits(number: i64) -> usize {
    number.max(1).ilog10() as usize + 1
}

/// UTF-16 code units of `text` (ASCII: one a byte).
fn units_of(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.chars().map(char::len_utf16).sum()
}

/// Cline's size-cap notice, with the sizes of this read.
fn truncation_notice(cut: &Cut) -> String {
    let size = |n: usize| format_size(u64::try_from(n).unwrap_or(u64::MAX));
    format!(
        "\n\n---\n\n[FILE TRUNCATED: This content is {} but only the first {} is shown ({} truncated). Use search_files to find specific patterns, or execute_command with grep/head/tail for targeted reading.]",
        size(cut.total),
        size(cut.shown),
        size(cut.total.saturating_sub(cut.shown)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_past_the_end_shows_only_the_total() {
        let n = format_numbered("a\nb\nc\n", Some(10), None);
        assert_eq!(n.text, "\n\n(File has 3 lines total.)");
    }

    #[test]
    fn an_end_before_the_start_swaps_them() {
        let n = format_numbered("a\nb\nc\nd\n", Some(3), Some(2));
        assert_eq!(
            n.text,
            "2 | b\n3 | c\n\n(Showing lines 2-3 of 4 total. Use start_line=4 to continue reading.)"
        );
    }

    /// 5,000 lines of 200 bytes (about 1 MB): Cline cut the file at 400 KB first, so lines past
    /// about 2,000 were unreachable and a plain read lost its hint. Here the range comes first.
    fn big_file() -> String {
        (1..=5000)
            .map(|n| format!("{n:0>6}{}\n", "x".repeat(193)))
            .collect()
    }

    #[test]
    fn a_range_beyond_400_kb_is_shown() {
        let content = big_file();
        let n = format_numbered(&content, Some(2100), Some(2102));
        let x = "x".repeat(193);
        assert_eq!(
            n.text,
            format!(
                "2100 | 002100{x}\n2101 | 002101{x}\n2102 | 002102{x}\n\n(Showing lines 2100-2102 of 5000 total. Use start_line=2103 to continue reading.)"
            )
        );
        assert_eq!(n.displayed_range, Some((2100, 2102)));
    }

    #[test]
    fn a_plain_read_of_a_big_file_shows_a_thousand_lines_and_the_hint() {
        let content = big_file();
        let n = format_numbered(&content, None, None);
        assert!(n.text.starts_with("1 | 000001x"));
        assert!(n.text.contains("\n1000 | 001000x"));
        assert!(!n.text.contains("\n1001 | "));
        assert!(!n.text.contains("FILE TRUNCATED"));
        assert!(n.text.ends_with(
            "\n\n(Showing lines 1-1000 of 5000 total. Use start_line=1001 to continue reading.)"
        ));
        assert_eq!(n.displayed_range, Some((1, 1000)));
    }

    #[test]
    fn a_range_over_the_cap_is_cut_at_a_line_with_the_notice_then_the_hint() {
        let content = big_file();
        // Lines 1000..=5000 are 206 units long numbered, 207 with the line break before them.
        let n = format_numbered(&content, Some(1000), Some(5000));
        let whole_lines = (MAX_TEXT_UNITS + 1) / 207;
        assert_eq!(whole_lines, 1978);
        let last = 1000 + 1978 - 1;
        assert!(n.text.contains("\n2977 | 002977x"));
        assert!(!n.text.contains("\n2978 | "));
        let (total, shown) = (4001 * 207 - 1, 1978 * 207 - 1);
        let tail = format!(
            "\n\n---\n\n[FILE TRUNCATED: This content is {} but only the first {} is shown ({} truncated). Use search_files to find specific patterns, or execute_command with grep/head/tail for targeted reading.]\n\n(Showing lines 1000-{last} of 5000 total. Use start_line={} to continue reading.)",
            format_size(total),
            format_size(shown),
            format_size(total - shown),
            last + 1
        );
        assert!(n.text.ends_with(&tail), "{}", &n.text[n.text.len() - 400..]);
        assert!(tail.contains(
            "This content is 808.8 KB but only the first 399.8 KB is shown (408.9 KB truncated)"
        ));
        assert_eq!(n.displayed_range, Some((1000, last)));
    }

    #[test]
    fn one_line_longer_than_the_cap_shows_its_beginning() {
        let content = format!("{}\nshort\n", "é".repeat(30));
        let n = format_capped(&content, None, None, 10);
        assert_eq!(
            n.text,
            "1 | éééééé\n\n---\n\n[FILE TRUNCATED: This content is 44 B but only the first 10 B is shown (34 B truncated). Use search_files to find specific patterns, or execute_command with grep/head/tail for targeted reading.]\n\n(Showing lines 1-1 of 2 total. Use start_line=2 to continue reading.)"
        );
    }

    #[test]
    fn text_that_only_looks_like_the_notice_is_content() {
        // Cline took this text for its own notice and hid the rest of the file; it is the
        // file's content like any other.
        let content = "a\n\n\n---\n\n[FILE TRUNCATED: fake]\nb\n";
        let n = format_numbered(content, None, None);
        assert_eq!(
            n.text,
            "1 | a\n2 | \n3 | \n4 | ---\n5 | \n6 | [FILE TRUNCATED: fake]\n7 | b\n\n(File has 7 lines total.)"
        );
    }
}
