//! Permission patterns: a whole-string match where `*` is any run of characters (slashes and
//! newlines included), `?` is one character and everything else is literal.
//!
//! Written by hand rather than with a glob crate: Cline's patterns have no character classes,
//! no escapes and no path semantics, which no glob crate offers as such, and the stricter check
//! needs [`Pattern::may_match`] (does *any* expansion of a command template match?), an
//! intersection test of two wildcard languages that no crate provides.

/// One element of a pattern, or of a command template whose expansions are not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Glob {
    /// This character.
    Char(char),
    /// Any one character.
    One,
    /// Any run of characters, including none.
    Any,
}

/// One element of the text an allow pattern is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marked {
    /// A character any pattern element may match.
    Char(char),
    /// A character only the same character of the pattern matches (not `*` or `?`).
    Fixed(char),
    /// A part (a redirect operand) only a `*` of the pattern may cover.
    Hole,
}

/// A compiled allow or deny pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    parts: Vec<Glob>,
}

impl Pattern {
    /// Compiles a pattern.
    pub fn new(text: &str) -> Self {
        let parts = text
            .chars()
            .map(|c| match c {
                '*' => Glob::Any,
                '?' => Glob::One,
                c => Glob::Char(c),
            })
            .collect();
        Self {
            text: text.to_string(),
            parts,
        }
    }

    /// The pattern as configured.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the whole of `command` matches.
    pub fn matches(&self, command: &str) -> bool {
        let literal: Vec<Glob> = command.chars().map(Glob::Char).collect();
        self.may_match(&literal)
    }

    /// Whether the whole of `text` matches, where some characters must be matched by the same
    /// character in the pattern (an option that runs code: `git *` does not name `-c`) and some
    /// parts only by a `*` (a redirect's operand, which is not an argument of the command).
    pub fn matches_marked(&self, text: &[Marked]) -> bool {
        let (n, m) = (self.parts.len(), text.len());
        // reach[j]: the pattern from part i on matches text[j..]; rows from the end backwards.
        let mut next = vec![false; m + 1];
        let mut row = vec![false; m + 1];
        for i in (0..=n).rev() {
            for j in (0..=m).rev() {
                row[j] = match self.parts.get(i) {
                    None => j == m,
                    // A star covers anything but a character that must be named.
                    Some(Glob::Any) => {
                        next[j] || (j < m && !matches!(text[j], Marked::Fixed(_)) && row[j + 1])
                    }
                    Some(part) => {
                        j < m
                            && match (part, text[j]) {
                                (Glob::Char(p), Marked::Char(c) | Marked::Fixed(c)) => *p == c,
                                (Glob::One, Marked::Char(_)) => true,
                                _ => false,
                            }
                            && next[j + 1]
                    }
                };
            }
            std::mem::swap(&mut next, &mut row);
        }
        next[0]
    }

    /// Whether some string described by `template` matches (a template's `Any` stands for a
    /// part of the command only known when it runs).
    pub fn may_match(&self, template: &[Glob]) -> bool {
        intersects(&self.parts, template)
    }
}

/// Whether two wildcard sequences describe at least one common string.
///
/// `reach[j]` for row `i` tells whether `a[i..]` and `b[j..]` have a common string; rows are
/// computed from the ends backwards, keeping only two.
fn intersects(a: &[Glob], b: &[Glob]) -> bool {
    let (n, m) = (a.len(), b.len());
    let mut next = vec![false; m + 1]; // row i + 1
    let mut row = vec![false; m + 1]; // row i
    for i in (0..=n).rev() {
        for j in (0..=m).rev() {
            row[j] = if i == n && j == m {
                true
            } else if i < n && a[i] == Glob::Any {
                // The star matches nothing more, or takes what b[j] stands for and goes on.
                next[j] || (j < m && row[j + 1])
            } else if j < m && b[j] == Glob::Any {
                row[j + 1] || (i < n && next[j])
            } else if i < n && j < m {
                compatible(a[i], b[j]) && next[j + 1]
            } else {
                false
            };
        }
        std::mem::swap(&mut next, &mut row);
    }
    next[0]
}

fn compatible(a: Glob, b: Glob) -> bool {
    match (a, b) {
        (Glob::Char(x), Glob::Char(y)) => x == y,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(text: &str) -> Vec<Glob> {
        // `%` marks an unknown part in these tests.
        text.chars()
            .map(|c| if c == '%' { Glob::Any } else { Glob::Char(c) })
            .collect()
    }

    #[test]
    fn whole_string_matches() {
        assert!(Pattern::new("npm *").matches("npm test"));
        assert!(!Pattern::new("npm *").matches("npm"));
        assert!(Pattern::new("git status").matches("git status"));
        assert!(!Pattern::new("git status").matches("git status --short"));
        assert!(Pattern::new("ls ?").matches("ls a"));
        assert!(!Pattern::new("ls ?").matches("ls ab"));
        assert!(!Pattern::new("echo a.b").matches("echo axb"));
        assert!(Pattern::new("g++ *").matches("g++ main.cpp"));
        assert!(Pattern::new("gh *").matches("gh pr comment 1 --body l1\nl2"));
        assert!(Pattern::new("*").matches(""));
        assert!(Pattern::new("a*b*c").matches("a/x/b//c"));
        assert!(!Pattern::new("a*b*c").matches("a/x/b//"));
    }

    #[test]
    fn templates_match_when_some_expansion_does() {
        let deny = Pattern::new("rm *");
        assert!(deny.may_match(&template("rm %")));
        assert!(deny.may_match(&template("%")));
        assert!(deny.may_match(&template("r% x")));
        assert!(!deny.may_match(&template("ls %")));
        assert!(!deny.may_match(&template("rm")));
        assert!(Pattern::new("rm -rf *").may_match(&template("rm % /")));
        assert!(Pattern::new("git push*").may_match(&template("git %")));
        assert!(!Pattern::new("git push*").may_match(&template("git status %")));
        assert!(Pattern::new("a?c").may_match(&[Glob::Char('a'), Glob::One, Glob::Char('c')]));
    }

    #[test]
    fn marked_text_needs_literal_options_and_stars_for_holes() {
        let marked = |text: &str| -> Vec<Marked> {
            // `_` is a hole, upper case must be named literally (and is matched lower case).
            text.chars()
                .map(|c| match c {
                    '_' => Marked::Hole,
                    c if c.is_ascii_uppercase() => Marked::Fixed(c.to_ascii_lowercase()),
                    c => Marked::Char(c),
                })
                .collect()
        };
        assert!(Pattern::new("git *").matches_marked(&marked("git log")));
        assert!(!Pattern::new("git *").matches_marked(&marked("git -C x")));
        assert!(Pattern::new("git -c *").matches_marked(&marked("git -C x")));
        assert!(!Pattern::new("git -? *").matches_marked(&marked("git -C x")));
        assert!(Pattern::new("cat *").matches_marked(&marked("cat _")));
        assert!(!Pattern::new("cat").matches_marked(&marked("cat _")));
        assert!(!Pattern::new("npm test *").matches_marked(&marked("npm _ publish")));
        assert!(!Pattern::new("ls ?").matches_marked(&marked("ls _")));
    }
}
