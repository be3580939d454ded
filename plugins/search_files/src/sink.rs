//! The hits of one file: each matching line with the context line before and after it.
//!
//! ripgrep reports a context line once even when it borders two matches, and labels it: a
//! `Before` line belongs to the match that follows it, an `After` line to the match before it.
//! Following those labels within one file gives every context line to the right match; Cline's
//! parser instead gives each context line to whichever match it saw last, across file
//! boundaries, which is the misattribution this port corrects.

use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};

/// One matching line with its context. Lines are raw bytes with their line terminator, as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hit {
    /// The line before the match, when it is not itself a match (at most one).
    pub before: Vec<Vec<u8>>,
    /// The matching line.
    pub line: Vec<u8>,
    /// The line after the match, when it is not itself a match (at most one).
    pub after: Vec<Vec<u8>>,
}

/// Collects the hits of one file as the searcher reports them.
#[derive(Debug, Default)]
pub struct FileSink {
    hits: Vec<Hit>,
    pending_before: Vec<Vec<u8>>,
}

impl FileSink {
    /// The hits found, in line order.
    pub fn into_hits(self) -> Vec<Hit> {
        self.hits
    }
}

impl Sink for FileSink {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        // Line-by-line searching reports one line per match; a multi-line report (which this
        // searcher's settings do not produce) would still give one hit per line.
        for line in mat.lines() {
            self.hits.push(Hit {
                before: std::mem::take(&mut self.pending_before),
                line: line.to_vec(),
                after: Vec::new(),
            });
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        match context.kind() {
            SinkContextKind::Before => self.pending_before.push(context.bytes().to_vec()),
            SinkContextKind::After => {
                if let Some(last) = self.hits.last_mut() {
                    last.after.push(context.bytes().to_vec());
                }
            }
            // Only produced in passthru mode, which is not used.
            SinkContextKind::Other => {}
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use grep_regex::RegexMatcherBuilder;
    use grep_searcher::SearcherBuilder;

    fn hits(text: &str, regex: &str) -> Vec<(Vec<String>, String, Vec<String>)> {
        let matcher = RegexMatcherBuilder::new()
            .multi_line(true)
            .line_terminator(Some(b'\n'))
            .build(regex)
            .unwrap();
        let mut searcher = SearcherBuilder::new()
            .before_context(1)
            .after_context(1)
            .line_number(false)
            .build();
        let mut sink = FileSink::default();
        searcher
            .search_slice(&matcher, text.as_bytes(), &mut sink)
            .unwrap();
        let s = |b: &Vec<u8>| String::from_utf8_lossy(b).trim_end().to_string();
        sink.into_hits()
            .iter()
            .map(|h| {
                (
                    h.before.iter().map(s).collect(),
                    s(&h.line),
                    h.after.iter().map(s).collect(),
                )
            })
            .collect()
    }

    fn v(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn each_match_gets_the_line_before_and_after_it() {
        let text = "alpha\nTODO one\nTODO two\nbeta\ngamma\ndelta\nTODO three\nepsilon\n";
        assert_eq!(
            hits(text, "TODO"),
            vec![
                (v(&["alpha"]), "TODO one".to_string(), v(&[])),
                (v(&[]), "TODO two".to_string(), v(&["beta"])),
                (v(&["delta"]), "TODO three".to_string(), v(&["epsilon"])),
            ]
        );
    }

    #[test]
    fn a_line_between_two_matches_is_shown_once_after_the_first() {
        assert_eq!(
            hits("x1\nmid\nx2\n", "x"),
            vec![
                (v(&[]), "x1".to_string(), v(&["mid"])),
                (v(&[]), "x2".to_string(), v(&[])),
            ]
        );
    }

    #[test]
    fn first_and_last_lines_have_one_sided_context() {
        assert_eq!(
            hits("TODO first\nmiddle\nTODO last", "TODO"),
            vec![
                (v(&[]), "TODO first".to_string(), v(&["middle"])),
                (v(&[]), "TODO last".to_string(), v(&[])),
            ]
        );
    }
}
