//! One file's outline: the lines where its definitions are named, in Cline's block format.

use tree_sitter::{Parser, QueryCursor, StreamingIterator};

use crate::language::Language;

/// The line between two runs of definition lines that are not adjacent in the file, and around
/// each file's block (ASCII, unlike the definition lines).
pub const SEPARATOR: &str = "|----";

/// What starts each definition line (U+2502, a box-drawing bar).
pub const LINE_MARK: char = '│';

/// Why a file could not be outlined at all (a broken grammar or query: a bug, not bad input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineError(pub String);

impl std::fmt::Display for OutlineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One captured node, as far as the outline cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    /// The node's first row (0-based).
    start: usize,
    /// The node's last row.
    end: usize,
    /// Whether it is a `@name` capture, whose line is printed.
    printed: bool,
}

/// The outline of `source`, or `None` when the query finds nothing worth a line.
///
/// Cline's `parseFile`: the captures are ordered by their first row (keeping tree-sitter's order
/// within a row); a capture that starts more than one row after the last row of the capture
/// before it is preceded by [`SEPARATOR`]; a `@name` capture prints its whole source line (as
/// split on `\n`, so a `\r` stays) after [`LINE_MARK`], unless that line is empty. The lines are
/// wrapped as `|----\n<lines>|----\n`. Syntax errors do not stop anything: tree-sitter recovers
/// and whatever it still recognises is listed.
pub fn outline(source: &str, language: Language) -> Result<Option<String>, OutlineError> {
    let query = language
        .query()
        .map_err(|e| OutlineError(format!("the {language:?} query does not compile: {e}")))?;
    let mut parser = Parser::new();
    parser
        .set_language(&language.grammar())
        .map_err(|e| OutlineError(format!("the {language:?} grammar cannot be loaded: {e}")))?;
    // Without a timeout or a cancellation flag, parsing always returns a tree.
    let Some(tree) = parser.parse(source, None) else {
        return Ok(None);
    };
    let name_index = query.capture_index_for_name("name");
    let mut spans = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut captures = cursor.captures(query, tree.root_node(), source.as_bytes());
    while let Some((found, index)) = captures.next() {
        let capture = found.captures[*index];
        spans.push(Span {
            start: capture.node.start_position().row,
            end: capture.node.end_position().row,
            printed: Some(capture.index) == name_index,
        });
    }
    // A stable sort: captures on one row keep tree-sitter's order (by position, then pattern).
    spans.sort_by_key(|span| span.start);
    Ok(render(&spans, source))
}

/// Turns ordered spans into the block (see [`outline`]).
fn render(spans: &[Span], source: &str) -> Option<String> {
    let lines: Vec<&str> = source.split('\n').collect();
    let mut body = String::new();
    let mut last_end: Option<usize> = None;
    for span in spans {
        if last_end.is_some_and(|end| span.start > end + 1) {
            body.push_str(SEPARATOR);
            body.push('\n');
        }
        if span.printed {
            if let Some(line) = lines.get(span.start).filter(|line| !line.is_empty()) {
                body.push(LINE_MARK);
                body.push_str(line);
                body.push('\n');
            }
        }
        last_end = Some(span.end);
    }
    if body.is_empty() {
        None
    } else {
        Some(format!("{SEPARATOR}\n{body}{SEPARATOR}\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: usize, end: usize, printed: bool) -> Span {
        Span {
            start,
            end,
            printed,
        }
    }

    #[test]
    fn a_gap_after_the_last_row_adds_a_separator() {
        let source = "a\nb\nc\nd\ne";
        // A definition over rows 0-2 named on row 0, then one on row 4: row 4 is more than one
        // row after the name's row 0 (the last capture), so a separator comes first.
        let spans = [
            span(0, 2, false),
            span(0, 0, true),
            span(4, 4, false),
            span(4, 4, true),
        ];
        assert_eq!(
            render(&spans, source).as_deref(),
            Some("|----\n│a\n|----\n│e\n|----\n")
        );
        // On the next row there is no gap.
        let spans = [span(0, 0, true), span(1, 1, true)];
        assert_eq!(
            render(&spans, source).as_deref(),
            Some("|----\n│a\n│b\n|----\n")
        );
    }

    #[test]
    fn empty_lines_print_nothing_and_nothing_gives_none() {
        let source = "\nx\r\n";
        assert_eq!(render(&[span(0, 0, true)], source), None);
        assert_eq!(render(&[span(0, 3, false)], source), None);
        assert_eq!(render(&[], source), None);
        // The carriage return of a CRLF line is kept, as Cline splits on "\n" only.
        assert_eq!(
            render(&[span(1, 1, true)], source).as_deref(),
            Some("|----\n│x\r\n|----\n")
        );
    }

    #[test]
    fn a_separator_can_stand_without_lines_between() {
        // A non-printing capture far below still adds a separator.
        let source = "a\nb\nc\nd";
        let spans = [span(0, 0, true), span(3, 3, false)];
        assert_eq!(
            render(&spans, source).as_deref(),
            Some("|----\n│a\n|----\n|----\n")
        );
    }

    #[test]
    fn python_outline() {
        let source = "class A:\n    def f(self):\n        pass\n\n\ndef g():\n    pass\n";
        assert_eq!(
            outline(source, Language::Python),
            Ok(Some(
                "|----\n│class A:\n│    def f(self):\n|----\n│def g():\n|----\n".to_string()
            ))
        );
    }

    #[test]
    fn a_file_without_definitions_has_no_outline() {
        assert_eq!(outline("x = 1\n", Language::Python), Ok(None));
        assert_eq!(outline("", Language::Rust), Ok(None));
    }
}
