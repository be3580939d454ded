//! Where a hunk's context lines are in a file: exact, then more and more tolerant passes, the
//! last one by Levenshtein similarity (Cline's `findContext`).

use unicode_normalization::UnicodeNormalization;

use crate::js;

/// Above this many UTF-16 code units, similarity compares whole lines instead of characters.
const MAX_LEVENSHTEIN_CHARS: usize = 512;
/// The similarity from which a window counts as a match in the last pass.
const SIMILARITY_THRESHOLD: f64 = 0.66;

/// Fuzz of a match ignoring trailing whitespace.
pub const FUZZ_TRAILING: u64 = 1;
/// Fuzz of a match ignoring surrounding whitespace.
pub const FUZZ_TRIMMED: u64 = 100;
/// Fuzz of a match by similarity.
pub const FUZZ_SIMILAR: u64 = 1000;
/// Fuzz added when an end-of-file hunk is not at the end of the file.
pub const FUZZ_NOT_AT_END: u64 = 10000;

/// Cline's canonical form for comparisons: NFC, typographic dashes, quotes and no-break spaces
/// mapped to their ASCII forms, and backslash-escaped quotes and backticks unescaped.
pub fn canonicalize(s: &str) -> String {
    let mapped: String = s
        .nfc()
        .map(|c| match c {
            '\u{2010}'..='\u{2014}' | '\u{2212}' => '-',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{AB}' | '\u{BB}' => '"',
            '\u{2018}' | '\u{2019}' | '\u{201B}' => '\'',
            '\u{A0}' | '\u{202F}' => ' ',
            other => other,
        })
        .collect();
    mapped
        .replace("\\`", "`")
        .replace("\\'", "'")
        .replace("\\\"", "\"")
}

/// A file's lines in the forms the passes compare, computed once per file.
#[derive(Debug, Clone)]
pub struct FileLines {
    /// The lines as they are (`split('\n')`: a final newline gives a final empty line).
    pub raw: Vec<String>,
    canonical: Vec<String>,
    /// The canonical lines as UTF-16 code units, for the similarity pass.
    units: Vec<Vec<u16>>,
    trailing_trimmed: Vec<String>,
    trimmed: Vec<String>,
}

impl FileLines {
    /// Splits and prepares a file's (LF-normalised) text.
    pub fn new(text: &str) -> Self {
        let raw: Vec<String> = text.split('\n').map(str::to_string).collect();
        let canonical: Vec<String> = raw.iter().map(|l| canonicalize(l)).collect();
        let trailing_trimmed = canonical
            .iter()
            .map(|l| js::trim_end(l).to_string())
            .collect();
        let trimmed = canonical.iter().map(|l| js::trim(l).to_string()).collect();
        let units = canonical
            .iter()
            .map(|l| l.encode_utf16().collect())
            .collect();
        Self {
            raw,
            canonical,
            units,
            trailing_trimmed,
            trimmed,
        }
    }

    /// The number of lines.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether the text was empty (one empty line).
    pub fn is_empty(&self) -> bool {
        self.raw.len() == 1 && self.raw[0].is_empty()
    }

    /// The lines a hunk can end at with `*** End of File`: all of them, except the empty line
    /// that a final newline leaves after the last real line.
    fn content_len(&self) -> usize {
        match self.raw.last() {
            Some(last) if last.is_empty() && self.raw.len() > 1 => self.raw.len() - 1,
            _ => self.raw.len(),
        }
    }
}

/// Where a hunk's context was found and how loosely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// The index of the file line where the context starts.
    pub index: usize,
    /// How loose the match was (0 for exact).
    pub fuzz: u64,
}

/// Finds `context` in `file`, searching from line `start`; `eof` hunks are tried at the end of
/// the file first. `cancelled` is polled during the slow similarity pass.
///
/// Deliberate difference from Cline: an end-of-file hunk is tried against the last line of
/// content, so a file's final newline no longer makes the attempt fail (Cline then falls back
/// to the first match anywhere, with fuzz 10000).
pub fn find_context(
    file: &FileLines,
    context: &[String],
    start: usize,
    eof: bool,
    cancelled: &dyn Fn() -> bool,
) -> Option<Found> {
    if context.is_empty() {
        return Some(Found {
            index: start,
            fuzz: 0,
        });
    }
    if context.len() > file.len() {
        return None;
    }
    let pattern = Pattern::new(context);
    if eof {
        let at_end = file.content_len().saturating_sub(context.len());
        if let Some(found) = pattern.search(file, at_end, cancelled) {
            return Some(found);
        }
        return pattern.search(file, start, cancelled).map(|found| Found {
            fuzz: found.fuzz + FUZZ_NOT_AT_END,
            ..found
        });
    }
    pattern.search(file, start, cancelled)
}

/// A hunk's context in the forms the passes compare.
struct Pattern {
    canonical: Vec<String>,
    trailing_trimmed: Vec<String>,
    trimmed: Vec<String>,
    joined_units: Vec<u16>,
    counts: UnitCounts,
}

impl Pattern {
    fn new(context: &[String]) -> Self {
        let canonical: Vec<String> = context.iter().map(|l| canonicalize(l)).collect();
        let trailing_trimmed = canonical
            .iter()
            .map(|l| js::trim_end(l).to_string())
            .collect();
        let trimmed = canonical.iter().map(|l| js::trim(l).to_string()).collect();
        let joined = canonical.join("\n");
        let joined_units: Vec<u16> = joined.encode_utf16().collect();
        let mut counts = UnitCounts::default();
        counts.add(&joined_units, 1);
        Self {
            canonical,
            trailing_trimmed,
            trimmed,
            joined_units,
            counts,
        }
    }

    /// Cline's `findCore`: four passes over the windows from `start` (clamped to the last
    /// window that fits), the first hit of the strictest pass winning.
    fn search(
        &self,
        file: &FileLines,
        start: usize,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<Found> {
        let n = self.canonical.len();
        let last = file.len() - n;
        let first = start.min(last);
        let exact_in = |lines: &[String], wanted: &[String], fuzz: u64| {
            (first..=last)
                .find(|&i| lines[i..i + n] == *wanted)
                .map(|index| Found { index, fuzz })
        };
        exact_in(&file.canonical, &self.canonical, 0)
            .or_else(|| {
                exact_in(
                    &file.trailing_trimmed,
                    &self.trailing_trimmed,
                    FUZZ_TRAILING,
                )
            })
            .or_else(|| exact_in(&file.trimmed, &self.trimmed, FUZZ_TRIMMED))
            .or_else(|| {
                (first..=last)
                    .take_while(|_| !cancelled())
                    .find(|&i| self.similar_at(file, i))
                    .map(|index| Found {
                        index,
                        fuzz: FUZZ_SIMILAR,
                    })
            })
    }

    /// Whether the window at `start` is at least [`SIMILARITY_THRESHOLD`] similar to the
    /// context (Cline's `calculateSimilarity` on the joined lines, or its line similarity when
    /// either text is longer than [`MAX_LEVENSHTEIN_CHARS`]).
    fn similar_at(&self, file: &FileLines, start: usize) -> bool {
        let n = self.canonical.len();
        let window = &file.canonical[start..start + n];
        if self.joined_units.len() > MAX_LEVENSHTEIN_CHARS {
            return line_similarity(window, &self.canonical) >= SIMILARITY_THRESHOLD;
        }
        let lines = &file.units[start..start + n];
        let window_len = lines.iter().map(Vec::len).sum::<usize>() + n - 1;
        let longer = window_len.max(self.joined_units.len());
        if longer == 0 {
            return true;
        }
        if longer > MAX_LEVENSHTEIN_CHARS {
            // Cline splits both joined texts at `\n` again: that gives back the lines.
            return line_similarity(window, &self.canonical) >= SIMILARITY_THRESHOLD;
        }
        // Two cheap lower bounds of the edit distance first, the length difference and the bag
        // distance (units one side has and the other lacks); the quadratic distance is only
        // computed when neither rules the window out. The outcome is the same as always
        // computing it.
        let ratio = |distance: usize| (longer - distance) as f64 / longer as f64;
        if ratio(window_len.abs_diff(self.joined_units.len())) < SIMILARITY_THRESHOLD {
            return false;
        }
        let mut counts = self.counts.clone();
        for (i, line) in lines.iter().enumerate() {
            counts.add(line, -1);
            if i + 1 < n {
                counts.add(&[u16::from(b'\n')], -1);
            }
        }
        if ratio(counts.bag_distance()) < SIMILARITY_THRESHOLD {
            return false;
        }
        let window_units: Vec<u16> = lines.join(&u16::from(b'\n'));
        ratio(strsim::generic_levenshtein(
            &window_units,
            &self.joined_units,
        )) >= SIMILARITY_THRESHOLD
    }
}

/// Cline's line similarity: the share of the (UTF-16) length held by lines that are equal at
/// the same position.
fn line_similarity(left: &[String], right: &[String]) -> f64 {
    let count = left.len().max(right.len());
    if count == 0 {
        return 1.0;
    }
    let (mut matched, mut total) = (0usize, 0usize);
    for i in 0..count {
        let l = left.get(i).map_or("", String::as_str);
        let r = right.get(i).map_or("", String::as_str);
        let weight = js::len(l).max(js::len(r)).max(1);
        if l == r {
            matched += weight;
        }
        total += weight;
    }
    matched as f64 / total as f64
}

/// Signed counts of UTF-16 code units: ASCII in an array, the rest in a map.
#[derive(Debug, Clone)]
struct UnitCounts {
    ascii: [i32; 128],
    other: std::collections::HashMap<u16, i32>,
}

impl Default for UnitCounts {
    fn default() -> Self {
        Self {
            ascii: [0; 128],
            other: std::collections::HashMap::new(),
        }
    }
}

impl UnitCounts {
    fn add(&mut self, units: &[u16], sign: i32) {
        for &unit in units {
            match self.ascii.get_mut(usize::from(unit)) {
                Some(count) => *count += sign,
                None => *self.other.entry(unit).or_default() += sign,
            }
        }
    }

    /// With one text added and the other subtracted: the larger of the two one-sided multiset
    /// differences, a lower bound of the edit distance.
    fn bag_distance(&self) -> usize {
        let (mut positive, mut negative) = (0usize, 0usize);
        for &count in self.ascii.iter().chain(self.other.values()) {
            if count > 0 {
                positive += count.unsigned_abs() as usize;
            } else {
                negative += count.unsigned_abs() as usize;
            }
        }
        positive.max(negative)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    fn find(text: &str, context: &[&str], start: usize, eof: bool) -> Option<Found> {
        find_context(&FileLines::new(text), &ctx(context), start, eof, &|| false)
    }

    fn at(index: usize, fuzz: u64) -> Option<Found> {
        Some(Found { index, fuzz })
    }

    #[test]
    fn canonical_forms_fold_typography_and_escapes() {
        assert_eq!(
            canonicalize("\u{201C}a\u{201D} \u{2013} \u{2019}b\u{A0}\\`c\\'\\\"e\u{301}"),
            "\"a\" - 'b `c'\"\u{E9}"
        );
    }

    #[test]
    fn passes_go_from_strict_to_loose() {
        assert_eq!(find("a\nb\nc\n", &["b", "c"], 0, false), at(1, 0));
        assert_eq!(
            find("a\nb  \nc\n", &["b", "c"], 0, false),
            at(1, FUZZ_TRAILING)
        );
        assert_eq!(
            find("a\n  b\n  c\n", &["b", "c"], 0, false),
            at(1, FUZZ_TRIMMED)
        );
        assert_eq!(
            find("alpha\nbravo\ncharlie\n", &["bravo", "charlee"], 0, false),
            at(1, FUZZ_SIMILAR)
        );
        assert_eq!(find("alpha\nbravo\n", &["xyz", "qqq"], 0, false), None);
        assert_eq!(find("a\n", &["a", "b", "c"], 0, false), None);
    }

    #[test]
    fn the_search_starts_at_the_current_position_clamped_to_the_last_window() {
        assert_eq!(find("x\ny\nx\ny", &["x"], 1, false), at(2, 0));
        // Past the last window, the search starts at the last window.
        assert_eq!(find("x\ny\nx\ny", &["x", "y"], 3, false), at(2, 0));
    }

    #[test]
    fn end_of_file_hunks_match_before_a_final_newline() {
        assert_eq!(find("x\nend\nx\nend\n", &["x", "end"], 0, true), at(2, 0));
        assert_eq!(find("x\nend\nx\nend", &["x", "end"], 0, true), at(2, 0));
        // A context that includes the final empty line still matches at the very end.
        assert_eq!(find("x\nend\nx\nend\n", &["end", ""], 0, true), at(3, 0));
        // Not at the end at all: the first match, with Cline's penalty.
        assert_eq!(
            find("x\nend\ny\n", &["x", "end"], 0, true),
            at(0, FUZZ_NOT_AT_END)
        );
    }

    #[test]
    fn similarity_follows_clines_formula() {
        // "abcdef" vs "abcxyz": distance 3 of 6 -> 0.5, below the threshold.
        assert_eq!(find("abcdef\n", &["abcxyz"], 0, false), None);
        // "abcdefghij" vs "abcdefgxyz": 0.7.
        assert_eq!(
            find("abcdefghij\n", &["abcdefgxyz"], 0, false),
            at(0, FUZZ_SIMILAR)
        );
        // Anagrams pass the bag filter and are decided by the real distance.
        assert_eq!(find("abcdefghij\n", &["jihgfedcba"], 0, false), None);
    }

    #[test]
    fn long_contexts_compare_whole_lines() {
        let long = "x".repeat(300);
        let file = format!("{long}\n{long}\nshort\n");
        let context = [long.as_str(), long.as_str(), "other"];
        // 600 of 605 units are in equal lines.
        assert_eq!(find(&file, &context, 0, false), at(0, FUZZ_SIMILAR));
        let context = [long.as_str(), "y", "short"];
        assert!(line_similarity(&ctx(&context), &ctx(&[&long, &long, "short"])) < 0.66);
    }

    #[test]
    fn bag_distance_bounds_the_edit_distance() {
        let bag = |a: &str, b: &str| {
            let mut counts = UnitCounts::default();
            counts.add(&a.encode_utf16().collect::<Vec<u16>>(), 1);
            counts.add(&b.encode_utf16().collect::<Vec<u16>>(), -1);
            counts.bag_distance()
        };
        for (a, b) in [
            ("kitten", "sitting"),
            ("abc", "cba"),
            ("", "abc"),
            ("aab", "b"),
            ("é✓", "✓"),
        ] {
            assert!(bag(a, b) <= strsim::levenshtein(a, b), "{a} {b}");
        }
        assert_eq!(
            [bag("aab", "b"), bag("ab", "cd"), bag("é✓x", "✓")],
            [2, 2, 2]
        );
    }

    /// Cline's `calculateSimilarity`, computed directly.
    fn cline_similarity(window: &str, context: &str) -> f64 {
        let (a, b): (Vec<u16>, Vec<u16>) = (
            window.encode_utf16().collect(),
            context.encode_utf16().collect(),
        );
        let longer = a.len().max(b.len());
        if longer == 0 {
            return 1.0;
        }
        if longer > MAX_LEVENSHTEIN_CHARS {
            return line_similarity(
                &ctx(&window.split('\n').collect::<Vec<_>>()),
                &ctx(&context.split('\n').collect::<Vec<_>>()),
            );
        }
        (longer - strsim::generic_levenshtein(&a, &b)) as f64 / longer as f64
    }

    #[test]
    fn the_filtered_similarity_decides_like_the_direct_formula() {
        let mut rng = fastrand::Rng::with_seed(7);
        let words = ["ab", "ba", "abc", "x", "", "é", "cab", "aaaaaaaaaa", "bc a"];
        let line = |rng: &mut fastrand::Rng| -> String {
            (0..rng.usize(0..4))
                .map(|_| words[rng.usize(0..words.len())])
                .collect()
        };
        for _ in 0..5000 {
            let file: Vec<String> = (0..rng.usize(1..6)).map(|_| line(&mut rng)).collect();
            let n = rng.usize(1..=file.len());
            let context: Vec<String> = (0..n).map(|_| line(&mut rng)).collect();
            let lines = FileLines::new(&file.join("\n"));
            let pattern = Pattern::new(&context);
            for start in 0..=lines.len() - n {
                let window = lines.canonical[start..start + n].join("\n");
                let direct = cline_similarity(&window, &context.join("\n")) >= SIMILARITY_THRESHOLD;
                assert_eq!(
                    pattern.similar_at(&lines, start),
                    direct,
                    "{file:?} {context:?} {start}"
                );
            }
        }
    }
}
