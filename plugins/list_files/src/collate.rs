//! Cline's name ordering: `a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" })`.
//!
//! That is ICU's root collation at primary strength with numeric ordering: digit runs compare by
//! value (`file2` < `file10`, leading zeros do not count), case and accents do not count (`File1`
//! sits between `data.json` and `file2`), and punctuation follows ICU's order, which is not ASCII
//! order: `_ - , ; : ! ? . ' " ( ) [ ] { } @ * / \ & # % ` ^ + < = > | ~ $`, all of it before
//! digits, and digits before letters. So `__pycache__/` sorts before `.git/`, and `(auth)/` before
//! `components/`.
//!
//! Why hand-written: the only real implementation of ICU collation in Rust is `icu_collator`
//! (ICU4X), which brings megabytes of collation data and a dozen crates into a plugin that needs
//! the order of file names, and no small crate implements it. The key below is exact for ASCII
//! (checked against Node's ICU for every printable character) and for the Latin-1 and Latin
//! Extended-A letters; other scripts only approximate ICU (letters after Latin letters by code
//! point, other symbols between ASCII punctuation and `$`), which affects only the order in which
//! such names are shown.

/// One primary collation weight. The variant order is the group order of ICU's root collation:
/// white space, punctuation, other symbols, currency, digits, letters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Weight {
    /// Tab, line breaks, space and other white space, by code point.
    Space(u32),
    /// ASCII punctuation and symbols except `$`, by rank in [`PUNCTUATION`].
    Punctuation(u8),
    /// Non-ASCII symbols and punctuation (an approximation), by code point.
    Symbol(u32),
    /// Currency signs, by code point.
    Currency(u32),
    /// A run of ASCII digits, by value: fewer significant digits first, then digit by digit.
    Number {
        /// How many digits remain once leading zeros are dropped.
        significant: usize,
        /// Those digits.
        digits: String,
    },
    /// A letter without case or accent (ASCII letters as lower case), by code point.
    Letter(u32),
}

/// ASCII punctuation and symbols in ICU root collation order (`$` is a currency sign, later).
const PUNCTUATION: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~";

/// The letters U+00C0..=U+017F as the ASCII letters ICU treats as equal at base strength
/// (generated with Node's `localeCompare`); `""` marks a symbol or a letter of its own.
const LATIN: [&str; 192] = [
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", "d", "n", "o",
    "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "", "ss", "a", "a", "a", "a", "a", "a",
    "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", "d", "n", "o", "o", "o", "o", "o", "", "o",
    "u", "u", "u", "u", "y", "", "y", "a", "a", "a", "a", "a", "a", "c", "c", "c", "c", "c", "c",
    "c", "c", "d", "d", "d", "d", "e", "e", "e", "e", "e", "e", "e", "e", "e", "e", "g", "g", "g",
    "g", "g", "g", "g", "g", "h", "h", "h", "h", "i", "i", "i", "i", "i", "i", "i", "i", "i", "",
    "ij", "ij", "j", "j", "k", "k", "", "l", "l", "l", "l", "l", "l", "l", "l", "l", "l", "n", "n",
    "n", "n", "n", "n", "", "", "", "o", "o", "o", "o", "o", "o", "oe", "oe", "r", "r", "r", "r",
    "r", "r", "s", "s", "s", "s", "s", "s", "s", "s", "t", "t", "t", "t", "", "", "u", "u", "u",
    "u", "u", "u", "u", "u", "u", "u", "u", "u", "w", "w", "y", "y", "y", "z", "z", "z", "z", "z",
    "z", "s",
];

/// A name's collation key: names compare like Cline's `localeCompare` by comparing their keys.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CollationKey(Vec<Weight>);

/// The collation key of `name`.
pub fn collation_key(name: &str) -> CollationKey {
    let mut weights = Vec::with_capacity(name.len());
    let mut digits = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        flush_number(&mut digits, &mut weights);
        push_char(fold_width(c), &mut weights);
    }
    flush_number(&mut digits, &mut weights);
    CollationKey(weights)
}

/// Cline's comparison of two names (see the module documentation).
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    collation_key(a).cmp(&collation_key(b))
}

/// Ends a pending digit run: ICU's numeric collation weighs the run by its value.
fn flush_number(digits: &mut String, weights: &mut Vec<Weight>) {
    if digits.is_empty() {
        return;
    }
    let significant = digits.trim_start_matches('0').to_string();
    weights.push(Weight::Number {
        significant: significant.len(),
        digits: significant,
    });
    digits.clear();
}

/// Fullwidth ASCII forms (`Ａ`, `１`) are equal to their ASCII letters at base strength.
fn fold_width(c: char) -> char {
    match u32::from(c) {
        code @ 0xFF01..=0xFF5E => char::from_u32(code - 0xFEE0).unwrap_or(c),
        _ => c,
    }
}

/// Appends the weights of one non-digit character.
fn push_char(c: char, weights: &mut Vec<Weight>) {
    let code = u32::from(c);
    if c.is_ascii_alphabetic() {
        weights.push(Weight::Letter(u32::from(c.to_ascii_lowercase())));
    } else if c == '$' {
        weights.push(Weight::Currency(code));
    } else if let Some(rank) = PUNCTUATION.find(c) {
        // The table has 31 entries, so the rank always fits.
        weights.push(Weight::Punctuation(u8::try_from(rank).unwrap_or(u8::MAX)));
    } else if c.is_whitespace() {
        weights.push(Weight::Space(code));
    } else if is_ignorable(c) {
        // Control characters, combining accents and zero-width marks have no primary weight.
    } else if let Some(base) = latin_base(code) {
        weights.extend(base.bytes().map(|b| Weight::Letter(u32::from(b))));
    } else if c.is_alphanumeric() {
        let lower = c.to_lowercase().next().unwrap_or(c);
        weights.push(Weight::Letter(u32::from(lower)));
    } else if matches!(c, '¢' | '£' | '¤' | '¥' | '\u{20A0}'..='\u{20C0}') {
        weights.push(Weight::Currency(code));
    } else {
        weights.push(Weight::Symbol(code));
    }
}

/// Characters ICU ignores at primary strength.
fn is_ignorable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{AD}' | '\u{300}'..='\u{36F}' | '\u{200B}'..='\u{200F}' | '\u{2060}' | '\u{FEFF}'
        )
}

/// The ASCII letters an accented Latin letter equals at base strength, if any.
fn latin_base(code: u32) -> Option<&'static str> {
    let index = usize::try_from(code.checked_sub(0xC0)?).ok()?;
    LATIN.get(index).copied().filter(|base| !base.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::{Equal, Greater, Less};

    #[test]
    fn digit_runs_compare_by_value() {
        assert_eq!(natural_cmp("file2", "file10"), Less);
        assert_eq!(natural_cmp("a.10", "a.9"), Greater);
        assert_eq!(natural_cmp("01", "1"), Equal);
        assert_eq!(natural_cmp("a001b", "a1a"), Greater);
        assert_eq!(natural_cmp("10", "9a"), Greater);
    }

    #[test]
    fn case_and_accents_do_not_count() {
        assert_eq!(natural_cmp("File1", "file1"), Equal);
        assert_eq!(natural_cmp("File1", "file2"), Less);
        assert_eq!(natural_cmp("README.md", "secret.txt"), Less);
        assert_eq!(natural_cmp("é", "E"), Equal);
        assert_eq!(natural_cmp("a\u{301}", "á"), Equal);
        assert_eq!(natural_cmp("ß", "ss"), Equal);
        assert_eq!(natural_cmp("Æon", "aeon"), Equal);
        assert_eq!(natural_cmp("ａ", "A"), Equal);
    }

    #[test]
    fn punctuation_follows_icu_not_ascii() {
        assert_eq!(natural_cmp("__pycache__", ".git"), Less);
        assert_eq!(natural_cmp(".hidden_dir", "(auth)"), Less);
        assert_eq!(natural_cmp("(auth)", "components"), Less);
        assert_eq!(natural_cmp("-1", "1"), Less);
        assert_eq!(natural_cmp("$x", "0"), Less);
        assert_eq!(natural_cmp("~", "$"), Less);
        assert_eq!(natural_cmp("a b", "ab"), Less);
        assert_eq!(natural_cmp("a\u{1}b", "ab"), Equal);
    }

    #[test]
    fn every_printable_ascii_character_is_in_icu_order() {
        // Node 20 (ICU 78): printable ASCII sorted with localeCompare, numeric, base sensitivity.
        let icu = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";
        let mut chars: Vec<String> = (0x20u8..0x7F)
            .filter(|b| !b.is_ascii_uppercase())
            .map(|b| char::from(b).to_string())
            .collect();
        chars.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(chars.concat(), icu);
    }

    #[test]
    fn prefixes_sort_first() {
        assert_eq!(natural_cmp("", "a"), Less);
        assert_eq!(natural_cmp("a", "a-b"), Less);
        assert_eq!(natural_cmp("x", "X1"), Less);
    }
}
