//! Searching a multi-root workspace (Cline's multi-workspace search): a path without a
//! `@name:` hint is searched in every root at once, and the results are combined, bucketed by
//! the root's name.
//!
//! ```text
//! Found 3 results across 2 workspaces.
//!
//! ## Workspace: frontend
//! src/a.ts
//! │----
//! │…
//! │----
//!
//! ## Workspace: backend
//! …
//! ```
//!
//! Each root's search is an ordinary search of that root joined with the path, its paths shown
//! relative to that root; a root where the search could not run (the path does not exist
//! there) or found nothing is left out, and with no result anywhere the text is
//! `Found 0 results.` (as in Cline). `k` counts every root searched.

use crate::format::NO_RESULTS;

/// The outcome of one root's search: its name, its formatted text, and how many results the
/// text shows (`None` when the search could not run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootResults {
    /// The root's name.
    pub name: String,
    /// The text [`crate::format_results`] made of its hits.
    pub text: String,
    /// How many results the text lists; `None` when the search failed.
    pub count: Option<usize>,
}

/// Cline's combination of several roots' results.
///
/// One deliberate difference: a root with 300 or more results is kept with the 300 it shows.
/// Cline reads each root's count from a `Found N results` header, finds none in `Showing first
/// 300 of 300+ results`, and so dropped the root with the most matches from the answer.
pub fn combine(roots: &[RootResults]) -> String {
    let total: usize = roots.iter().filter_map(|r| r.count).sum();
    if total == 0 {
        return NO_RESULTS.to_string();
    }
    let sections: Vec<String> = roots
        .iter()
        .filter(|r| r.count.unwrap_or(0) > 0)
        .filter_map(|r| {
            let lines: Vec<&str> = r.text.split('\n').collect();
            let body = if lines.len() > 2 {
                lines[2..].join("\n")
            } else {
                r.text.clone()
            };
            (!body.trim().is_empty()).then(|| format!("## Workspace: {}\n{body}", r.name))
        })
        .collect();
    let found = if total == 1 {
        "1 result".to_string()
    } else {
        format!("{} results", grouped(total))
    };
    format!(
        "Found {found} across {} workspaces.\n\n{}",
        roots.len(),
        sections.join("\n\n")
    )
}

/// A count with `,` between thousands, as JavaScript's `toLocaleString()` writes it in English.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(name: &str, text: &str, count: Option<usize>) -> RootResults {
        RootResults {
            name: name.into(),
            text: text.into(),
            count,
        }
    }

    #[test]
    fn results_are_bucketed_by_root_and_empty_roots_left_out() {
        let a = "Found 2 results.\n\na.txt\n│----\n│x\n│----\n│x\n│----";
        let b = "Found 1 result.\n\nsub/b.txt\n│----\n│x\n│----";
        assert_eq!(
            combine(&[
                root("front", a, Some(2)),
                root("empty", NO_RESULTS, Some(0)),
                root("missing", "", None),
                root("back", b, Some(1)),
            ]),
            "Found 3 results across 4 workspaces.\n\n## Workspace: front\na.txt\n│----\n│x\n\
             │----\n│x\n│----\n\n## Workspace: back\nsub/b.txt\n│----\n│x\n│----"
        );
        assert_eq!(
            combine(&[root("a", NO_RESULTS, Some(0)), root("b", "", None)]),
            NO_RESULTS
        );
        assert_eq!(
            combine(&[root("a", b, Some(1)), root("b", NO_RESULTS, Some(0))]),
            "Found 1 result across 2 workspaces.\n\n## Workspace: a\nsub/b.txt\n│----\n│x\n│----"
        );
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1200), "1,200");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }
}
