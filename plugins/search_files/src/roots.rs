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

use std::path::{Path, PathBuf};

use tool_api::sdk::prelude::*;

use crate::answer::failed_search;
use crate::format::NO_RESULTS;
use crate::format::{format_results, MAX_RESULTS};
use crate::search::{search_verdict, Gate, Query, SearchError};

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

/// One root of a search of every root: its name, the verdict on the path there (`None` when
/// it may not be searched), and the root's path.
pub(crate) type RootTarget = (String, Option<PathVerdict>, PathBuf);

/// In a multi-root workspace, a relative path without a hint is searched in every root: the
/// path joined to each. The primary root's is the path the host checked and approved; another
/// root's is searched only when it is inside the workspace and not blocked (its own approval
/// was never asked). `None` when one search is made.
pub(crate) fn every_root(
    ctx: &Ctx<'_>,
    path: &str,
    verdict: &PathVerdict,
) -> Result<Option<Vec<RootTarget>>, ToolError> {
    let workspace = ctx.workspace();
    if !workspace.is_multi_root()
        || tool_api::workspace::parse_hint(path).is_some()
        || Path::new(path).is_absolute()
    {
        return Ok(None);
    }
    let mut targets = Vec::with_capacity(workspace.root_count());
    for root in 0..workspace.root_count() {
        let base = workspace.root_path(root).to_path_buf();
        let verdict = if root == 0 {
            Some(verdict.clone())
        } else {
            let there = tool_api::workspace::normalize(&base.join(path));
            let verdict = ctx.check_path(&there.to_string_lossy())?;
            (verdict.inside_workspace && !verdict.ignored && !verdict.refused).then_some(verdict)
        };
        targets.push((workspace.root_name(root).to_string(), verdict, base));
    }
    Ok(Some(targets))
}

/// Searches every root at once and combines the results by root ([`combine`]).
pub(crate) fn search_every_root(
    ctx: &Ctx<'_>,
    targets: &[RootTarget],
    query: &Query<'_>,
    gate: &dyn Gate,
) -> Result<String, ToolError> {
    let workspace = ctx.workspace();
    let searched: Vec<Result<RootResults, SearchError>> = std::thread::scope(|scope| {
        let running: Vec<_> = targets
            .iter()
            .map(|(name, verdict, base)| {
                scope.spawn(move || {
                    let Some(verdict) = verdict else {
                        return Ok(RootResults {
                            name: name.clone(),
                            text: String::new(),
                            count: None,
                        });
                    };
                    let (text, count) = match search_verdict(workspace, verdict, query, gate) {
                        Ok(files) => {
                            let hits: usize = files.iter().map(|f| f.hits.len()).sum();
                            (format_results(&files, base), Some(hits.min(MAX_RESULTS)))
                        }
                        Err(SearchError::Root(_)) => (String::new(), None),
                        Err(e) => return Err(e),
                    };
                    Ok(RootResults {
                        name: name.clone(),
                        text,
                        count,
                    })
                })
            })
            .collect();
        running
            .into_iter()
            .map(|search| search.join().unwrap_or(Err(SearchError::Cancelled)))
            .collect()
    });
    let mut results = Vec::with_capacity(searched.len());
    for outcome in searched {
        match outcome {
            Ok(root) => results.push(root),
            Err(e) => return failed_search(ctx, e),
        }
    }
    Ok(combine(&results))
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
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
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
