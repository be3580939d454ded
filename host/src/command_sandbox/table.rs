//! The sandbox's lists kept as data (`deny_read.txt`, `readable.txt`, `secret_env.txt`): one
//! entry a line, columns separated by `|`, `#` starting a comment line.

/// The rows of `text`, each with its columns trimmed; blank and comment lines skipped.
pub(super) fn rows(text: &'static str) -> impl Iterator<Item = Vec<&'static str>> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| line.split('|').map(str::trim).collect())
}

/// The first three columns of a row (missing ones empty).
pub(super) fn three(row: &[&'static str]) -> [&'static str; 3] {
    [0, 1, 2].map(|i| row.get(i).copied().unwrap_or(""))
}
