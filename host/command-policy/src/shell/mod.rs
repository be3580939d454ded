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
use brush_parser::{Parser, ParserOptions, SourceInfo};

use super::expansions::{self, Unsafe};
pub use super::found::{Found, Slot, Strength, Word};

mod commands;
mod words;

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

/// A run of digits right before `<` or `>` (a redirect's file descriptor, `2>`) too large for
/// the parser, which unwraps it as a `u32` and would panic. Bash refuses such a number too
/// ("file descriptor out of range"). Found in the text, quotes or not: a refusal then only
/// costs a command that could not have run as written.
fn oversized_redirect_number(source: &str) -> Option<&str> {
    let bytes = source.as_bytes();
    let mut start = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b.is_ascii_digit() {
            start.get_or_insert(i);
            continue;
        }
        if let Some(from) = start.take() {
            let digits = &source[from..i];
            if matches!(b, b'<' | b'>') && digits.parse::<u32>().is_err() {
                return Some(digits);
            }
        }
    }
    None
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
        if let Some(number) = oversized_redirect_number(source) {
            return self.fail(
                ctx,
                format!("the redirect's file descriptor {number} is out of range"),
            );
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
}

enum Item<'a> {
    Name(&'a ast::Word),
    Part(&'a ast::CommandPrefixOrSuffixItem),
}
