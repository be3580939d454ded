//! Cline's own check, reproduced step by step so that its verdicts, reason codes and messages
//! stay the same: the scan for line separators and backticks outside quotes, the tokenizer of the
//! `shell-quote` npm package (version 1.8, which Cline bundles), the split into segments and
//! subshells, and the per-segment allow/deny rules.
//!
//! The tokenizer is an emulation, not a shell parser: it is what decides Cline's reason codes.
//! What actually runs is analysed separately by [`super::shell`].

use std::sync::LazyLock;

use regex::Regex;

use crate::rules::{Reason, Rules};
use crate::verdict::{CheckedPart, Denial};

/// The first line separator or backtick outside the quotes that make it harmless, named as
/// Cline names it (`\n` and `\r` as two-character escapes, other separators as `U+XXXX`).
pub fn dangerous_char(command: &str) -> Option<&'static str> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in command.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '"' if !single => double = !double,
            '\'' if !double => single = !single,
            _ => {
                if !single && !double {
                    let separator = match c {
                        '\n' => Some("\\n"),
                        '\r' => Some("\\r"),
                        '\u{2028}' => Some("U+2028"),
                        '\u{2029}' => Some("U+2029"),
                        '\u{0085}' => Some("U+0085"),
                        _ => None,
                    };
                    if separator.is_some() {
                        return separator;
                    }
                }
                if c == '`' && !single {
                    return Some("`");
                }
            }
        }
    }
    None
}

/// One token of `shell-quote`'s `parse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// An operator (or a chunk that contained an unquoted operator character).
    Op(String),
    /// A word, quotes removed and variables expanded to nothing.
    Word(String),
}

/// `shell-quote` throws `Bad substitution` on `${}` and on an unclosed `${`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSubstitution;

/// JavaScript's `\s`, which differs from Rust's white space (no U+0085, but U+FEFF).
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \u{A0}\u{1680}\u{2000}-\u{200A}\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}\u{FEFF}";
const CONTROL: &str = r"(?:\|\||&&|;;|\|&|<\(|<<<|>>|>&|<&|[&;()|<>])";

/// `shell-quote`'s chunker: an operator, or a run of bare words and quoted strings. The regex
/// crate's leftmost-first semantics give the same matches as JavaScript's backtracking engine.
static CHUNKER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let bareword = format!(r#"(?:\\['"|&;()<> \t]|[^{JS_SPACE}'"|&;()<> \t])+"#);
    let double = r#""(?:\\"|[^"])*?""#;
    let single = r"'(?:\\'|[^'])*?'";
    Regex::new(&format!("{CONTROL}|(?:{bareword}|{double}|{single})+")).ok()
});
static CONTROL_ONLY: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^{CONTROL}$")).ok());

fn is_control_char(c: char) -> bool {
    matches!(c, '&' | ';' | '(' | ')' | '|' | '<' | '>')
}

/// `shell-quote`'s `parse(command)` with no environment: every variable expands to nothing
/// (a `$` not followed by a name stays `$`), and a `#` outside quotes ends the command.
pub fn tokenize(command: &str) -> Result<Vec<Token>, BadSubstitution> {
    let (Some(chunker), Some(control)) = (CHUNKER.as_ref(), CONTROL_ONLY.as_ref()) else {
        return Err(BadSubstitution);
    };
    let mut tokens = Vec::new();
    for chunk in chunker.find_iter(command) {
        let s = chunk.as_str();
        if control.is_match(s) {
            tokens.push(Token::Op(s.to_string()));
            continue;
        }
        match scan_chunk(s)? {
            Chunk::Word(word) => tokens.push(Token::Word(word)),
            Chunk::Op => tokens.push(Token::Op(s.to_string())),
            Chunk::Comment(before) => {
                if let Some(word) = before {
                    tokens.push(Token::Word(word));
                }
                break;
            }
        }
    }
    Ok(tokens)
}

enum Chunk {
    Word(String),
    /// An unquoted operator character inside the chunk makes the whole chunk an operator.
    Op,
    /// A `#` started a comment: the text before it, if any, and nothing after.
    Comment(Option<String>),
}

/// The hand-written scanner of `shell-quote`, including its quirks: a backslash inside double
/// quotes is kept unless it escapes `"`, `\` or `$`; `$?`-style variables skip the character
/// after them.
fn scan_chunk(chunk: &str) -> Result<Chunk, BadSubstitution> {
    let s: Vec<char> = chunk.chars().collect();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut out = String::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if escaped {
            out.push(c);
            escaped = false;
        } else if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if q == '\'' {
                out.push(c);
            } else if c == '\\' {
                i += 1;
                match s.get(i) {
                    Some(&next @ ('"' | '\\' | '$')) => out.push(next),
                    Some(&next) => {
                        out.push('\\');
                        out.push(next);
                    }
                    None => out.push('\\'),
                }
            } else if c == '$' {
                out.push_str(&expand_variable(&s, &mut i)?);
            } else {
                out.push(c);
            }
        } else if c == '"' || c == '\'' {
            quote = Some(c);
        } else if is_control_char(c) {
            return Ok(Chunk::Op);
        } else if c == '#' {
            return Ok(Chunk::Comment((!out.is_empty()).then_some(out)));
        } else if c == '\\' {
            escaped = true;
        } else if c == '$' {
            out.push_str(&expand_variable(&s, &mut i)?);
        } else {
            out.push(c);
        }
        i += 1;
    }
    Ok(Chunk::Word(out))
}

/// `shell-quote`'s `parseEnvVar` with an empty environment; `i` is at the `$` and is left where
/// the JavaScript leaves it (the caller then steps one further).
fn expand_variable(s: &[char], i: &mut usize) -> Result<String, BadSubstitution> {
    let start = *i + 1;
    let name_len = match s.get(start) {
        Some('{') => {
            let open = start + 1;
            if s.get(open) == Some(&'}') {
                return Err(BadSubstitution);
            }
            let close = s[open.min(s.len())..]
                .iter()
                .position(|&c| c == '}')
                .ok_or(BadSubstitution)?;
            *i = open + close;
            close
        }
        Some(c) if "*@#?$!_-".contains(*c) => {
            *i = start + 1;
            1
        }
        _ => {
            let rest = &s[start.min(s.len())..];
            match rest
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
            {
                None => {
                    *i = s.len();
                    rest.len()
                }
                Some(k) => {
                    // JavaScript: i += k - 1, after i += 1.
                    *i = start + k - 1;
                    k
                }
            }
        }
    };
    // Unknown variables expand to nothing; an empty name is a literal `$`.
    Ok(if name_len == 0 {
        "$".to_string()
    } else {
        String::new()
    })
}

/// Cline's `ParsedCommand`: segments between separators, the contents of `( … )`, and whether
/// a redirect operator appeared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Commands between separators, their words joined with single spaces.
    pub segments: Vec<String>,
    /// The contents of each `( … )`, parsed the same way.
    pub subshells: Vec<Parsed>,
    /// Whether `>`, `>>`, `<`, `>&`, `<&`, `|&`, `<(` or `>(` appeared.
    pub has_redirects: bool,
}

/// Splits tokens as Cline does. Operators other than the separators and redirects (`&`, `;;`,
/// a stray `)`) are dropped, so the words around them merge into one segment.
pub fn segments(tokens: &[Token]) -> Parsed {
    let mut parsed = Parsed::default();
    let mut current: Vec<&str> = Vec::new();
    let flush = |current: &mut Vec<&str>, parsed: &mut Parsed| {
        if !current.is_empty() {
            parsed.segments.push(current.join(" "));
            current.clear();
        }
    };
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Op(op) if op == "(" => {
                flush(&mut current, &mut parsed);
                let mut balance = 1;
                let mut j = i + 1;
                while j < tokens.len() {
                    match &tokens[j] {
                        Token::Op(op) if op == "(" => balance += 1,
                        Token::Op(op) if op == ")" => balance -= 1,
                        _ => {}
                    }
                    if balance == 0 {
                        break;
                    }
                    j += 1;
                }
                // An unclosed subshell takes every remaining token.
                parsed.subshells.push(segments(&tokens[i + 1..j]));
                i = j + 1;
                continue;
            }
            Token::Op(op) if matches!(op.as_str(), "&&" | "||" | "|" | ";") => {
                flush(&mut current, &mut parsed);
            }
            Token::Op(op)
                if matches!(
                    op.as_str(),
                    ">" | ">>" | "<" | ">&" | "<&" | "|&" | "<(" | ">("
                ) =>
            {
                parsed.has_redirects = true;
            }
            Token::Op(_) => {}
            Token::Word(word) => current.push(word),
        }
        i += 1;
    }
    flush(&mut current, &mut parsed);
    parsed
}

/// Cline's `validateParsedCommand`: redirects first, then every segment (deny before allow),
/// then the subshells. In a command of several parts a failure names its segment.
pub fn validate(parsed: &Parsed, rules: &Rules) -> Option<Denial> {
    if parsed.has_redirects && !rules.allow_redirects {
        return Some(Denial::new(Reason::RedirectDetected));
    }
    let several = parsed.segments.len() > 1 || !parsed.subshells.is_empty();
    for segment in &parsed.segments {
        if let Some(mut denial) = check_segment(segment, rules) {
            if several {
                denial.reason = match denial.reason {
                    Reason::Denied => Reason::SegmentDenied,
                    Reason::NoMatchDenyDefault => Reason::SegmentNoMatch,
                    other => other,
                };
                denial.failed_segment = Some(segment.clone());
            }
            return Some(denial);
        }
    }
    parsed
        .subshells
        .iter()
        .find_map(|subshell| validate(subshell, rules))
}

/// Every segment (subshells' included) with what Cline's rules say about it, for explanations.
pub fn explain(parsed: &Parsed, rules: &Rules) -> Vec<CheckedPart> {
    let mut out = Vec::new();
    for segment in &parsed.segments {
        let denial = check_segment(segment, rules);
        out.push(CheckedPart {
            command: segment.clone(),
            checked_with: "allow_and_deny",
            allowed_by: match denial {
                Some(_) => None,
                None => rules
                    .allow
                    .iter()
                    .find(|p| p.matches(segment))
                    .map(|p| p.as_str().to_string()),
            },
            refused: denial.as_ref().map(|d| d.reason),
            denied_by: denial.and_then(|d| d.matched_pattern),
            risky_options: Vec::new(),
        });
    }
    for subshell in &parsed.subshells {
        out.extend(explain(subshell, rules));
    }
    out
}

/// Cline's `validateSingleCommand`.
fn check_segment(segment: &str, rules: &Rules) -> Option<Denial> {
    if let Some(pattern) = rules.deny.iter().find(|p| p.matches(segment)) {
        let mut denial = Denial::new(Reason::Denied);
        denial.matched_pattern = Some(pattern.as_str().to_string());
        return Some(denial);
    }
    if !rules.allow.is_empty() && !rules.allow.iter().any(|p| p.matches(segment)) {
        return Some(Denial::new(Reason::NoMatchDenyDefault));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<String> {
        tokenize(command)
            .unwrap_or_default()
            .into_iter()
            .map(|t| match t {
                Token::Op(op) => format!("<{op}>"),
                Token::Word(w) => w,
            })
            .collect()
    }

    #[test]
    fn tokenizes_like_shell_quote() {
        assert_eq!(words("git  status"), ["git", "status"]);
        assert_eq!(words("echo $(ls)"), ["echo", "$", "<(>", "ls", "<)>"]);
        assert_eq!(words("echo $HOME/x"), ["echo", "/x"]);
        assert_eq!(words("echo 'abc"), ["echo", "abc"]);
        assert_eq!(words("\"rm\" -rf x"), ["rm", "-rf", "x"]);
        assert_eq!(words("ls # rm -rf /"), ["ls"]);
        assert_eq!(words("ls a#b; rm"), ["ls", "a"]);
        assert_eq!(words("npm test |& cat"), ["npm", "test", "<|&>", "cat"]);
        assert_eq!(words("diff <(ls)"), ["diff", "<<(>", "ls", "<)>"]);
        assert_eq!(words(r#"echo "a\b\"c""#), ["echo", "a\\b\"c"]);
        assert_eq!(words("echo $?abc"), ["echo", "bc"]);
        assert_eq!(words("echo \\\\;"), ["echo", "<\\\\;>"]);
        assert_eq!(tokenize("echo ${"), Err(BadSubstitution));
        assert_eq!(tokenize("echo ${}"), Err(BadSubstitution));
    }

    #[test]
    fn finds_separators_outside_quotes() {
        assert_eq!(dangerous_char("echo `id`"), Some("`"));
        assert_eq!(dangerous_char("echo \"a `id`\""), Some("`"));
        assert_eq!(dangerous_char("echo 'a `id`'"), None);
        assert_eq!(dangerous_char("a\nb"), Some("\\n"));
        assert_eq!(dangerous_char("a \"x\ny\""), None);
        assert_eq!(dangerous_char("a\\\nb"), None);
        assert_eq!(dangerous_char("a\u{2029}b"), Some("U+2029"));
    }

    #[test]
    fn splits_segments_and_subshells() {
        let parsed =
            segments(&tokenize("cd /tmp && (ls; echo $(whoami)) | tee x").unwrap_or_default());
        assert_eq!(parsed.segments, ["cd /tmp", "tee x"]);
        assert_eq!(parsed.subshells[0].segments, ["ls", "echo $"]);
        assert_eq!(parsed.subshells[0].subshells[0].segments, ["whoami"]);
        assert!(!parsed.has_redirects);
        let merged = segments(&tokenize("npm start & ls ;; x").unwrap_or_default());
        assert_eq!(merged.segments, ["npm start ls x"]);
    }
}
