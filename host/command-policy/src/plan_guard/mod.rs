//! The plan preset's rule (Cline's SDK plan mode): a command that can modify files is not run.
//! Reading commands run; output may go to a temporary directory; anything that writes, moves,
//! deletes, installs or edits in place is refused, with Cline's text saying why and what to do
//! instead ([`refusal`]).
//!
//! The command is read as Cline's SDK guard reads it: here-document bodies, quoted text, escaped
//! characters and comments are not commands; every redirection target is checked; each segment
//! between `;`, `|`, `&`, newlines, parentheses and backquotes is a command whose words are
//! checked after leading assignments and wrappers (`sudo`, `env`, `timeout`...). It is a
//! guard against a model's mistakes in plan mode, not a sandbox: the command sandbox still
//! applies to what it lets through.

use std::sync::OnceLock;

use regex::Regex;

mod tables;

use tables::{BLOCKED, GIT_READING, RESERVED, SUBCOMMANDS, WRAPPERS};

/// A command entry: a shell string, or a program with its arguments (no shell).
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    /// A command line for the shell.
    Shell(&'a str),
    /// A program and its arguments.
    Argv(&'a str, &'a [String]),
}

/// The verdict on a command in the plan preset: refused when [`file_editing`] names a part,
/// else `verdict` as it was.
pub fn plan_verdict(entry: Entry<'_>, verdict: crate::CommandVerdict) -> crate::CommandVerdict {
    let Some(part) = file_editing(entry) else {
        return verdict;
    };
    crate::CommandVerdict {
        allowed: false,
        reason: crate::Reason::PlanMode,
        matched_pattern: None,
        failed_segment: Some(part.clone()),
        detected_operator: None,
        denial_message: Some(refusal(&part)),
        stricter_than_cline: false,
    }
}

/// Cline's refusal for the command part `reason` names.
pub fn refusal(reason: &str) -> String {
    format!(
        "Command not executed: {reason} can modify files, and file modifications are blocked in \
         plan mode. You are in PLAN MODE — explore, analyze, and present a plan; do not make \
         changes. Use read-only commands to inspect the project (redirecting output to /tmp, or \
         %TEMP% on Windows, is allowed), and if this change is part of the task, put it in your \
         plan so it can run after the user approves switching to act mode."
    )
}

/// What in `entry` can modify files (`` `rm` ``, `` output redirection (`> f`) ``), if anything.
pub fn file_editing(entry: Entry<'_>) -> Option<String> {
    match entry {
        Entry::Argv(program, args) => {
            let tokens: Vec<&str> = std::iter::once(program)
                .chain(args.iter().map(String::as_str))
                .collect();
            check_tokens(&tokens)
        }
        Entry::Shell(command) => {
            let masked = mask(command);
            if let Some(target) = redirect_regex()
                .captures_iter(&masked)
                .filter_map(|c| c.get(1))
                .map(|m| m.as_str())
                .find(|target| !allowed_target(target))
            {
                return Some(format!("output redirection (`> {target}`)"));
            }
            segment_regex()
                .split(&masked)
                .find_map(|segment| check_tokens(&segment.split_whitespace().collect::<Vec<_>>()))
        }
    }
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}")))
}

fn heredoc_regex() -> &'static Regex {
    static CELL: OnceLock<Regex> = OnceLock::new();
    regex(
        &CELL,
        r#"(?:^|[^<])<<-?\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_./-]+))"#,
    )
}

fn redirect_regex() -> &'static Regex {
    static CELL: OnceLock<Regex> = OnceLock::new();
    regex(&CELL, r"(?:^|[^<>])(?:>{1,2}|&>{1,2})\s*([^\s;&|<>()]+)")
}

fn segment_regex() -> &'static Regex {
    static CELL: OnceLock<Regex> = OnceLock::new();
    regex(&CELL, r"[\n;|&()`]+")
}

/// The text with what is not a command made inert: here-document bodies dropped, arithmetic,
/// escaped characters and quoted text's operators replaced, comments removed.
fn mask(command: &str) -> String {
    static ARITHMETIC: OnceLock<Regex> = OnceLock::new();
    static ESCAPED: OnceLock<Regex> = OnceLock::new();
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    static OPERATOR: OnceLock<Regex> = OnceLock::new();
    static COMMENT: OnceLock<Regex> = OnceLock::new();
    let mut kept = Vec::new();
    let mut closing: Option<String> = None;
    for line in command.split('\n') {
        if let Some(delimiter) = &closing {
            if line.trim_start_matches('\t') == delimiter {
                closing = None;
            }
            continue;
        }
        kept.push(line);
        closing = heredoc_regex().captures(line).and_then(|c| {
            (1..=3)
                .find_map(|i| c.get(i))
                .map(|m| m.as_str().to_string())
        });
    }
    let text = kept.join("\n");
    let text = regex(&ARITHMETIC, r"\$\(\([\s\S]*?\)\)").replace_all(&text, "_");
    let text = regex(&ESCAPED, r"\\.").replace_all(&text, "_");
    let operators = regex(&OPERATOR, r"[\s<>|;&$()`#\\]");
    let text = regex(&QUOTED, r#""[^"]*"|'[^']*'"#)
        .replace_all(&text, |c: &regex::Captures<'_>| {
            operators.replace_all(&c[0], "_").into_owned()
        });
    regex(&COMMENT, r"(?m)(?:^|\s)#.*$")
        .replace_all(&text, " ")
        .into_owned()
}

/// Whether output may go to `target`: the null device and the standard streams, or a temporary
/// directory (not climbing out of it).
fn allowed_target(target: &str) -> bool {
    static TEMP: OnceLock<Regex> = OnceLock::new();
    let target = target.replace(['"', '\''], "");
    let lower = target.to_ascii_lowercase();
    if [
        "/dev/null",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/tty",
        "nul",
        "nul:",
    ]
    .contains(&lower.as_str())
    {
        return true;
    }
    if target.contains("..") {
        return false;
    }
    ["/tmp/", "/var/tmp/", "$TMPDIR", "${TMPDIR"]
        .iter()
        .any(|prefix| target.starts_with(prefix))
        || regex(&TEMP, r"(?i)^(%te?mp%|\$env:te?mp)").is_match(&target)
}

fn is_assignment(token: &str) -> bool {
    static CELL: OnceLock<Regex> = OnceLock::new();
    regex(&CELL, r"^[A-Za-z_][A-Za-z0-9_]*\+?=").is_match(token)
}

/// A command word as compared: its base name, unquoted, lower-case, without `.exe`.
fn name_of(token: &str) -> String {
    let base = token.rsplit(['/', '\\']).next().unwrap_or(token);
    let lower = base.replace(['"', '\''], "").to_ascii_lowercase();
    lower.strip_suffix(".exe").unwrap_or(&lower).to_string()
}

fn check_tokens(tokens: &[&str]) -> Option<String> {
    static DURATION: OnceLock<Regex> = OnceLock::new();
    static PYTHON: OnceLock<Regex> = OnceLock::new();
    static IN_PLACE: OnceLock<Regex> = OnceLock::new();
    static CURL_OUT: OnceLock<Regex> = OnceLock::new();
    static WGET_STDOUT: OnceLock<Regex> = OnceLock::new();
    let mut rest = tokens;
    while let Some(first) = rest.first() {
        if is_assignment(first) || RESERVED.contains(first) {
            rest = &rest[1..];
        } else {
            break;
        }
    }
    while let Some(first) = rest.first() {
        if !WRAPPERS.contains(&name_of(first).as_str()) {
            break;
        }
        rest = &rest[1..];
        while let Some(option) = rest.first() {
            let skipped = option.starts_with('-')
                || *option == "{}"
                || is_assignment(option)
                || regex(&DURATION, r"^\d+[smhd]?$").is_match(option);
            if !skipped {
                break;
            }
            rest = &rest[1..];
        }
    }
    let (program, args) = rest.split_first()?;
    let name = name_of(program);
    let named = |text: &str| format!("`{text}`");
    if name == "tee" {
        return args
            .iter()
            .any(|a| !a.starts_with('-') && !allowed_target(a))
            .then(|| named("tee"));
    }
    if BLOCKED.contains(&name.as_str()) {
        return Some(named(&name));
    }
    if let Some(reason) = subcommand(&name, args) {
        return Some(reason);
    }
    if regex(&PYTHON, r"^python[\d.]*$").is_match(&name) {
        if let Some(at) = args.iter().position(|a| *a == "-m") {
            if matches!(
                args.get(at + 1).map(|m| name_of(m)).as_deref(),
                Some("pip" | "pip3")
            ) {
                let sub = args[at + 2..].iter().find(|a| !a.starts_with('-'));
                if let Some(sub) =
                    sub.filter(|s| ["install", "uninstall", "add", "remove"].contains(s))
                {
                    return Some(format!("`pip {sub}`"));
                }
            }
        }
    }
    let in_place = regex(&IN_PLACE, r"^-[A-Za-z]*i(\..*)?$");
    match name.as_str() {
        "sed" | "gsed"
            if args
                .iter()
                .any(|a| in_place.is_match(a) || a.starts_with("--in-place")) =>
        {
            Some("`sed -i` (in-place edit)".to_string())
        }
        "perl" if args.iter().any(|a| in_place.is_match(a)) => {
            Some("`perl -i` (in-place edit)".to_string())
        }
        "awk" | "gawk" | "nawk" | "mawk" => {
            let inplace = args
                .windows(2)
                .any(|w| (w[0] == "-i" || w[0] == "--include") && w[1] == "inplace")
                || args
                    .iter()
                    .any(|a| a.starts_with("-iinplace") || a.starts_with("--include=inplace"));
            inplace.then(|| "`awk -i inplace` (in-place edit)".to_string())
        }
        "sort"
            if args
                .iter()
                .any(|a| a.starts_with("-o") || a.starts_with("--output")) =>
        {
            Some("`sort -o` (writes a file)".to_string())
        }
        "curl"
            if args.iter().any(|a| {
                (!a.starts_with("--") && regex(&CURL_OUT, r"^-[A-Za-z]*[oO]").is_match(a))
                    || a.starts_with("--output")
                    || a.starts_with("--remote-name")
            }) =>
        {
            Some("`curl -o` (writes a file)".to_string())
        }
        "wget" => {
            let to_stdout = args.iter().enumerate().any(|(i, a)| {
                *a == "--spider"
                    || regex(&WGET_STDOUT, r"^-[A-Za-z]*O-$").is_match(a)
                    || *a == "--output-document=-"
                    || (*a == "-O" && args.get(i + 1) == Some(&"-"))
            });
            (!to_stdout).then(|| "`wget` (downloads files)".to_string())
        }
        "find" => find(args),
        _ => None,
    }
}

/// The reason a program's subcommand modifies files, when it does.
fn subcommand(name: &str, args: &[&str]) -> Option<String> {
    let (_, blocked) = SUBCOMMANDS
        .iter()
        .find(|(programs, _)| programs.contains(&name))?;
    if name == "yarn" && args.is_empty() {
        return Some("`yarn` (install)".to_string());
    }
    let mut index = 0;
    let mut sub = None;
    while index < args.len() {
        let arg = args[index];
        if name == "git" && (arg == "-c" || arg == "-C") {
            index += 2;
            continue;
        }
        if !arg.starts_with('-') {
            sub = Some(arg.to_ascii_lowercase());
            break;
        }
        index += 1;
    }
    let sub = sub?;
    if !blocked.contains(&sub.as_str()) {
        return None;
    }
    if name == "git" {
        if args.iter().any(|a| *a == "--help" || *a == "-h") {
            return None;
        }
        let next = args[index + 1..].iter().find(|a| !a.starts_with('-'));
        let reading = GIT_READING
            .iter()
            .any(|(s, reads)| *s == sub && next.is_some_and(|n| reads.contains(n)));
        if reading {
            return None;
        }
    }
    Some(format!("`{name} {sub}`"))
}

/// `find -delete`, or what a `find -exec` runs.
fn find(args: &[&str]) -> Option<String> {
    if args.contains(&"-delete") {
        return Some("`find -delete`".to_string());
    }
    let at = args
        .iter()
        .position(|a| matches!(*a, "-exec" | "-execdir" | "-ok" | "-okdir"))?;
    let nested: Vec<&str> = args[at + 1..]
        .iter()
        .take_while(|a| !matches!(**a, ";" | "\\;" | "+" | "_"))
        .copied()
        .collect();
    check_tokens(&nested)
}

#[cfg(test)]
mod tests;
