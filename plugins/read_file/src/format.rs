//! Line numbering, ranges and the continuation hint.

/// How many lines one read shows when no end is given.
pub const DEFAULT_WINDOW: i64 = 1000;

/// The marker that starts the size-cap notice appended by extraction.
const TRUNCATION_MARKER: &str = "\n\n---\n\n[FILE TRUNCATED:";

/// Numbered text and the range the UI reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered {
    /// The text for the model.
    pub text: String,
    /// The 1-based inclusive range shown, `None` for an empty file.
    pub displayed_range: Option<(i64, i64)>,
}

/// Numbers the lines of `content` from `start` to `end` (1-based, inclusive; parsed already),
/// and appends the size-cap notice, the continuation hint, or the total.
pub fn format_numbered(content: &str, start: Option<i64>, end: Option<i64>) -> Numbered {
    if content.is_empty() {
        return Numbered {
            text: String::new(),
            displayed_range: None,
        };
    }
    let (body, notice) = match content.find(TRUNCATION_MARKER) {
        Some(at) => (&content[..at], Some(&content[at..])),
        None => (content, None),
    };
    let mut lines: Vec<&str> = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if body.ends_with('\n') {
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

    let mut text = String::new();
    let mut number = start;
    while number <= end {
        if !text.is_empty() {
            text.push('\n');
        }
        let index = usize::try_from(number - 1).unwrap_or(usize::MAX);
        text.push_str(&format!("{number} | {}", lines[index]));
        number += 1;
    }
    match notice {
        Some(notice) => text.push_str(notice),
        None if end < total => text.push_str(&format!(
            "\n\n(Showing lines {start}-{end} of {total} total. Use start_line={} to continue reading.)",
            end + 1
        )),
        None => text.push_str(&format!("\n\n(File has {total} lines total.)")),
    }
    Numbered {
        text,
        displayed_range: Some((start, end)),
    }
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
}
