//! JavaScript string semantics the port must reproduce exactly.
//!
//! Cline's matcher is written against JavaScript strings: `trim()` strips a different set of
//! characters than Rust's `str::trim` (it includes U+FEFF, the BOM, and excludes U+0085), and
//! offsets are counted in UTF-16 code units. The matcher works on UTF-8 byte offsets internally
//! (both encodings put matches at the same code-point boundaries) and converts offsets for output.

pub use tool_api::sdk::js::{trim, trim_end};

/// The number of UTF-16 code units in `s[..byte_offset]` (clamped to the string): the offset
/// JavaScript would report for the same position.
pub fn utf16_offset(s: &str, byte_offset: usize) -> usize {
    let end = floor_char_boundary(s, byte_offset.min(s.len()));
    s[..end].encode_utf16().count()
}

/// JavaScript's `hay.indexOf(needle, from)` on byte offsets: `from` is clamped to the length.
pub fn index_of(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let start = ceil_char_boundary(hay, from.min(hay.len()));
    hay[start..].find(needle).map(|i| i + start)
}

/// JavaScript's `s.slice(start, end)` on byte offsets: both ends clamped to the length, and an
/// end before the start gives the empty string. (Cline relies on both: a line-based match may end
/// one past the last character, and overlapping replacements produce `end < start`.)
pub fn slice(s: &str, start: usize, end: usize) -> &str {
    let start = ceil_char_boundary(s, start.min(s.len()));
    let end = floor_char_boundary(s, end.min(s.len()));
    if start >= end {
        ""
    } else {
        &s[start..end]
    }
}

/// The largest char boundary at or before `i` (`i <= s.len()`).
fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary at or after `i` (`i <= s.len()`).
fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_follows_javascript_not_rust() {
        // The BOM is whitespace to JavaScript only; NEL (U+0085) to Rust only.
        assert_eq!(trim("\u{FEFF} a\u{3000}"), "a");
        assert_eq!(trim("\u{85}a\u{85}"), "\u{85}a\u{85}");
        assert_eq!(trim_end("a \r\n\t"), "a");
        assert_eq!(trim_end("  "), "");
    }

    #[test]
    fn offsets_count_utf16_code_units() {
        let s = "é😀x";
        // é: 2 bytes / 1 unit; 😀: 4 bytes / 2 units.
        assert_eq!(utf16_offset(s, 0), 0);
        assert_eq!(utf16_offset(s, 2), 1);
        assert_eq!(utf16_offset(s, 6), 3);
        assert_eq!(utf16_offset(s, 7), 4);
        assert_eq!(utf16_offset(s, 100), 4);
    }

    #[test]
    fn index_of_and_slice_clamp_like_javascript() {
        assert_eq!(index_of("abcabc", "bc", 2), Some(4));
        assert_eq!(index_of("abc", "c", 10), None);
        assert_eq!(index_of("abc", "", 10), Some(3));
        assert_eq!(slice("abc", 1, 10), "bc");
        assert_eq!(slice("abc", 2, 1), "");
        assert_eq!(slice("abc", 5, 9), "");
    }
}
