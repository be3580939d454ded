//! Reading a command's options as its `getopt` would: clusters of short options, values
//! attached or in the next word, long options and their unambiguous prefixes, and words only
//! known at run time where an option could stand.

use super::tables::Entry;
use crate::found::{Risky, Word};
use crate::pattern::{Glob, Pattern};

/// Which options a scan looks for and how it reads them.
pub(super) struct Options<'a> {
    pub(super) short: &'a str,
    pub(super) long: &'a [&'a str],
    pub(super) short_values: &'a str,
    pub(super) long_values: &'a [&'a str],
}

impl Entry {
    /// The options a scan of this program looks for.
    pub(super) fn options(&self) -> Options<'static> {
        Options {
            short: self.short,
            long: self.long,
            short_values: self.short_values,
            long_values: self.long_values,
        }
    }
}

/// An option as read by [`scan`].
#[derive(Debug, Clone)]
pub(super) struct Opt {
    /// The word it is in.
    pub(super) word: usize,
    /// `-x` or `--name` (a prefix as written, for long options).
    pub(super) name: String,
    /// The value attached to it (`-oFILE`, `--output=FILE`).
    pub(super) value: Option<String>,
    /// The next word, when that is its value.
    pub(super) value_word: Option<usize>,
}

/// What [`scan`] read: the options, the operands (by word) and the risky options.
pub(super) struct Scan {
    pub(super) options: Vec<Opt>,
    pub(super) operands: Vec<usize>,
    pub(super) risky: Vec<Risky>,
}

/// Reads options from `words[start..]` as GNU getopt does (options may follow operands when
/// `permute`), noting the risky ones.
pub(super) fn scan(words: &[Word], start: usize, entry: &Options<'_>, permute: bool) -> Scan {
    let mut out = Scan {
        options: Vec::new(),
        operands: Vec::new(),
        risky: Vec::new(),
    };
    let mut options_done = false;
    let mut i = start;
    while i < words.len() {
        let w = &words[i];
        let (known, complete) = leading_literal(w);
        if !options_done && complete && known == "--" {
            options_done = true;
            i += 1;
            continue;
        }
        if options_done
            || !may_start_with(w, "-")
            || (complete && (known == "-" || known.is_empty()))
        {
            out.operands.push(i);
            if !permute {
                options_done = true;
            }
            i += 1;
            continue;
        }
        if !known.starts_with('-') {
            // Only known at run time, and it may be an option.
            out.risky.push(Risky::unknown(0, i));
            i += 1;
            continue;
        }
        if let Some(long) = known.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            if !complete && value.is_none() {
                // `--out$X`: the option's name is only known at run time.
                out.risky.push(Risky::unknown(0, i));
                i += 1;
                continue;
            }
            // An abbreviation stands for the option it abbreviates (`--expr` is `--expression`).
            let canonical = entry
                .long_values
                .iter()
                .find(|v| **v == name)
                .or_else(|| {
                    entry
                        .long_values
                        .iter()
                        .find(|v| !name.is_empty() && v.starts_with(name))
                })
                .copied()
                .unwrap_or(name);
            let takes_next = value.is_none() && entry.long_values.contains(&canonical);
            let value_word = (takes_next && i + 1 < words.len()).then_some(i + 1);
            if let Some(full) = long_match(entry.long, name) {
                let mut parts = vec![0, i];
                parts.extend(value_word);
                out.risky.push(Risky::new(
                    format!("--{full}"),
                    parts,
                    (i, 0..2 + name.chars().count()),
                ));
            }
            out.options.push(Opt {
                word: i,
                name: format!("--{canonical}"),
                value: value.map(str::to_string),
                value_word,
            });
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        // A cluster of short options.
        let chars: Vec<char> = known.chars().skip(1).collect();
        let mut takes_next = false;
        let mut ended_in_value = false;
        for (k, &c) in chars.iter().enumerate() {
            let attached: String = chars[k + 1..].iter().collect();
            let is_value = entry.short_values.contains(c);
            let value_word = (is_value && attached.is_empty() && complete && i + 1 < words.len())
                .then_some(i + 1);
            if entry.short.contains(c) {
                let mut parts = vec![0, i];
                parts.extend(value_word);
                let mut r = Risky::new(format!("-{c}"), parts, (i, 0..k + 2));
                if is_value && !attached.is_empty() {
                    r.split = Some((i, k + 2));
                }
                out.risky.push(r);
            }
            if is_value {
                out.options.push(Opt {
                    word: i,
                    name: format!("-{c}"),
                    value: (!attached.is_empty() || !complete).then_some(attached.clone()),
                    value_word,
                });
                takes_next = attached.is_empty() && complete;
                ended_in_value = true;
                break;
            }
            out.options.push(Opt {
                word: i,
                name: format!("-{c}"),
                value: None,
                value_word: None,
            });
        }
        if !complete && !ended_in_value {
            // `-n$X`: more options only known at run time.
            out.risky.push(Risky::unknown(0, i));
        }
        i += if takes_next { 2 } else { 1 };
    }
    out
}

/// The long option `name` (as written) stands for, if it is one of `risky` or an unambiguous
/// abbreviation that could be one (GNU getopt and git accept those).
pub(super) fn long_match<'a>(risky: &[&'a str], name: &str) -> Option<&'a str> {
    if name.is_empty() {
        return None;
    }
    risky
        .iter()
        .find(|r| **r == name)
        .or_else(|| risky.iter().find(|r| r.starts_with(name)))
        .copied()
}

/// The literal characters a word starts with (up to its first expansion or glob), and whether
/// that is the whole word.
pub(super) fn leading_literal(word: &Word) -> (String, bool) {
    if word.literal.is_none() {
        return (String::new(), false);
    }
    let mut out = String::new();
    for glob in &word.template {
        match glob {
            Glob::Char(c) => out.push(*c),
            _ => return (out, false),
        }
    }
    (out, !word.dynamic)
}

/// Whether the first `len` characters of a word are known before it runs.
pub(super) fn word_prefix_known(word: &Word, len: usize) -> bool {
    let (known, complete) = leading_literal(word);
    complete || known.chars().count() >= len
}

/// Whether a word may start with `prefix` when it runs.
pub(super) fn may_start_with(word: &Word, prefix: &str) -> bool {
    if word.literal.is_none() {
        return true;
    }
    Pattern::new(&format!("{prefix}*")).may_match(&word.template)
}
