//! What the analysis finds: the words of a command, with what is known about them before it
//! runs, and the commands themselves.

use std::ops::Range;

use super::pattern::{Glob, Marked};

/// How strictly a found command is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strength {
    /// It runs: deny and allow rules apply.
    Full,
    /// It might run (code inside a quoted string, which bash can still evaluate, e.g. in an
    /// array subscript): only deny rules apply.
    DenyOnly,
}

/// One word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text as Cline matches it (quotes removed, expansions empty); `None` for arguments a
    /// wrapper such as `xargs` adds at run time.
    pub literal: Option<String>,
    /// What the word can become: its characters, with `Any`/`One` where expansions or globs are.
    pub template: Vec<Glob>,
    /// Whether anything in it is only known at run time.
    pub dynamic: bool,
    /// The word as written.
    pub source: String,
    /// Nothing at all is known about the word's run-time form (brace expansion).
    unknown: bool,
    /// An unquoted `{` was seen (a brace expansion may span quoted parts: `{rm,'-rf'}`).
    brace_open: bool,
}

impl Word {
    pub(super) fn new(source: &str) -> Self {
        Self {
            literal: Some(String::new()),
            template: Vec::new(),
            dynamic: false,
            source: source.to_string(),
            unknown: false,
            brace_open: false,
        }
    }

    /// A literal word.
    #[cfg(test)]
    pub fn literal(text: &str) -> Self {
        let mut word = Self::new(text);
        word.push_literal(text);
        word
    }

    /// Arguments appended when the command runs (`xargs`, `find -exec … +`).
    pub fn appended() -> Self {
        Self {
            literal: None,
            template: vec![Glob::Any],
            dynamic: true,
            source: String::new(),
            unknown: true,
            brace_open: false,
        }
    }

    /// The literal text, or `""` for appended arguments.
    pub fn text(&self) -> &str {
        self.literal.as_deref().unwrap_or("")
    }

    pub(super) fn push_literal(&mut self, text: &str) {
        if let Some(literal) = &mut self.literal {
            literal.push_str(text);
        }
        if !self.unknown {
            self.template.extend(text.chars().map(Glob::Char));
        }
    }

    pub(super) fn push_unknown(&mut self) {
        self.dynamic = true;
        if !self.unknown && self.template.last() != Some(&Glob::Any) {
            self.template.push(Glob::Any);
        }
    }

    /// Unquoted text: glob characters and brace expansions make the word dynamic.
    pub(super) fn push_unquoted(&mut self, text: &str) {
        self.brace_open |= text.contains('{');
        if (self.brace_open && text.contains('}')) || text.contains('(') {
            // Brace expansion (`{rm,-rf}`) and extended globs can turn one word into any
            // others: nothing is known about the word any more.
            if let Some(literal) = &mut self.literal {
                literal.push_str(text);
            }
            self.dynamic = true;
            self.unknown = true;
            self.template = vec![Glob::Any];
            return;
        }
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '*' => {
                    self.push_text(c);
                    self.push_unknown();
                }
                '?' => {
                    self.push_text(c);
                    self.dynamic = true;
                    if !self.unknown {
                        self.template.push(Glob::One);
                    }
                }
                '[' if chars[i + 1..].contains(&']') => {
                    while i < chars.len() && chars[i] != ']' {
                        self.push_text(chars[i]);
                        i += 1;
                    }
                    self.push_text(']');
                    self.push_unknown();
                }
                c => self.push_literal(c.encode_utf8(&mut [0; 4])),
            }
            i += 1;
        }
    }

    /// Adds to the literal text only.
    fn push_text(&mut self, c: char) {
        if let Some(literal) = &mut self.literal {
            literal.push(c);
        }
    }
}

/// Where a part of a simple command stands in the text allow patterns are matched against,
/// which joins, as Cline does, the assignments, words and redirect operands in their order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// `words[i]`.
    Word(usize),
    /// A prefix assignment (`FOO=1 npm test`), as Cline sees it.
    Assignment(String),
    /// A redirect's operand: only a `*` of a pattern may cover it, so that `cat < in.txt`
    /// matches `cat *` as in Cline, but `npm >test publish` does not match `npm test *`.
    Hole,
}

/// A command the line runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its words, the command name first (assignments and redirections left out).
    pub words: Vec<Word>,
    /// How strictly it is checked.
    pub strength: Strength,
    /// Code whose text is only known at run time (`bash -c "$X"`): it cannot be checked.
    pub opaque: bool,
    /// The order of its parts for allow patterns; empty for the words alone (a command behind
    /// a wrapper).
    pub layout: Vec<Slot>,
    /// Its options that run code or write files.
    pub risky: Vec<Risky>,
}

impl Found {
    /// A command of these words.
    pub fn new(words: Vec<Word>, strength: Strength) -> Self {
        Self {
            words,
            strength,
            opaque: false,
            layout: Vec::new(),
            risky: Vec::new(),
        }
    }

    fn slots(&self) -> Vec<Slot> {
        if self.layout.is_empty() {
            (0..self.words.len()).map(Slot::Word).collect()
        } else {
            self.layout.clone()
        }
    }

    /// The command for messages: its prefix assignments, then literal words as Cline would
    /// show them, dynamic ones as written.
    pub fn display(&self) -> String {
        let mut parts = Vec::new();
        for slot in self.slots() {
            match slot {
                Slot::Assignment(text) => parts.push(text),
                Slot::Word(i) => {
                    let w = &self.words[i];
                    if w.literal.is_some() {
                        parts.push(if w.dynamic {
                            w.source.clone()
                        } else {
                            w.text().to_string()
                        });
                    }
                }
                Slot::Hole => {}
            }
        }
        parts.join(" ")
    }

    /// A risky option as a command of its own, for messages.
    pub fn display_risky(&self, risky: &Risky) -> String {
        risky
            .words
            .iter()
            .filter_map(|&i| self.words.get(i))
            .filter(|w| w.literal.is_some())
            .map(|w| {
                if w.dynamic {
                    w.source.as_str()
                } else {
                    w.text()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The text allow patterns are matched against (expansions empty, as in Cline): assignments
    /// and words, with redirect operands and appended arguments as holes; the characters of the risky options in
    /// `fixed` must be named by the pattern.
    pub fn allow_text(&self, fixed: &[&Risky]) -> Vec<Marked> {
        let mut out = Vec::new();
        for slot in self.slots() {
            let start = out.len();
            match slot {
                Slot::Assignment(text) => out.extend(text.chars().map(Marked::Char)),
                Slot::Hole => out.push(Marked::Hole),
                Slot::Word(i) => {
                    let Some(literal) = self.words[i].literal.as_deref() else {
                        // Arguments a wrapper adds (`xargs`): like a redirect operand, only a
                        // `*` covers them.
                        out.insert(start, Marked::Char(' '));
                        out.push(Marked::Hole);
                        continue;
                    };
                    for (k, c) in literal.chars().enumerate() {
                        let is_fixed = fixed.iter().any(|r| {
                            r.fixed
                                .iter()
                                .any(|(w, range)| *w == i && range.contains(&k))
                        });
                        out.push(if is_fixed {
                            Marked::Fixed(c)
                        } else {
                            Marked::Char(c)
                        });
                    }
                }
            }
            if start > 0 {
                out.insert(start, Marked::Char(' '));
            }
        }
        out
    }

    /// Everything the command may be when it runs; with `basename`, the command name without its
    /// directory (`/bin/rm` is `rm`).
    pub fn template(&self, basename: bool) -> Vec<Glob> {
        Self::template_of(self.words.iter(), basename)
    }

    /// The template of a risky option as a command of its own, an attached value split off
    /// (`git -cX` is also `git -c X`).
    pub fn template_risky(&self, risky: &Risky, basename: bool) -> Vec<Glob> {
        let mut words: Vec<Word> = Vec::new();
        for &i in &risky.words {
            let Some(word) = self.words.get(i) else {
                continue;
            };
            match risky.split {
                Some((at_word, at)) if at_word == i && at <= word.template.len() => {
                    let mut option = word.clone();
                    option.template = word.template[..at].to_vec();
                    let mut value = word.clone();
                    value.template = word.template[at..].to_vec();
                    words.extend([option, value]);
                }
                _ => words.push(word.clone()),
            }
        }
        Self::template_of(words.iter(), basename)
    }

    fn template_of<'a>(words: impl Iterator<Item = &'a Word>, basename: bool) -> Vec<Glob> {
        let mut out = Vec::new();
        for (i, word) in words.enumerate() {
            if i > 0 {
                out.push(Glob::Char(' '));
            }
            if i == 0 && basename && !word.dynamic {
                let name = word.text();
                let base = name.rsplit('/').next().unwrap_or(name);
                out.extend(base.chars().map(Glob::Char));
            } else {
                out.extend(word.template.iter().copied());
            }
        }
        out
    }
}

/// One option (or script, or operand) that runs code or writes files, in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risky {
    /// What it is, for messages: `-c`, `--output`, `sed script (w)`, `an argument only known
    /// at run time`.
    pub option: String,
    /// The words of the command that make it up, by index (the command name first).
    pub words: Vec<usize>,
    /// The characters an allow pattern must name literally: a word, and a range of characters
    /// of its literal text. Empty when no pattern can name it (an argument only known at run
    /// time).
    pub fixed: Vec<(usize, Range<usize>)>,
    /// Shell code it runs, when that is known (`git -c alias.x='!CODE'`).
    pub code: Option<String>,
    /// A short option with its value attached (`-cVALUE`): the word and the character where
    /// the value starts. Deny rules see the option and its value as two words (`-c VALUE`).
    pub split: Option<(usize, usize)>,
}

impl Risky {
    /// An option at the words `words`, whose characters `fixed` a pattern must name.
    pub(crate) fn new(
        option: impl Into<String>,
        words: Vec<usize>,
        fixed: (usize, Range<usize>),
    ) -> Self {
        Self {
            option: option.into(),
            words,
            fixed: vec![fixed],
            code: None,
            split: None,
        }
    }

    /// An argument only known at run time where an option could stand.
    pub(crate) fn unknown(name: usize, word: usize) -> Self {
        Self {
            option: "an argument only known at run time".to_string(),
            words: vec![name, word],
            fixed: Vec::new(),
            code: None,
            split: None,
        }
    }

    /// Whether an allow pattern can name it at all.
    pub fn nameable(&self) -> bool {
        !self.fixed.is_empty()
    }
}
