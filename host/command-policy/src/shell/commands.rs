//! Commands: redirections, the commands behind wrappers, shells and `eval`, the environment a
//! command is given, and the constructs recorded as unsafe.

use brush_parser::ast;

use super::{Analyzer, Ctx, HereInput, Unparsable};
use crate::expansions::{self, numeric_only, Unsafe};
use crate::found::{Found, Slot, Strength, Word};
use crate::risky;
use crate::wrappers::{self, Inner};

impl Analyzer {
    pub(super) fn redirect(
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
    pub(super) fn command(
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

    pub(super) fn opaque(&mut self, words: Vec<Word>, ctx: Ctx) {
        let mut found = Found::new(words, ctx.strength);
        found.opaque = true;
        self.analysis.commands.push(found);
    }

    /// The assignments `env` and `sudo` make before the command: prompt variables, and
    /// functions exported to a child bash (`BASH_FUNC_ls%%=() { …; }`), whose bodies run. Every
    /// argument is looked at (option values are not told apart from assignments here; an
    /// argument of the command that looks like one is refused or checked too, which is safe).
    pub(super) fn environment(&mut self, args: &[Word], ctx: Ctx) -> Result<(), Unparsable> {
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
    pub(super) fn record_unsafe(&mut self, ctx: Ctx, construct: Unsafe) {
        if self.quiet == 0 && ctx.strength == Strength::Full {
            self.analysis.unsafe_constructs.push(construct);
        }
    }

    /// An arithmetic context: refused unless only numbers and operators.
    pub(super) fn arithmetic(
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
}
