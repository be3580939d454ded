//! Constructs whose effect the check cannot compute, refused whenever permissions are set
//! (`unsafe_expansion`).
//!
//! bash evaluates some text a second time, at run time: prompt expansion (`${x@P}`, `PS4`
//! under `set -x`) runs `$(…)` found in a value, and arithmetic evaluates the *value* of a
//! variable as an expression, array subscripts included, so `y='a[$(rm x)]'; echo $((y))` runs
//! `rm x`. A value can be given code in ways no analysis follows (`\$`, `$'\x24'`, `read`), so the
//! places where values are evaluated are refused instead: parameter expansions that assign code
//! (`${x:=\$(…)}`), transformations (`${x@P}` and the other `@` operators), indirection
//! (`${!name}`), and arithmetic with anything but number literals and operators (`$(( ))`,
//! `$[ ]`, `(( ))`, arithmetic `for`, `let`, array subscripts, substring offsets, the arithmetic
//! tests of `[[ ]]`, integer and nameref declarations, variable names that builtins such as
//! `read` or `printf -v` take, which may have a subscript).

use brush_parser::word::{Parameter, ParameterExpr, ParameterTestType, ParameterTransformOp};

use super::found::Word;

/// A construct the check refuses, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsafe {
    /// The part of the command (`${x@P}`, `$((y))`).
    pub construct: String,
    /// What it is: the operator (`@P`, `:=`, `!`, `$((`, `[`, `-eq`, `declare -i`…).
    pub operator: String,
}

impl Unsafe {
    /// A construct of the command.
    pub fn new(construct: impl Into<String>, operator: impl Into<String>) -> Self {
        Self {
            construct: construct.into(),
            operator: operator.into(),
        }
    }
}

/// Whether arithmetic text holds only number literals (`10`, `0x1f`, `2#101`, `64#@_`),
/// operators, parentheses, white space and the special parameters whose value is always a
/// number (`$#`, `$?`, `$$`, `$!`, `${#name}`). A name anywhere could hold code.
pub fn numeric_only(expr: &str) -> bool {
    let s: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c.is_whitespace() || "+-*/%<>=!&|^~?:,()\"".contains(c) {
            i += 1;
        } else if c.is_ascii_digit() {
            while i < s.len() && (s[i].is_ascii_alphanumeric() || matches!(s[i], '@' | '_' | '#')) {
                i += 1;
            }
        } else if c == '$' {
            match s.get(i + 1) {
                Some('#' | '?' | '$' | '!') => i += 2,
                Some('{') => {
                    // `${#name}`: the length of a value is a number.
                    let rest: String = s[i + 2..].iter().collect();
                    let Some(inner) = rest.strip_prefix('#') else {
                        return false;
                    };
                    let Some(end) = inner.find('}') else {
                        return false;
                    };
                    let name = &inner[..end];
                    if name.is_empty()
                        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        return false;
                    }
                    i += 3 + name.chars().count() + 1;
                }
                _ => return false,
            }
        } else {
            return false;
        }
    }
    true
}

/// Why a parameter expansion is refused (its operator), if it is.
pub fn parameter(expr: &ParameterExpr) -> Option<String> {
    use ParameterExpr as E;
    let (parameter, indirect) = match expr {
        E::Parameter {
            parameter,
            indirect,
        }
        | E::UseDefaultValues {
            parameter,
            indirect,
            ..
        }
        | E::AssignDefaultValues {
            parameter,
            indirect,
            ..
        }
        | E::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            ..
        }
        | E::UseAlternativeValue {
            parameter,
            indirect,
            ..
        }
        | E::ParameterLength {
            parameter,
            indirect,
        }
        | E::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            ..
        }
        | E::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            ..
        }
        | E::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            ..
        }
        | E::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            ..
        }
        | E::Substring {
            parameter,
            indirect,
            ..
        }
        | E::Transform {
            parameter,
            indirect,
            ..
        }
        | E::UppercaseFirstChar {
            parameter,
            indirect,
            ..
        }
        | E::UppercasePattern {
            parameter,
            indirect,
            ..
        }
        | E::LowercaseFirstChar {
            parameter,
            indirect,
            ..
        }
        | E::LowercasePattern {
            parameter,
            indirect,
            ..
        }
        | E::ReplaceSubstring {
            parameter,
            indirect,
            ..
        } => (parameter, *indirect),
        // `${!prefix*}` and `${!array[@]}` list names and keys: nothing is evaluated.
        E::VariableNames { .. } | E::MemberKeys { .. } => return None,
    };
    if indirect {
        return Some("!".to_string());
    }
    if let Parameter::NamedWithIndex { index, .. } = parameter {
        if !numeric_only(index) {
            return Some("[".to_string());
        }
    }
    match expr {
        E::AssignDefaultValues {
            test_type,
            default_value: Some(value),
            ..
        } if value.contains(['$', '`', '[', '\\']) => Some(match test_type {
            ParameterTestType::UnsetOrNull => ":=".to_string(),
            ParameterTestType::Unset => "=".to_string(),
        }),
        E::Transform { op, .. } => Some(format!("@{}", transform_letter(op))),
        E::Substring { offset, length, .. } => {
            let numeric = numeric_only(&offset.value)
                && length.as_ref().is_none_or(|l| numeric_only(&l.value));
            (!numeric).then(|| ":".to_string())
        }
        _ => None,
    }
}

fn transform_letter(op: &ParameterTransformOp) -> char {
    use ParameterTransformOp as T;
    match op {
        T::ToUpperCase => 'U',
        T::CapitalizeInitial => 'u',
        T::ToLowerCase => 'L',
        T::Quoted => 'Q',
        T::ExpandEscapeSequences => 'E',
        T::PromptExpand => 'P',
        T::ToAssignmentLogic => 'A',
        T::ToAttributeFlags => 'a',
        T::PossiblyQuoteWithArraysExpanded {
            separate_words: false,
        } => 'K',
        T::PossiblyQuoteWithArraysExpanded {
            separate_words: true,
        } => 'k',
    }
}

/// The variables whose value bash expands as a prompt (or runs, `PROMPT_COMMAND`).
const PROMPT_VARIABLES: &[&str] = &["PS0", "PS1", "PS2", "PS4", "PROMPT_COMMAND"];

/// An assignment (`NAME=VALUE` as written) that gives a prompt variable a value that prompt
/// expansion would run (`$`, a backtick or a backslash in it; any value of `PROMPT_COMMAND`).
pub fn prompt_assignment(source: &str) -> Option<Unsafe> {
    let (name, value) = source.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    if !PROMPT_VARIABLES.contains(&name) {
        return None;
    }
    (name == "PROMPT_COMMAND" || value.contains(['$', '`', '\\']))
        .then(|| Unsafe::new(source, format!("{name}=")))
}

/// A prompt variable given a value only known at run time (`read PS4`, `for PS4 in …`).
pub fn prompt_target(name: &str, construct: &str) -> Option<Unsafe> {
    PROMPT_VARIABLES
        .contains(&name)
        .then(|| Unsafe::new(construct, format!("{name}=")))
}

/// A variable name a builtin assigns a value to: as [`variable_name`], and not a prompt
/// variable.
fn assigned_name(word: &Word) -> Option<Unsafe> {
    variable_name(word).or_else(|| prompt_target(name_part(word.text()), &word.source))
}

/// The subscript of `name[subscript]`, if the text has one.
fn subscript(name: &str) -> Option<&str> {
    let open = name.find('[')?;
    let inner = &name[open + 1..];
    Some(inner.strip_suffix(']').unwrap_or(inner))
}

/// A variable name as a builtin takes it (`a[i]` included): refused when only known at run time
/// or when its subscript is more than a number.
pub fn variable_name(word: &Word) -> Option<Unsafe> {
    let Some(literal) = word.literal.as_deref() else {
        return Some(Unsafe::new("arguments added at run time", "name"));
    };
    let name_source = name_part(&word.source);
    if name_source.contains(['$', '`']) {
        return Some(Unsafe::new(&word.source, "name only known at run time"));
    }
    let name = name_part(literal);
    if let Some(index) = subscript(name) {
        if !matches!(index, "@" | "*") && !numeric_only(index) {
            return Some(Unsafe::new(&word.source, "["));
        }
    }
    // A compound value: `a=([k]=v …)`.
    if let Some(value) = literal[name.len()..].strip_prefix("=(") {
        let mut rest = value;
        while let Some(open) = rest.find('[') {
            let after = &rest[open + 1..];
            let Some(close) = after.find(']') else {
                return Some(Unsafe::new(&word.source, "["));
            };
            if !numeric_only(&after[..close]) {
                return Some(Unsafe::new(&word.source, "["));
            }
            rest = &after[close + 1..];
        }
    }
    None
}

/// The name part of `NAME[SUB]=VALUE` / `NAME+=VALUE` (brackets may hold `=`).
fn name_part(text: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '=' if depth == 0 => {
                let end = if text[..i].ends_with('+') { i - 1 } else { i };
                return &text[..end];
            }
            _ => {}
        }
    }
    text
}

/// What a builtin that evaluates arithmetic or takes variable names would evaluate: `let`,
/// `declare`/`typeset`/`local`/`export`/`readonly` (names, and the integer and nameref
/// attributes, which make later assignments and expansions evaluate), `read`, `printf -v`,
/// `test -v`, `wait -p`, `unset`, `mapfile`/`readarray`, `getopts`. `words[0]` is the name.
pub fn builtin(words: &[Word]) -> Option<Unsafe> {
    let name = words.first()?.text();
    let args = &words[1..];
    let display = || {
        words
            .iter()
            .map(|w| w.source.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    match name {
        "let" => args
            .iter()
            .find(|w| w.dynamic || !numeric_only(w.text()))
            .map(|_| Unsafe::new(display(), "let")),
        "declare" | "typeset" | "local" | "export" | "readonly" => {
            let attributes = name != "export" && name != "readonly";
            let mut flags = String::new();
            let mut operands = Vec::new();
            for w in args {
                let text = w.text();
                if !w.dynamic && (text.starts_with('-') || text.starts_with('+')) && text.len() > 1
                {
                    if let Some(cluster) = text.strip_prefix('-') {
                        flags.push_str(cluster);
                    }
                } else if w.dynamic && w.source.starts_with(['$', '"']) && name != "export" {
                    // `declare "$opt" x`: the word may be an option.
                    return Some(Unsafe::new(display(), "name only known at run time"));
                } else {
                    operands.push(w);
                }
            }
            if let Some(u) = operands.iter().find_map(|w| prompt_assignment(&w.source)) {
                return Some(u);
            }
            if attributes && !operands.is_empty() {
                for attribute in ['i', 'n'] {
                    if flags.contains(attribute) {
                        return Some(Unsafe::new(display(), format!("{name} -{attribute}")));
                    }
                }
            }
            operands.into_iter().find_map(variable_name)
        }
        "read" => {
            let mut i = 0;
            while i < args.len() {
                let w = &args[i];
                let text = w.text();
                if !w.dynamic && text.starts_with('-') && text.len() > 1 {
                    let cluster: Vec<char> = text[1..].chars().collect();
                    for (k, c) in cluster.iter().enumerate() {
                        if "dinNptua".contains(*c) {
                            let attached = k + 1 < cluster.len();
                            if *c == 'a' && !attached {
                                if let Some(u) = args.get(i + 1).and_then(assigned_name) {
                                    return Some(u);
                                }
                            } else if *c == 'a' {
                                let name: String = cluster[k + 1..].iter().collect();
                                if subscript(&name).is_some() {
                                    return Some(Unsafe::new(display(), "["));
                                }
                            }
                            if !attached {
                                i += 1;
                            }
                            break;
                        }
                    }
                } else if let Some(u) = assigned_name(w) {
                    return Some(u);
                }
                i += 1;
            }
            None
        }
        "printf" => named_by_option(args, 'v'),
        "wait" => named_by_option(args, 'p'),
        "test" | "[" => args
            .windows(2)
            .find(|pair| !pair[0].dynamic && pair[0].text() == "-v")
            .and_then(|pair| variable_name(&pair[1])),
        "unset" => args
            .iter()
            .filter(|w| w.dynamic || !w.text().starts_with('-'))
            .find_map(variable_name),
        "mapfile" | "readarray" => args
            .iter()
            .filter(|w| w.dynamic || !w.text().starts_with('-'))
            .find_map(assigned_name),
        "getopts" => args.get(1).and_then(assigned_name),
        _ => None,
    }
}

/// The name given to option `-c` (`-v NAME` or `-vNAME`).
fn named_by_option(args: &[Word], c: char) -> Option<Unsafe> {
    for (i, w) in args.iter().enumerate() {
        let text = w.text();
        if w.dynamic || !text.starts_with('-') {
            continue;
        }
        if let Some(k) = text[1..].find(c) {
            let rest = &text[1 + k + 1..];
            if rest.is_empty() {
                return args.get(i + 1).and_then(assigned_name);
            }
            return prompt_target(rest, &w.source).or_else(|| {
                subscript(rest)
                    .and_then(|index| (!numeric_only(index)).then(|| Unsafe::new(&w.source, "[")))
            });
        }
    }
    None
}

#[cfg(test)]
#[path = "expansions_tests.rs"]
mod tests;
