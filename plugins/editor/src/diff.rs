//! The diff a replacement answers with, as Cline's SDK writes it: the changed lines between the
//! common first and last lines, `-N: text` numbered in the old file and `+N: text` in the new
//! one, at most a number of them with a note of what was left out.

/// Splits on CRLF or LF; a final line ending leaves an empty last line.
pub fn split_lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

/// The diff of `old` and `new`, showing at most `max_lines` changed lines.
pub fn line_diff(old: &str, new: &str, max_lines: usize) -> String {
    let (old_lines, new_lines) = (split_lines(old), split_lines(new));
    let prefix = old_lines
        .iter()
        .zip(&new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = old_lines[prefix..]
        .iter()
        .rev()
        .zip(new_lines[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let removed = &old_lines[prefix..old_lines.len() - suffix];
    let added = &new_lines[prefix..new_lines.len() - suffix];
    let (mut removed_budget, mut added_budget) = (removed.len(), added.len());
    if removed.len() + added.len() > max_lines {
        removed_budget = removed.len().min(
            max_lines
                .div_ceil(2)
                .max(max_lines.saturating_sub(added.len())),
        );
        added_budget = added.len().min(max_lines - removed_budget);
    }
    let mut out = vec!["```diff".to_string()];
    out.extend(
        removed[..removed_budget]
            .iter()
            .enumerate()
            .map(|(i, line)| format!("-{}: {line}", prefix + i + 1)),
    );
    out.extend(
        added[..added_budget]
            .iter()
            .enumerate()
            .map(|(i, line)| format!("+{}: {line}", prefix + i + 1)),
    );
    let (omitted_removed, omitted_added) =
        (removed.len() - removed_budget, added.len() - added_budget);
    if omitted_removed + omitted_added > 0 {
        out.push(format!(
            "... diff truncated ({omitted_removed} more removed, {omitted_added} more added lines) ..."
        ));
    }
    out.push("```".to_string());
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_changed_lines_are_shown() {
        assert_eq!(
            line_diff("a\nb\nc\nd\ne\nf", "a\nB\ne\nf", 200),
            "```diff\n-2: b\n-3: c\n-4: d\n+2: B\n```"
        );
        assert_eq!(line_diff("a\nb", "a\nnew\nb", 200), "```diff\n+2: new\n```");
        assert_eq!(line_diff("same", "same", 200), "```diff\n```");
    }

    #[test]
    fn a_long_diff_is_cut_with_a_count() {
        let old: Vec<String> = (0..10).map(|i| format!("old-{i}")).collect();
        assert_eq!(
            line_diff(&old.join("\n"), "replaced", 3),
            "```diff\n-1: old-0\n-2: old-1\n+1: replaced\n... diff truncated (8 more removed, 0 more added lines) ...\n```"
        );
    }
}
