//! The JavaScript semantics Cline's patch code relies on, reproduced exactly.
//!
//! `trim()` strips a different set of characters than Rust's `str::trim` (it includes U+FEFF and
//! excludes U+0085), string lengths are UTF-16 code units, and the entries of a plain object are
//! visited with integer-like keys first. The trim helpers are tool-api's (`tool_api::sdk::js`),
//! shared with write_to_file.

pub use tool_api::sdk::js::{trim, trim_end};

/// JavaScript's `s.length`: the number of UTF-16 code units.
pub fn len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Whether a key is an array index (a canonical decimal below 2^32 - 1), which JavaScript
/// objects list before every other key, in numeric order.
fn array_index(key: &str) -> Option<u64> {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty());
    if !canonical || !key.bytes().all(|b| b.is_ascii_digit()) || key.len() > 10 {
        return None;
    }
    key.parse::<u64>().ok().filter(|n| *n < u64::from(u32::MAX))
}

/// The order in which JavaScript visits the entries of an object whose keys were inserted in
/// the given order (`Object.entries`): array-index keys ascending, then the rest as inserted.
/// Cline keeps patch actions and results in plain objects, so this decides the order of the
/// files in its result text. Returns positions into `keys`.
pub fn object_order<S: AsRef<str>>(keys: &[S]) -> Vec<usize> {
    let mut indexed: Vec<(u64, usize)> = Vec::new();
    let mut rest = Vec::new();
    for (position, key) in keys.iter().enumerate() {
        match array_index(key.as_ref()) {
            Some(n) => indexed.push((n, position)),
            None => rest.push(position),
        }
    }
    indexed.sort_unstable();
    indexed
        .into_iter()
        .map(|(_, position)| position)
        .chain(rest)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_follow_javascript() {
        assert_eq!(trim("\u{FEFF} a \u{3000}"), "a");
        assert_eq!(trim("\u{85}a"), "\u{85}a");
        assert_eq!(trim_end(" a \n\t"), " a");
    }

    #[test]
    fn lengths_are_utf16_code_units() {
        assert_eq!([len("abc"), len("é"), len("😀"), len("")], [3, 1, 2, 0]);
    }

    #[test]
    fn integer_like_keys_come_first() {
        let keys = [
            "b.txt",
            "10",
            "a.txt",
            "2",
            "02",
            "4294967295",
            "4294967294",
        ];
        let ordered: Vec<&str> = object_order(&keys).into_iter().map(|i| keys[i]).collect();
        assert_eq!(
            ordered,
            [
                "2",
                "10",
                "4294967294",
                "b.txt",
                "a.txt",
                "02",
                "4294967295"
            ]
        );
    }
}
