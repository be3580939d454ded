//! JavaScript string semantics that Cline's model-visible behaviour depends on.
//!
//! Cline trims with `String.prototype.trim`, which strips a different set of characters than
//! Rust's `str::trim` (it includes U+FEFF, the BOM, and excludes U+0085), and cleans streamed
//! values with its `removeClosingTag`. Tools that must match Cline byte for byte share these.

/// Whether `c` is whitespace for JavaScript's `String.prototype.trim`: ECMAScript's WhiteSpace
/// (tab, VT, FF, space, NBSP, ZWNBSP and the Zs category) plus LineTerminator (LF, CR, LS, PS).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{A}' | '\u{B}' | '\u{C}' | '\u{D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// JavaScript's `s.trim()`.
pub fn trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// JavaScript's `s.trimEnd()`.
pub fn trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_whitespace)
}

/// Where to cut `text` so that it keeps at most `max_units` UTF-16 code units (JavaScript's
/// string length), and its total length in code units; `None` when it already fits.
pub fn utf16_cut(text: &str, max_units: usize) -> Option<(usize, usize)> {
    let total: usize = text.chars().map(char::len_utf16).sum();
    if total <= max_units {
        return None;
    }
    let mut units = 0;
    for (index, ch) in text.char_indices() {
        if units + ch.len_utf16() > max_units {
            return Some((index, total));
        }
        units += ch.len_utf16();
    }
    Some((text.len(), total))
}

/// Removes a closing tag still being typed at the end of a streamed value (Cline's
/// `removeClosingTag`): an optional whitespace character, `<` or `</`, then any in-order part of
/// the parameter's name, at the very end. `https://x.io</ur` becomes `https://x.io`.
pub fn strip_partial_closing_tag<'a>(text: &'a str, tag: &str) -> &'a str {
    let Some(open) = text.rfind('<') else {
        return text;
    };
    let after = &text[open + 1..];
    let after = after.strip_prefix('/').unwrap_or(after);
    // The rest must be a subsequence of the tag's name (the regex is the name with every
    // character optional), taken greedily in order.
    let mut wanted = tag.chars();
    if !after.chars().all(|c| wanted.by_ref().any(|t| t == c)) {
        return text;
    }
    let head = &text[..open];
    match head.chars().next_back() {
        Some(c) if is_js_whitespace(c) => &head[..head.len() - c.len_utf8()],
        _ => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_is_javascripts() {
        assert_eq!(trim("\u{FEFF} a \u{2028}"), "a");
        assert_eq!(trim("\u{85}a\u{85}"), "\u{85}a\u{85}");
        assert_eq!(trim_end("a \t\n"), "a");
    }

    #[test]
    fn cuts_count_utf16_units() {
        assert_eq!(utf16_cut("abc", 3), None);
        assert_eq!(utf16_cut("ab🌍c", 3), Some((2, 5)));
        assert_eq!(utf16_cut("ab🌍c", 4), Some((6, 5)));
    }

    #[test]
    fn partial_closing_tags_are_removed() {
        assert_eq!(
            strip_partial_closing_tag("https://x.io</ur", "url"),
            "https://x.io"
        );
        assert_eq!(
            strip_partial_closing_tag("450,300 <", "coordinate"),
            "450,300"
        );
        assert_eq!(strip_partial_closing_tag("a<b", "coordinate"), "a<b");
        assert_eq!(strip_partial_closing_tag("plain", "text"), "plain");
    }
}
