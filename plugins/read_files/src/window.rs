//! The part of a text file one read returns, as Cline's SDK cuts it: an inclusive one-based
//! line range, at most [`MAX_LINES`] lines and about [`MAX_CHARS`] characters, each line at most
//! [`MAX_LINE_CHARS`], numbered (`N | text`, the numbers right-aligned), with a note saying
//! which lines were shown when there are more.

/// The most lines one read returns.
pub const MAX_LINES: usize = 2000;

/// The longest line shown whole; longer ones are cut and marked.
pub const MAX_LINE_CHARS: usize = 2000;

/// About how many characters one read returns (the first line always).
pub const MAX_CHARS: usize = 48_000;

/// How far past the start a read without an end counts lines before saying `N+ lines`.
const MAX_UNRANGED_SCAN: u64 = 50_000;

/// The lines of `text`: split at `\n`, `\r\n` and a lone `\r`, a final line ending adding no
/// empty line.
fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find(['\n', '\r']) {
            Some(at) => {
                out.push(&rest[..at]);
                let skip = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[at + skip..];
            }
            None => {
                out.push(rest);
                rest = "";
            }
        }
    }
    out
}

/// The length of `text` in UTF-16 units (what Cline's limits count).
fn units(text: &str) -> usize {
    text.encode_utf16().count()
}

/// `text` cut to `max` UTF-16 units (not inside a character).
fn cut(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += c.len_utf16();
        if used > max {
            return &text[..at];
        }
    }
    text
}

/// Lines `start..=end` of `text` (none: from 1, to the end), numbered and capped.
pub fn window(text: &str, start: Option<u64>, end: Option<u64>) -> String {
    let start = start.unwrap_or(1).max(1);
    let last_captured_allowed = match end {
        Some(end) => end.min(start + MAX_LINES as u64 - 1),
        None => start + MAX_LINES as u64 - 1,
    };
    let prefix_budget = last_captured_allowed.to_string().len() + 3;
    let max_scanned = end.unwrap_or(start + MAX_UNRANGED_SCAN - 1);
    let mut captured: Vec<(u64, String)> = Vec::new();
    let (mut chars, mut total, mut capped, mut approximate) = (0usize, 0u64, false, false);
    for line in lines(text) {
        total += 1;
        if end.is_some_and(|end| total > end) {
            total = end.unwrap_or(total);
            break;
        }
        if end.is_none() && capped && total >= max_scanned {
            approximate = true;
            break;
        }
        if total < start || capped {
            continue;
        }
        if captured.len() >= MAX_LINES {
            capped = true;
            continue;
        }
        let shown = if units(line) > MAX_LINE_CHARS {
            format!("{} [line truncated]", cut(line, MAX_LINE_CHARS))
        } else {
            line.to_string()
        };
        let next = chars + units(&shown) + prefix_budget + 1;
        if next > MAX_CHARS && !captured.is_empty() {
            capped = true;
            continue;
        }
        captured.push((total, shown));
        chars = next;
    }
    let Some(&(last, _)) = captured.last() else {
        return String::new();
    };
    let width = last.to_string().len();
    let mut out = captured
        .iter()
        .map(|(number, line)| format!("{number:>width$} | {line}"))
        .collect::<Vec<_>>()
        .join("\n");
    let effective_end = end.map_or(total, |end| end.min(total));
    if last < effective_end {
        let of = if approximate {
            format!("{total}+ lines")
        } else {
            effective_end.to_string()
        };
        out.push_str(&format!(
            "\n\n[Showing lines {start}-{last} of {of}. Use start_line/end_line to read other \
             sections.]"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(count: usize) -> String {
        (1..=count).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn ranges_are_inclusive_and_numbers_aligned_to_the_last_shown() {
        let text = "alpha\nbeta\ngamma\ndelta\n";
        assert_eq!(
            window(text, None, None),
            "1 | alpha\n2 | beta\n3 | gamma\n4 | delta"
        );
        assert_eq!(window(text, Some(2), Some(3)), "2 | beta\n3 | gamma");
        let twelve: String = (1..=12).map(|i| format!("l{i}\n")).collect();
        assert_eq!(
            window(&twelve, Some(8), None),
            " 8 | l8\n 9 | l9\n10 | l10\n11 | l11\n12 | l12"
        );
        assert_eq!(window(text, Some(10), None), "");
        assert_eq!(window("a\r\nb\rc", None, None), "1 | a\n2 | b\n3 | c");
    }

    #[test]
    fn long_files_are_capped_with_a_note() {
        let out = window(&numbered(2500), None, None);
        assert!(out.starts_with("   1 | line 1\n"));
        assert!(out.ends_with(
            "2000 | line 2000\n\n[Showing lines 1-2000 of 2500. Use start_line/end_line to read other sections.]"
        ));
        let out = window(&numbered(60_000), None, None);
        assert!(out.ends_with("[Showing lines 1-2000 of 50000+ lines. Use start_line/end_line to read other sections.]"));
        let out = window(&numbered(3000), Some(1), Some(3000));
        assert!(out.ends_with(
            "[Showing lines 1-2000 of 3000. Use start_line/end_line to read other sections.]"
        ));
        assert!(!window(&numbered(2000), None, None).contains("Showing"));
    }

    #[test]
    fn the_character_budget_and_long_lines() {
        let hundred: String = (0..1500)
            .map(|_| format!("{}\n", "x".repeat(100)))
            .collect();
        assert!(window(&hundred, None, None).contains("[Showing lines 1-444 of 1500."));
        let long = "y".repeat(2500);
        assert_eq!(
            window(&long, None, None),
            format!("1 | {} [line truncated]", "y".repeat(2000))
        );
    }
}
