//! What `run_commands` is asked to run: the canonical `{"commands": [strings]}` and the looser
//! shapes Cline's SDK accepts (one command, `command` or `cmd`, `{command, args}` entries,
//! a JSON array sent as a string), with a here-document split across entries joined again.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

/// One command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A command line for the shell.
    Shell(String),
    /// A program run with these arguments, without a shell.
    Argv(String, Vec<String>),
}

/// How long a query may be before it is cut in the answer (Cline's preview limit).
const QUERY_PREVIEW: usize = 200;

impl Command {
    /// The command as one line: a shell line as it is, a program with its arguments quoted
    /// where they hold spaces or quotes.
    pub fn line(&self) -> String {
        match self {
            Command::Shell(line) => line.clone(),
            Command::Argv(program, args) => {
                let mut line = program.clone();
                for arg in args {
                    line.push(' ');
                    if arg.chars().any(|c| c.is_whitespace() || c == '"') {
                        line.push_str(&Value::String(arg.clone()).to_string());
                    } else {
                        line.push_str(arg);
                    }
                }
                line
            }
        }
    }

    /// The command as a shell would have to be given it to run the same program with the same
    /// arguments: every word that is not plainly safe single-quoted. This is the line the
    /// command policy checks, so that a `#`, `;` or quote in an argument cannot make it read
    /// another command than the one that runs.
    pub fn shell_line(&self) -> String {
        match self {
            Command::Shell(line) => line.clone(),
            Command::Argv(program, args) => std::iter::once(program)
                .chain(args)
                .map(|word| shell_quoted(word))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// The query of its result: its line, cut after [`QUERY_PREVIEW`] characters.
    pub fn query(&self) -> String {
        let line = self.line();
        let length = line.encode_utf16().count();
        if length <= QUERY_PREVIEW {
            return line;
        }
        let head: String = line.chars().take(QUERY_PREVIEW).collect();
        format!(
            "{head} ... [command truncated: {} more chars; full command is in the tool call input]",
            length - QUERY_PREVIEW
        )
    }
}

/// `word` as one shell word: as it is when it holds only characters no shell treats specially,
/// else in single quotes (a quote inside as `'\''`).
fn shell_quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The error of input that fits none of the shapes.
pub const INVALID_INPUT: &str = "✖ Invalid input";

/// The commands of a call's parameters, in order.
pub fn commands(params: &Map<String, Value>) -> Result<Vec<Command>, &'static str> {
    let entries: Vec<Value> = if let Some(commands) = params.get("commands") {
        match json_like(commands) {
            Value::Array(items) => items,
            other => vec![other],
        }
    } else if let Some(command) = params.get("command") {
        match (command, params.get("args")) {
            (Value::String(program), Some(args)) => {
                let mut entry = Map::new();
                entry.insert("command".into(), Value::String(program.clone()));
                entry.insert("args".into(), args.clone());
                vec![Value::Object(entry)]
            }
            (Value::String(line), None) => vec![Value::String(line.clone())],
            _ => return Err(INVALID_INPUT),
        }
    } else if let Some(Value::String(line)) = params.get("cmd") {
        vec![Value::String(line.clone())]
    } else {
        return Err(INVALID_INPUT);
    };
    let commands = entries.iter().map(entry).collect::<Result<Vec<_>, _>>()?;
    Ok(join_heredocs(commands))
}

/// A string holding a JSON array or object, parsed; anything else as it is.
fn json_like(value: &Value) -> Value {
    if let Value::String(text) = value {
        let trimmed = text.trim_start();
        if trimmed.starts_with('[') || trimmed.starts_with('{') {
            if let Ok(parsed) = serde_json::from_str::<Value>(text) {
                return parsed;
            }
        }
    }
    value.clone()
}

/// One entry: a string, or `{command, args?}` (without `args` it is a shell line).
fn entry(value: &Value) -> Result<Command, &'static str> {
    match value {
        Value::String(line) => Ok(Command::Shell(line.clone())),
        Value::Object(map) => {
            let program = map
                .get("command")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .ok_or(INVALID_INPUT)?;
            match map.get("args") {
                None => Ok(Command::Shell(program.to_string())),
                Some(Value::Array(args)) => {
                    let args = args
                        .iter()
                        .map(|a| a.as_str().map(str::to_string).ok_or(INVALID_INPUT))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok(Command::Argv(program.to_string(), args))
                }
                Some(_) => Err(INVALID_INPUT),
            }
        }
        _ => Err(INVALID_INPUT),
    }
}

/// The delimiter of the here-document a line opens, if it opens one.
fn heredoc_delimiter(line: &str) -> Option<String> {
    static OPENER: OnceLock<Regex> = OnceLock::new();
    let opener = OPENER.get_or_init(|| {
        Regex::new(r#"(?:^|[^<])<<-?\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_./-]+))"#)
            .unwrap_or_else(|e| panic!("heredoc pattern: {e}"))
    });
    let captures = opener.captures(line)?;
    (1..=3)
        .find_map(|i| captures.get(i))
        .map(|m| m.as_str().to_string())
}

/// A shell line that opens a here-document whose delimiter is a later entry of the same run of
/// shell lines is joined, with newlines, with every entry up to that one.
fn join_heredocs(commands: Vec<Command>) -> Vec<Command> {
    let mut out = Vec::new();
    let mut rest = commands.into_iter().peekable();
    while let Some(command) = rest.next() {
        let Command::Shell(line) = &command else {
            out.push(command);
            continue;
        };
        let Some(delimiter) = heredoc_delimiter(line) else {
            out.push(command);
            continue;
        };
        let run: Vec<String> = rest
            .clone()
            .map_while(|c| match c {
                Command::Shell(text) => Some(text),
                Command::Argv(..) => None,
            })
            .collect();
        match run.iter().position(|text| text.trim() == delimiter) {
            Some(end) => {
                let mut joined = line.clone();
                for text in &run[..=end] {
                    joined.push('\n');
                    joined.push_str(text);
                }
                for _ in 0..=end {
                    rest.next();
                }
                out.push(Command::Shell(joined));
            }
            None => out.push(command),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn lines(value: Value) -> Result<Vec<String>, &'static str> {
        commands(value.as_object().unwrap()).map(|c| c.iter().map(Command::line).collect())
    }

    #[test]
    fn the_loose_shapes_and_split_heredocs() {
        assert_eq!(
            lines(json!({"commands": ["echo a", "ls"]})),
            Ok(vec!["echo a".into(), "ls".into()])
        );
        assert_eq!(lines(json!({"commands": "pwd"})), Ok(vec!["pwd".into()]));
        assert_eq!(lines(json!({"command": "pwd"})), Ok(vec!["pwd".into()]));
        assert_eq!(lines(json!({"cmd": "pwd"})), Ok(vec!["pwd".into()]));
        assert_eq!(
            lines(json!({"commands": [{"command": "echo", "args": ["a b", "c\"d", "e"]}]})),
            Ok(vec![r#"echo "a b" "c\"d" e"#.into()])
        );
        assert_eq!(
            lines(json!({"commands": ["cat <<EOF", "line1", "EOF", "ls"]})),
            Ok(vec!["cat <<EOF\nline1\nEOF".into(), "ls".into()])
        );
        assert_eq!(
            lines(json!({"commands": "[\"a\",\"b\"]"})),
            Ok(vec!["a".into(), "b".into()])
        );
        assert_eq!(lines(json!({})), Err(INVALID_INPUT));
        assert_eq!(lines(json!({"commands": []})), Ok(vec![]));
    }

    #[test]
    fn the_checked_line_quotes_every_special_word() {
        let argv = Command::Argv(
            "find".into(),
            vec![
                ".".into(),
                "#".into(),
                "-exec".into(),
                "it's".into(),
                "".into(),
            ],
        );
        assert_eq!(argv.shell_line(), r#"find . '#' -exec 'it'\''s' ''"#);
    }

    #[test]
    fn a_long_query_is_cut() {
        let long = Command::Shell("x".repeat(250));
        assert!(long.query().ends_with(
            " ... [command truncated: 50 more chars; full command is in the tool call input]"
        ));
    }
}
