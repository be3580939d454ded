//! The text the model receives for a listing (Cline's `formatFilesList`).

use crate::collate::{collation_key, CollationKey};
use crate::walk::Entry;

/// The prefix of an entry `.clineignore` blocks: the entry is shown, but marked.
pub const LOCK_PREFIX: &str = "🔒 ";

/// What follows the entries when the listing reached its limit.
pub const TRUNCATION_HINT: &str =
    "\n\n(File list truncated. Use list_files on specific subdirectories if you need to explore further.)";

/// The text for an empty listing.
pub const NO_FILES: &str = "No files found.";

/// Formats a listing: entries relative to the listed directory (directories with a trailing
/// `/`) in Cline's order (see [`sort_key`]), those `is_blocked` reports marked with
/// [`LOCK_PREFIX`], one per line; then [`TRUNCATION_HINT`] if the limit was hit, or
/// [`NO_FILES`] when there is nothing.
///
/// `is_blocked` receives each entry; Cline checks the entry's absolute path without the
/// directory's trailing slash, so a `secrets/` rule marks `secrets/key.txt` but not `secrets/`.
pub fn format_files_list<E>(
    entries: &[Entry],
    did_hit_limit: bool,
    mut is_blocked: impl FnMut(&Entry) -> Result<bool, E>,
) -> Result<String, E> {
    let mut sorted: Vec<(PathKey, String, &Entry)> = entries
        .iter()
        .map(|e| {
            let shown = e.display();
            (sort_key(&shown), shown, e)
        })
        .collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut lines = Vec::with_capacity(sorted.len());
    for (_, shown, entry) in sorted {
        if is_blocked(entry)? {
            lines.push(format!("{LOCK_PREFIX}{shown}"));
        } else {
            lines.push(shown);
        }
    }
    Ok(if did_hit_limit {
        format!("{}{TRUNCATION_HINT}", lines.join("\n"))
    } else if lines.is_empty() {
        NO_FILES.to_string()
    } else {
        lines.join("\n")
    })
}

/// The sort key of a shown path (Cline's comparator, made a total order).
pub type PathKey = Vec<(bool, CollationKey, String)>;

/// The sort key of a shown path such as `src/a.ts` or `src/(auth)/`.
///
/// Cline splits both paths on `/` (a directory's trailing slash gives an empty last part) and, at
/// the first differing part, puts the path that ends there (a file, or the directory itself
/// before its contents) first, and otherwise compares the two parts with `localeCompare`. At
/// each level that puts files first, then each directory followed by its contents. Each part
/// here is `(continues, collation key, text)`: the flag does the "ends here first" rule, the
/// collation key the `localeCompare`, and the text breaks ties that Cline leaves to the order
/// the entries were found in (`a.txt` and `A.txt`), so the order is always the same.
pub fn sort_key(shown: &str) -> PathKey {
    let parts: Vec<&str> = shown.split('/').collect();
    let last = parts.len().saturating_sub(1);
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| (i < last, collation_key(part), (*part).to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    fn entry(shown: &str) -> Entry {
        let relative = shown.trim_end_matches('/');
        Entry {
            relative: relative.to_string(),
            is_dir: shown.ends_with('/'),
            ignored: false,
        }
    }

    fn format(shown: &[&str], did_hit_limit: bool, blocked: &[&str]) -> String {
        let entries: Vec<Entry> = shown.iter().map(|s| entry(s)).collect();
        let result = format_files_list(&entries, did_hit_limit, |e| {
            Ok::<_, Infallible>(blocked.contains(&e.relative.as_str()))
        });
        match result {
            Ok(text) => text,
            Err(never) => match never {},
        }
    }

    #[test]
    fn files_come_first_then_each_directory_with_its_contents() {
        let shown = [
            "src/",
            "b/",
            "src/z.ts",
            "a.txt",
            "src/lib/",
            "src/lib/x.rs",
            "b/c/",
            "Z.md",
        ];
        assert_eq!(
            format(&shown, false, &[]),
            "a.txt\nZ.md\nb/\nb/c/\nsrc/\nsrc/z.ts\nsrc/lib/\nsrc/lib/x.rs"
        );
    }

    #[test]
    fn blocked_entries_are_marked_not_removed() {
        assert_eq!(
            format(&["key.txt", "open.txt"], false, &["key.txt"]),
            "🔒 key.txt\nopen.txt"
        );
    }

    #[test]
    fn empty_and_truncated_listings() {
        assert_eq!(format(&[], false, &[]), "No files found.");
        assert_eq!(
            format(&["a"], true, &[]),
            "a\n\n(File list truncated. Use list_files on specific subdirectories if you need to explore further.)"
        );
    }

    #[test]
    fn case_ties_are_broken_by_text() {
        assert_eq!(
            format(&["b.txt", "a.txt", "A.txt"], false, &[]),
            "A.txt\na.txt\nb.txt"
        );
    }
}
