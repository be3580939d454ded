//! What a command line really runs, found with a shell parser.
//!
//! The parser is `brush-parser` (the parser of the brush shell). The alternatives were weighed
//! for maintenance and fit: `yash-syntax` is GPL-3.0 (incompatible with this workspace's
//! MIT/Apache licence), `conch-parser` has been unmaintained since 2019, and `tree-sitter-bash`
//! needs a C toolchain and produces an error-tolerant tree that would have to be re-interpreted
//! to fail closed. `brush-parser` is pure Rust, MIT, actively maintained, targets bash
//! compatibility, and splits words into pieces (quotes, parameter and command substitutions,
//! arithmetic) so that nested code can be parsed in turn. Version 0.2 is used: later versions
//! need a newer compiler than the workspace's minimum and pull in more dependencies.
//!
//! [`analyze`] returns every simple command the line would run: the top-level ones, those in
//! subshells, command and process substitutions (also inside double quotes), function bodies,
//! here-documents, `bash -c` strings, `eval` and `trap` arguments, and the commands behind
//! wrappers such as `sudo`, `env`, `timeout` or `xargs` (see [`super::wrappers`]). Code whose
//! text is only known at run time (`bash -c "$X"`, `eval $X`, a shell reading a pipe) is
//! reported as opaque. Anything that does not parse is an error: the caller fails closed.

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions, SourceInfo};

use super::expansions::{self, numeric_only, Unsafe};
pub use super::found::{Found, Slot, Strength, Word};
use super::risky;
use super::wrappers::{self, Inner};

/// How deeply code may nest (substitutions in `bash -c` strings in substitutions…).
const MAX_DEPTH: usize = 32;

/// What a command line runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Every command, in the order the text mentions them.
    pub commands: Vec<Found>,
    /// Whether any redirection, here-document or process substitution appears.
    pub redirects: bool,
    /// Constructs whose effect cannot be computed (see [`super::expansions`]), in code that
    /// runs.
    pub unsafe_constructs: Vec<Unsafe>,
}

/// A command line the parser rejects (bash would reject it too, or it is too deeply nested).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparsable(pub String);

/// Finds every command `command` runs.
pub fn analyze(command: &str) -> Result<Analysis, Unparsable> {
    let mut analyzer = Analyzer::default();
    analyzer.program(command, Ctx::top())?;
    Ok(analyzer.analysis)
}

/// Where in the line the walker is.
#[derive(Debug, Clone, Copy)]
struct Ctx {
    strength: Strength,
    /// Whether the current command's standard input is a pipe.
    piped: bool,
    /// Strength for code inside quoted strings (full inside here-documents, where quotes are
    /// just characters).
    latent: Strength,
}

impl Ctx {
    fn top() -> Self {
        Self {
            strength: Strength::Full,
            piped: false,
            latent: Strength::DenyOnly,
        }
    }

    fn unpiped(self) -> Self {
        Self {
            piped: false,
            ..self
        }
    }

    fn latent(self) -> Self {
        Self {
            strength: weaker(self.strength, self.latent),
            piped: false,
            latent: Strength::DenyOnly,
        }
    }
}

fn weaker(a: Strength, b: Strength) -> Strength {
    if a == Strength::DenyOnly || b == Strength::DenyOnly {
        Strength::DenyOnly
    } else {
        Strength::Full
    }
}

/// What feeds a command's standard input through a redirection.
enum HereInput {
    /// A here-document or here-string with this text.
    Text(String),
    /// A file named in the command (a script, for a shell).
    File,
    /// Something only known at run time (`< <(…)`, `< $F`, `<&3`, an expanding here-document).
    Dynamic,
}

#[derive(Default)]
struct Analyzer {
    analysis: Analysis,
    depth: usize,
    /// Above zero while a word is only read for its text (a prefix assignment as allow
    /// patterns see it), its code being walked elsewhere: nothing is recorded.
    quiet: usize,
}

fn options() -> ParserOptions {
    ParserOptions {
        // Globs and expansions are only classified, never performed.
        tilde_expansion: false,
        ..ParserOptions::default()
    }
}

impl Analyzer {
    /// A failure: fatal for code that runs, ignored for code that only might (quoted text).
    fn fail(&self, ctx: Ctx, message: String) -> Result<(), Unparsable> {
        if self.quiet > 0 {
            return Ok(());
        }
        match ctx.strength {
            Strength::Full => Err(Unparsable(message)),
            Strength::DenyOnly => Ok(()),
        }
    }

    fn program(&mut self, source: &str, ctx: Ctx) -> Result<(), Unparsable> {
        if self.quiet > 0 {
            return Ok(());
        }
        if self.depth >= MAX_DEPTH {
            return self.fail(ctx, "the command nests too deeply".to_string());
        }
        let mut parser = Parser::new(source.as_bytes(), &options(), &SourceInfo::default());
        let program = match parser.parse_program() {
            Ok(program) => program,
            Err(e) => return self.fail(ctx, format!("{e:?}")),
        };
        self.depth += 1;
        let result = program
            .complete_commands
            .iter()
            .try_for_each(|list| self.compound_list(list, ctx.unpiped()));
        self.depth -= 1;
        result
    }

    fn compound_list(&mut self, list: &ast::CompoundList, ctx: Ctx) -> Result<(), Unparsable> {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first, ctx)?;
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p, ctx)?,
                }
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, ctx: Ctx) -> Result<(), Unparsable> {
        for (i, command) in pipeline.seq.iter().enumerate() {
            let ctx = Ctx {
                piped: i > 0,
                ..ctx
            };
            match command {
                ast::Command::Simple(simple) => self.simple(simple, ctx)?,
                ast::Command::Compound(compound, redirects) => {
                    self.compound(compound, ctx)?;
                    if let Some(list) = redirects {
                        for redirect in &list.0 {
                            self.redirect(redirect, ctx, &mut None)?;
                        }
                    }
                }
                ast::Command::Function(function) => {
                    self.compound(&function.body.0, ctx.unpiped())?;
                    if let Some(list) = &function.body.1 {
                        for redirect in &list.0 {
                            self.redirect(redirect, ctx, &mut None)?;
                        }
                    }
                }
                ast::Command::ExtendedTest(test) => self.extended_test(test, ctx)?,
            }
        }
        Ok(())
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, ctx: Ctx) -> Result<(), Unparsable> {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(arithmetic) => {
                let expr = &arithmetic.expr.value;
                self.arithmetic(expr, || format!("(({expr}))"), "((", ctx);
                self.nested_word(expr, ctx)
            }
            C::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater]
                    .into_iter()
                    .flatten()
                {
                    let text = &expr.value;
                    self.arithmetic(text, || format!("for (({text}))"), "for ((", ctx);
                    self.nested_word(text, ctx)?;
                }
                self.compound_list(&clause.body.0, ctx)
            }
            C::BraceGroup(group) => self.compound_list(&group.0, ctx),
            C::Subshell(subshell) => self.compound_list(&subshell.0, ctx),
            C::ForClause(clause) => {
                let name = &clause.variable_name;
                if let Some(u) = expansions::prompt_target(name, &format!("for {name} in")) {
                    self.record_unsafe(ctx, u);
                }
                for value in clause.values.iter().flatten() {
                    self.word(&value.value, ctx)?;
                }
                self.compound_list(&clause.body.0, ctx)
            }
            C::CaseClause(clause) => {
                self.word(&clause.value.value, ctx)?;
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        self.word(&pattern.value, ctx)?;
                    }
                    if let Some(list) = &item.cmd {
                        self.compound_list(list, ctx)?;
                    }
                }
                Ok(())
            }
            C::IfClause(clause) => {
                self.compound_list(&clause.condition, ctx)?;
                self.compound_list(&clause.then, ctx)?;
                for other in clause.elses.iter().flatten() {
                    if let Some(condition) = &other.condition {
                        self.compound_list(condition, ctx)?;
                    }
                    self.compound_list(&other.body, ctx)?;
                }
                Ok(())
            }
            C::WhileClause(clause) | C::UntilClause(clause) => {
                self.compound_list(&clause.0, ctx)?;
                self.compound_list(&clause.1 .0, ctx)
            }
        }
    }

    fn extended_test(&mut self, test: &ast::ExtendedTestExpr, ctx: Ctx) -> Result<(), Unparsable> {
        use ast::ExtendedTestExpr as T;
        match test {
            T::And(a, b) | T::Or(a, b) => {
                self.extended_test(a, ctx)?;
                self.extended_test(b, ctx)
            }
            T::Not(inner) | T::Parenthesized(inner) => self.extended_test(inner, ctx),
            T::UnaryTest(predicate, word) => {
                let checked = self.word(&word.value, ctx)?;
                if matches!(
                    predicate,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                ) {
                    if let Some(u) = expansions::variable_name(&checked) {
                        self.record_unsafe(ctx, u);
                    }
                }
                Ok(())
            }
            T::BinaryTest(predicate, left, right) => {
                use ast::BinaryPredicate as B;
                if matches!(
                    predicate,
                    B::ArithmeticEqualTo
                        | B::ArithmeticNotEqualTo
                        | B::ArithmeticLessThan
                        | B::ArithmeticLessThanOrEqualTo
                        | B::ArithmeticGreaterThan
                        | B::ArithmeticGreaterThanOrEqualTo
                ) {
                    for side in [&left.value, &right.value] {
                        let construct =
                            || format!("[[ {} {predicate} {} ]]", left.value, right.value);
                        self.arithmetic(side, construct, &predicate.to_string(), ctx);
                    }
                }
                self.word(&left.value, ctx)?;
                self.word(&right.value, ctx).map(drop)
            }
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, ctx: Ctx) -> Result<(), Unparsable> {
        let mut words = Vec::new();
        let mut layout = Vec::new();
        let mut here = None;
        let prefix = simple.prefix.iter().flat_map(|p| p.0.iter());
        let suffix = simple.suffix.iter().flat_map(|s| s.0.iter());
        let mut items: Vec<Item<'_>> = prefix.map(Item::Part).collect();
        if let Some(name) = &simple.word_or_name {
            items.push(Item::Name(name));
        }
        items.extend(suffix.map(Item::Part));
        for item in items {
            use ast::CommandPrefixOrSuffixItem as P;
            match item {
                Item::Name(word) | Item::Part(P::Word(word)) => {
                    layout.push(Slot::Word(words.len()));
                    words.push(self.word(&word.value, ctx)?);
                }
                Item::Part(P::IoRedirect(redirect)) => {
                    layout.push(Slot::Hole);
                    self.redirect(redirect, ctx, &mut here)?;
                }
                Item::Part(P::AssignmentWord(assignment, word)) => {
                    if words.is_empty() {
                        self.assignment(assignment, &word.value, ctx)?;
                        // Allow patterns see it as Cline does (`FOO=1 npm test` is not `npm *`).
                        self.quiet += 1;
                        let text = self.word(&word.value, ctx);
                        self.quiet -= 1;
                        layout.push(Slot::Assignment(text?.text().to_string()));
                    } else {
                        // After the command name it is an argument (`export A=$(…)`).
                        layout.push(Slot::Word(words.len()));
                        words.push(self.word(&word.value, ctx)?);
                    }
                }
                Item::Part(P::ProcessSubstitution(_, subshell)) => {
                    self.analysis.redirects = true;
                    self.compound_list(&subshell.0, ctx.unpiped())?;
                    let mut word = Word::new("<(…)");
                    word.push_unknown();
                    layout.push(Slot::Word(words.len()));
                    words.push(word);
                }
            }
        }
        if words.is_empty() {
            return Ok(());
        }
        self.command(words, ctx, here, layout)
    }

    fn assignment(
        &mut self,
        assignment: &ast::Assignment,
        source: &str,
        ctx: Ctx,
    ) -> Result<(), Unparsable> {
        if let ast::AssignmentName::ArrayElementName(_, index) = &assignment.name {
            self.arithmetic(index, || source.to_string(), "[", ctx);
            self.nested_word(index, ctx)?;
        }
        if let Some(u) = expansions::prompt_assignment(source) {
            self.record_unsafe(ctx, u);
        }
        match &assignment.value {
            ast::AssignmentValue::Scalar(word) => self.word(&word.value, ctx).map(drop),
            ast::AssignmentValue::Array(items) => {
                for (key, value) in items {
                    if let Some(key) = key {
                        self.arithmetic(&key.value, || source.to_string(), "[", ctx);
                        self.word(&key.value, ctx)?;
                    }
                    self.word(&value.value, ctx)?;
                }
                Ok(())
            }
        }
    }

    fn redirect(
        &mut self,
        redirect: &ast::IoRedirect,
        ctx: Ctx,
        here: &mut Option<HereInput>,
    ) -> Result<(), Unparsable> {
        self.analysis.redirects = true;
        match redirect {
            ast::IoRedirect::File(fd, kind, target) => {
                let stdin = fd.is_none_or(|fd| fd == 0)
                    && matches!(
                        kind,
                        ast::IoFileRedirectKind::Read
                            | ast::IoFileRedirectKind::ReadAndWrite
                            | ast::IoFileRedirectKind::DuplicateInput
                    );
                let input = match target {
                    ast::IoFileRedirectTarget::Filename(word) => {
                        if self.word(&word.value, ctx)?.dynamic {
                            HereInput::Dynamic
                        } else {
                            HereInput::File
                        }
                    }
                    ast::IoFileRedirectTarget::Duplicate(word) => {
                        self.word(&word.value, ctx)?;
                        HereInput::Dynamic
                    }
                    ast::IoFileRedirectTarget::Fd(_) => HereInput::Dynamic,
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                        self.compound_list(&subshell.0, ctx.unpiped())?;
                        HereInput::Dynamic
                    }
                };
                if stdin {
                    *here = Some(input);
                }
            }
            ast::IoRedirect::HereDocument(_, doc) => {
                let body = &doc.doc.value;
                if doc.requires_expansion && body.contains(['$', '`']) {
                    // Quotes are plain characters in a here-document, so code inside quotes
                    // runs: it is checked in full.
                    let ctx = Ctx {
                        latent: ctx.strength,
                        ..ctx.unpiped()
                    };
                    self.nested_word(body, ctx)?;
                    *here = Some(HereInput::Dynamic);
                } else {
                    *here = Some(HereInput::Text(body.clone()));
                }
            }
            ast::IoRedirect::HereString(_, word) => {
                let word = self.word(&word.value, ctx)?;
                *here = Some(if word.dynamic {
                    HereInput::Dynamic
                } else {
                    HereInput::Text(word.text().to_string())
                });
            }
            ast::IoRedirect::OutputAndError(word, _) => {
                self.word(&word.value, ctx)?;
            }
        }
        Ok(())
    }

    /// Records a command and looks behind it: wrappers, shells, `eval`.
    fn command(
        &mut self,
        words: Vec<Word>,
        ctx: Ctx,
        here: Option<HereInput>,
        layout: Vec<Slot>,
    ) -> Result<(), Unparsable> {
        let risky = risky::find(&words);
        for code in risky.iter().filter_map(|r| r.code.as_deref()) {
            // Code an option runs (a git alias): deny rules see it.
            self.program(code, ctx.latent())?;
        }
        let mut found = Found::new(words.clone(), ctx.strength);
        found.layout = layout;
        found.risky = risky;
        self.analysis.commands.push(found);
        let Some(name) = words.first() else {
            return Ok(());
        };
        if name.dynamic {
            return Ok(());
        }
        let base = name.text().rsplit('/').next().unwrap_or_default();
        let mut named = words.clone();
        named[0] = Word::new(base);
        named[0].push_literal(base);
        if let Some(u) = expansions::builtin(&named) {
            self.record_unsafe(ctx, u);
        }
        if matches!(base, "env" | "sudo") {
            self.environment(&words[1..], ctx)?;
        }
        match wrappers::inner(base, &words[1..]) {
            Inner::Nothing => Ok(()),
            Inner::Command {
                words: inner,
                appends,
            } => {
                let mut inner = inner.to_vec();
                if appends {
                    inner.push(Word::appended());
                }
                self.command(inner, ctx, here, Vec::new())
            }
            Inner::Commands(list) => list
                .into_iter()
                .try_for_each(|inner| self.command(inner, ctx.unpiped(), None, Vec::new())),
            Inner::Code(Some(code)) => self.program(&code, ctx),
            Inner::LatentCode(code) => self.program(&code, ctx.latent()),
            Inner::Code(None) | Inner::Opaque => {
                self.opaque(words, ctx);
                Ok(())
            }
            Inner::Stdin { posix } => match here {
                Some(HereInput::Text(code)) if posix => self.program(&code, ctx),
                // A script file: what it contains is not known; it is checked as a command.
                Some(HereInput::File) => Ok(()),
                Some(_) => {
                    self.opaque(words, ctx);
                    Ok(())
                }
                None if ctx.piped => {
                    self.opaque(words, ctx);
                    Ok(())
                }
                None => Ok(()),
            },
        }
    }

    fn opaque(&mut self, words: Vec<Word>, ctx: Ctx) {
        let mut found = Found::new(words, ctx.strength);
        found.opaque = true;
        self.analysis.commands.push(found);
    }

    /// The assignments `env` and `sudo` make before the command: prompt variables, and
    /// functions exported to a child bash (`BASH_FUNC_ls%%=() { …; }`), whose bodies run. Every
    /// argument is looked at (option values are not told apart from assignments here; an
    /// argument of the command that looks like one is refused or checked too, which is safe).
    fn environment(&mut self, args: &[Word], ctx: Ctx) -> Result<(), Unparsable> {
        for arg in args {
            let text = arg.text();
            if arg.literal.is_none() || !text.contains('=') || text.starts_with('-') {
                continue;
            }
            if let Some(u) = expansions::prompt_assignment(&arg.source) {
                self.record_unsafe(ctx, u);
            }
            if let Some(rest) = text.strip_prefix("BASH_FUNC_") {
                let Some((name, body)) = rest.split_once('=') else {
                    continue;
                };
                if arg.dynamic {
                    self.record_unsafe(ctx, Unsafe::new(&arg.source, "BASH_FUNC_"));
                    continue;
                }
                let name = name.trim_end_matches('%');
                if body.starts_with("()") {
                    // bash defines the function from the value: its body is checked as the code
                    // it is (a name that is not a valid function name does not parse: refused).
                    self.program(&format!("{name} {body}"), ctx)?;
                }
            }
        }
        Ok(())
    }

    /// Records a construct whose effect cannot be computed, in code that runs.
    fn record_unsafe(&mut self, ctx: Ctx, construct: Unsafe) {
        if self.quiet == 0 && ctx.strength == Strength::Full {
            self.analysis.unsafe_constructs.push(construct);
        }
    }

    /// An arithmetic context: refused unless only numbers and operators.
    fn arithmetic(
        &mut self,
        expr: &str,
        construct: impl FnOnce() -> String,
        operator: &str,
        ctx: Ctx,
    ) {
        if !numeric_only(expr) {
            self.record_unsafe(ctx, Unsafe::new(construct(), operator));
        }
    }

    /// Classifies a word and walks the code inside it.
    fn word(&mut self, raw: &str, ctx: Ctx) -> Result<Word, Unparsable> {
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
    fn nested_word(&mut self, text: &str, ctx: Ctx) -> Result<(), Unparsable> {
        self.word(text, ctx).map(drop)
    }

    /// Code inside a quoted string does not run as such, but bash evaluates it in some places
    /// (array subscripts in arithmetic, `PS4`): deny rules still see it.
    fn latent(&mut self, text: &str, ctx: Ctx) -> Result<(), Unparsable> {
        if text.contains("$(") || text.contains("${") || text.contains('`') {
            self.nested_word(text, ctx.latent())?;
        }
        Ok(())
    }

    fn pieces(
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
    fn old_arithmetic(&mut self, raw: &str, start: usize, ctx: Ctx) {
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

enum Item<'a> {
    Name(&'a ast::Word),
    Part(&'a ast::CommandPrefixOrSuffixItem),
}
