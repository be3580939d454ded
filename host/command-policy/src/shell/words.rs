//! Words: what a word can become before it runs, and the code inside it (substitutions,
//! expansions, arithmetic), walked in turn.

use brush_parser::word::{self, WordPiece, WordPieceWithSource};

use super::{options, Analyzer, Ctx, Unparsable};
use crate::expansions::{self, numeric_only, Unsafe};
use crate::found::Word;

impl Analyzer {
    /// Classifies a word and walks the code inside it.
    pub(super) fn word(&mut self, raw: &str, ctx: Ctx) -> Result<Word, Unparsable> {
        let mut word = Word::new(raw);
        match word::parse(raw, &options()) {
            Ok(pieces) => self.pieces(&pieces, raw, false, ctx, &mut word)?,
            Err(e) => {
                self.fail(ctx, format!("{e:?}"))?;
                word.push_unknown();
            }
        }
        Ok(word)
    }

    /// Walks the code inside text that is not a whole word (`${…}` operands, arithmetic).
    pub(super) fn nested_word(&mut self, text: &str, ctx: Ctx) -> Result<(), Unparsable> {
        self.word(text, ctx).map(drop)
    }

    /// Code inside a quoted string does not run as such, but bash evaluates it in some places
    /// (array subscripts in arithmetic, `PS4`): deny rules still see it.
    pub(super) fn latent(&mut self, text: &str, ctx: Ctx) -> Result<(), Unparsable> {
        if text.contains("$(") || text.contains("${") || text.contains('`') {
            self.nested_word(text, ctx.latent())?;
        }
        Ok(())
    }

    pub(super) fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        raw: &str,
        quoted: bool,
        ctx: Ctx,
        word: &mut Word,
    ) -> Result<(), Unparsable> {
        for (k, piece) in pieces.iter().enumerate() {
            let source = raw.get(piece.start_index..piece.end_index).unwrap_or("");
            if let WordPiece::Text(text) = &piece.piece {
                let next_is_bracket = matches!(
                    pieces.get(k + 1).map(|p| &p.piece),
                    Some(WordPiece::Text(next)) if next.starts_with('[')
                );
                if text == "$" && next_is_bracket {
                    // `$[ … ]`, bash's old arithmetic expansion, which the parser reads as text.
                    self.old_arithmetic(raw, piece.start_index, ctx);
                }
            }
            match &piece.piece {
                WordPiece::Text(text) if quoted => word.push_literal(text),
                WordPiece::Text(text) => word.push_unquoted(text),
                WordPiece::SingleQuotedText(text) => {
                    word.push_literal(text);
                    self.latent(text, ctx)?;
                }
                WordPiece::AnsiCQuotedText(text) => {
                    if text.contains('\\') {
                        // Escapes such as `\x72` make the text something else at run time.
                        word.push_unknown();
                    } else {
                        word.push_literal(text);
                    }
                    self.latent(text, ctx)?;
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, raw, true, ctx, word)?;
                }
                WordPiece::TildePrefix(user) => word.push_literal(&format!("~{user}")),
                WordPiece::ParameterExpansion(expr) => {
                    word.push_unknown();
                    if let Some(operator) = expansions::parameter(expr) {
                        self.record_unsafe(ctx, Unsafe::new(source, operator));
                    }
                    if let Some(inner) = source.strip_prefix("${").and_then(|s| s.strip_suffix('}'))
                    {
                        if inner.contains(['$', '`']) {
                            self.nested_word(inner, ctx)?;
                        }
                    }
                }
                WordPiece::CommandSubstitution(code)
                | WordPiece::BackquotedCommandSubstitution(code) => {
                    word.push_unknown();
                    self.program(code, ctx.unpiped())?;
                }
                WordPiece::EscapeSequence(escape) => {
                    let escaped = escape.strip_prefix('\\').unwrap_or(escape);
                    // A backslash-newline joins lines; it leaves nothing behind.
                    if escaped != "\n" {
                        word.push_literal(escaped);
                    }
                }
                WordPiece::ArithmeticExpression(expr) => {
                    word.push_unknown();
                    self.arithmetic(&expr.value, || source.to_string(), "$((", ctx);
                    self.nested_word(&expr.value, ctx)?;
                }
            }
        }
        Ok(())
    }
}

impl Analyzer {
    /// `$[ … ]` at `start` in `raw`: refused unless its text, up to the matching `]`, is
    /// numbers and operators.
    pub(super) fn old_arithmetic(&mut self, raw: &str, start: usize, ctx: Ctx) {
        let rest = raw.get(start + 2..).unwrap_or("");
        let mut depth = 1usize;
        let end = rest.char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        });
        let numeric = end.is_some_and(|end| numeric_only(&rest[..end]));
        if !numeric {
            let construct = match end {
                Some(end) => format!("$[{}]", &rest[..end]),
                None => format!("$[{rest}"),
            };
            self.record_unsafe(ctx, Unsafe::new(construct, "$["));
        }
    }
}
