//! Commands that run other commands: what runs behind `sudo`, `env`, `timeout`, `xargs`,
//! `bash -c`, `eval`, `find -exec` and the like.
//!
//! Each wrapper's options are read the way its `getopt` reads them, so that the command after
//! them is found: options that take a value skip it, parsing stops at the first operand, and
//! options that change what runs (`sudo -s`, `env -S`, `su -c`) are followed. `env` and `sudo`
//! take any word with `=` before the command for an assignment, as they do; `xargs -I R` and
//! `fd -x` substitute input into the command's words. The list is not exhaustive: programs
//! that run code of their own (interpreters, `make`) are ordinary commands here, so an allow
//! list is the way to restrict them; options that make common programs run code (`git -c`,
//! `sed -i`) are in [`crate::risky`]. The tables are [`tables`] (data only).

mod tables;

use crate::found::Word;
use crate::pattern::Glob;
use tables::{Spec, OTHER_SHELLS, PLAIN, POSIX_SHELLS, WRAPPERS};

/// What a command runs besides itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inner<'w> {
    /// Nothing (an ordinary command).
    Nothing,
    /// Another command, given by the remaining words; `appends` when the wrapper adds arguments
    /// at run time (`xargs`).
    Command {
        /// The command's words.
        words: &'w [Word],
        /// Whether arguments are added when it runs.
        appends: bool,
    },
    /// Several commands (`find -exec … ;` clauses).
    Commands(Vec<Vec<Word>>),
    /// Shell code (`bash -c CODE`, `eval`, `sudo -s`); `None` when the code is only known at
    /// run time.
    Code(Option<String>),
    /// Code that is defined, not run (`alias`): only deny rules apply to it.
    LatentCode(String),
    /// A shell reading its script from standard input; `posix` when it speaks the syntax this
    /// module parses.
    Stdin {
        /// Whether the shell's syntax is the one analysed here.
        posix: bool,
    },
    /// Runs something that cannot be followed (`env -S`, `fish -c`, an option only known at
    /// run time).
    Opaque,
}

/// What `name` (a command name without its directory) runs, given its arguments.
pub fn inner<'w>(name: &str, args: &'w [Word]) -> Inner<'w> {
    if POSIX_SHELLS.contains(&name) {
        return shell(args, true);
    }
    if OTHER_SHELLS.contains(&name) {
        return shell(args, false);
    }
    match name {
        "source" | "." => return script_operand(args.first(), true),
        "hash" => return hash(args),
        "eval" => return code_of(args),
        "trap" => return trap(args),
        "alias" => return alias(args),
        "find" => return find(args),
        "fd" | "fdfind" => return fd(args),
        "xargs" => return xargs(args),
        _ => {}
    }
    match WRAPPERS.iter().find(|spec| spec.names.contains(&name)) {
        Some(spec) => wrapped(spec, args),
        None => Inner::Nothing,
    }
}

fn code_of(words: &[Word]) -> Inner<'_> {
    if words.is_empty() {
        Inner::Nothing
    } else if words.iter().any(|w| w.dynamic) {
        Inner::Code(None)
    } else {
        Inner::Code(Some(
            words.iter().map(Word::text).collect::<Vec<_>>().join(" "),
        ))
    }
}

fn code_word(word: Option<&Word>) -> Inner<'_> {
    match word {
        None => Inner::Nothing,
        Some(w) if w.dynamic => Inner::Code(None),
        Some(w) => Inner::Code(Some(w.text().to_string())),
    }
}

/// `bash [options] [-c CODE | SCRIPT | -s]`: the code string, a script file (an ordinary
/// command), or standard input.
fn shell(args: &[Word], posix: bool) -> Inner<'_> {
    let mut command_mode = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg.dynamic {
            return Inner::Opaque;
        }
        let text = arg.text();
        if text == "--" || text == "-" {
            i += 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            if long == "command" {
                command_mode = true;
            }
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        let is_option = (text.starts_with('-') || text.starts_with('+')) && text.len() > 1;
        if !is_option {
            break;
        }
        let cluster = &text[1..];
        if cluster == "Command" || cluster == "command" || cluster.contains('c') {
            command_mode = true;
        }
        i += if cluster.ends_with('o') || cluster.ends_with('O') {
            2
        } else {
            1
        };
    }
    if !posix {
        return if command_mode {
            Inner::Opaque
        } else if i < args.len() {
            Inner::Nothing
        } else {
            Inner::Stdin { posix }
        };
    }
    if command_mode {
        code_word(args.get(i))
    } else if i < args.len() {
        script_operand(args.get(i), posix)
    } else {
        Inner::Stdin { posix }
    }
}

/// A script given by name (`bash FILE`, `source FILE`): an ordinary file's content is not known
/// and it is checked as a command; standard input is followed; a file only known at run time
/// (`<(…)`, `/dev/fd/3`, `$F`) cannot be checked.
fn script_operand(word: Option<&Word>, posix: bool) -> Inner<'_> {
    let Some(word) = word else {
        return Inner::Nothing;
    };
    if word.dynamic {
        return Inner::Opaque;
    }
    match word.text() {
        "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" => Inner::Stdin { posix },
        path if path.starts_with("/dev/fd/") || path.starts_with("/proc/") => Inner::Opaque,
        _ => Inner::Nothing,
    }
}

/// `hash -p PATH NAME` makes NAME run PATH: PATH is what runs, with any arguments.
fn hash(args: &[Word]) -> Inner<'_> {
    let Some(i) = args.iter().position(|w| w.dynamic || w.text() == "-p") else {
        return Inner::Nothing;
    };
    match args.get(i + 1) {
        Some(path) if !args[i].dynamic && !path.dynamic => {
            Inner::LatentCode(format!("'{}' \"$@\"", path.text().replace('\'', "'\\''")))
        }
        _ => Inner::Opaque,
    }
}

/// `trap [-lp] [CODE SIGNAL...]`: the handler is code.
fn trap(args: &[Word]) -> Inner<'_> {
    let first = args
        .iter()
        .position(|w| !matches!(w.text(), "-l" | "-p" | "--") || w.dynamic);
    match first.map(|i| &args[i]) {
        Some(w) if !w.dynamic && w.text() == "-" => Inner::Nothing,
        other => code_word(other),
    }
}

/// `alias NAME=VALUE...`: each value is code that runs where the alias is used, with arguments.
fn alias(args: &[Word]) -> Inner<'_> {
    let mut code = Vec::new();
    for arg in args {
        if arg.dynamic {
            return Inner::Opaque;
        }
        if let Some((_, value)) = arg.text().split_once('=') {
            code.push(format!("{value} \"$@\""));
        }
    }
    if code.is_empty() {
        Inner::Nothing
    } else {
        Inner::LatentCode(code.join("\n"))
    }
}

/// `find … -exec CMD ARGS ;` (also `-execdir`, `-ok`, `-okdir`, and `+`): `{}` is replaced by
/// file names.
fn find(args: &[Word]) -> Inner<'_> {
    let mut commands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if !args[i].dynamic && matches!(args[i].text(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && !matches!(args[end].text(), ";" | "+") {
                end += 1;
            }
            let words: Vec<Word> = args[start..end]
                .iter()
                .map(|w| {
                    if w.text().contains("{}") {
                        let mut w = w.clone();
                        w.dynamic = true;
                        w.template = vec![Glob::Any];
                        w
                    } else {
                        w.clone()
                    }
                })
                .collect();
            if !words.is_empty() {
                commands.push(words);
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    if commands.is_empty() {
        Inner::Nothing
    } else {
        Inner::Commands(commands)
    }
}

/// `fd … -x CMD ARGS [;]` (also `--exec`, `-X`, `--exec-batch`): everything after the option
/// is the command; `{}`, `{/}`, `{.}`… are replaced by file names.
fn fd(args: &[Word]) -> Inner<'_> {
    let Some(i) = args.iter().position(|w| {
        !w.dynamic
            && (matches!(w.text(), "-x" | "--exec" | "-X" | "--exec-batch")
                || w.text().starts_with("--exec="))
    }) else {
        return Inner::Nothing;
    };
    let mut words: Vec<Word> = Vec::new();
    if let Some(first) = args[i].text().strip_prefix("--exec=") {
        let mut word = args[i].clone();
        word.literal = Some(first.to_string());
        word.template = first.chars().map(Glob::Char).collect();
        words.push(word);
    }
    for w in &args[i + 1..] {
        if !w.dynamic && w.text() == ";" {
            break;
        }
        words.push(placeholder(w, &["{}", "{/}", "{//}", "{.}", "{/.}"]));
    }
    if words.is_empty() {
        Inner::Nothing
    } else {
        Inner::Commands(vec![words])
    }
}

/// A word in which a wrapper substitutes file names or input (`{}`): only known at run time.
fn placeholder(word: &Word, markers: &[&str]) -> Word {
    if markers
        .iter()
        .any(|m| word.source.contains(m) || word.text().contains(m))
    {
        let mut w = word.clone();
        w.dynamic = true;
        w.template = vec![Glob::Any];
        w
    } else {
        word.clone()
    }
}

/// `xargs`: the command after its options, with the input appended, or with `-I R` (`-i`,
/// `--replace`) substituted for `R` in its words.
fn xargs(args: &[Word]) -> Inner<'_> {
    let spec = WRAPPERS
        .iter()
        .find(|spec| spec.names.contains(&"xargs"))
        .unwrap_or(&PLAIN);
    let mut replace: Option<String> = None;
    let mut i = 0;
    while i < args.len() && !args[i].dynamic {
        let text = args[i].text();
        if text == "--" || !text.starts_with('-') {
            break;
        }
        if let Some(value) = text.strip_prefix("--replace") {
            replace = Some(value.strip_prefix('=').unwrap_or("{}").to_string());
        } else if let Some(value) = text.strip_prefix("-I") {
            replace = Some(if value.is_empty() {
                args.get(i + 1)
                    .map(|w| w.text().to_string())
                    .unwrap_or_default()
            } else {
                value.to_string()
            });
        } else if let Some(value) = text.strip_prefix("-i") {
            replace = Some(if value.is_empty() { "{}" } else { value }.to_string());
        }
        i += 1;
    }
    let inner = wrapped(spec, args);
    match (inner, replace) {
        (Inner::Command { words, .. }, Some(marker)) if !marker.is_empty() => {
            let marker = marker.as_str();
            Inner::Commands(vec![words
                .iter()
                .map(|w| placeholder(w, &[marker]))
                .collect()])
        }
        (Inner::Command { words, .. }, Some(_)) => {
            Inner::Commands(vec![words.iter().map(|w| placeholder(w, &[""])).collect()])
        }
        (inner, _) => inner,
    }
}

/// `NAME=VALUE` before the command of `env` or `sudo`: any word with `=` in it, as they read it
/// (`env 'A%=1' rm x` runs `rm x`).
fn is_environment_assignment(text: &str) -> bool {
    text.contains('=')
}

/// Reads a wrapper's options as its `getopt` would and returns what runs.
fn wrapped<'w>(spec: &Spec, args: &'w [Word]) -> Inner<'w> {
    let mut shell = spec.shell_by_default;
    let mut operands = 0;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg.dynamic {
            if spec.permute {
                // An operand of su or script (a user name, a file) runs nothing.
                i += 1;
                continue;
            }
            return Inner::Opaque;
        }
        let text = arg.text();
        if text == "--" {
            i += 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            if spec.long_code.contains(&name) {
                return match value {
                    Some(code) => Inner::Code(Some(code.to_string())),
                    None => code_word(args.get(i + 1)),
                };
            }
            if spec.long_opaque.contains(&name) {
                return Inner::Opaque;
            }
            if spec.long_none.contains(&name) {
                return Inner::Nothing;
            }
            if spec.long_shell.contains(&name) {
                shell = true;
            }
            if spec.long_direct.contains(&name) {
                shell = false;
            }
            let takes_next = value.is_none() && spec.long_values.contains(&name);
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        if text.len() > 1 && text.starts_with('-') {
            let cluster: Vec<char> = text[1..].chars().collect();
            let mut takes_next = false;
            for (k, c) in cluster.iter().enumerate() {
                let attached: String = cluster[k + 1..].iter().collect();
                if spec.short_code.contains(*c) {
                    return if attached.is_empty() {
                        code_word(args.get(i + 1))
                    } else {
                        Inner::Code(Some(attached))
                    };
                }
                if spec.short_opaque.contains(*c) {
                    return Inner::Opaque;
                }
                if spec.short_none.contains(*c) {
                    return Inner::Nothing;
                }
                if spec.short_shell.contains(*c) {
                    shell = true;
                }
                if spec.short_direct.contains(*c) {
                    shell = false;
                }
                if spec.short_values.contains(*c) {
                    takes_next = attached.is_empty();
                    break;
                }
            }
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        if spec.assignments && is_environment_assignment(text) {
            i += 1;
            continue;
        }
        if spec.permute {
            operands += 1;
            i += 1;
            continue;
        }
        break;
    }
    if spec.permute {
        let _ = operands;
        return Inner::Nothing;
    }
    let Some(rest) = args.get(i + spec.operands..) else {
        return Inner::Nothing;
    };
    if spec.code_after_operands {
        if let Some(first) = rest.first().filter(|w| !w.dynamic) {
            match first.text() {
                "-c" | "--command" => return code_word(rest.get(1)),
                text => {
                    if let Some(code) = text.strip_prefix("--command=") {
                        return Inner::Code(Some(code.to_string()));
                    }
                }
            }
        }
    }
    if rest.is_empty() {
        Inner::Nothing
    } else if shell {
        code_of(rest)
    } else {
        Inner::Command {
            words: rest,
            appends: spec.appends,
        }
    }
}

#[cfg(test)]
mod tests;
