//! One edit: its parameters, checked as Cline's SDK checks them, and applying it to a file.

use serde_json::Value;
use tool_api::abi::ToolError;
use tool_api::model::PathVerdict;
use tool_api::sdk::operation::{invalid_param as invalid, required_string_param, string_param};
use tool_api::sdk::Params;
use tool_api::workspace::{FsError, Workspace};

use crate::diff::{line_diff, split_lines};

/// The longest `old_text` or `new_text`, in UTF-16 units (Cline's `INPUT_ARG_CHAR_LIMIT`).
pub const INPUT_LIMIT: usize = 6000;

/// The largest file an edit reads.
const MAX_EDIT_BYTES: u64 = 64 << 20;

/// How many changed lines the diff of a replacement shows (Cline's `maxDiffLines`).
const MAX_DIFF_LINES: usize = 200;

/// The parameters of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The file.
    pub path: String,
    /// The text to replace (none: create or insert).
    pub old_text: Option<String>,
    /// The replacement, the new file, or the inserted text.
    pub new_text: String,
    /// The line to insert before (any integer: the range is checked against the file).
    pub insert_line: Option<i64>,
}

impl Edit {
    /// Reads and checks the parameters: a non-empty `path`, a string `new_text`, `old_text` a
    /// string or null, `insert_line` an integer (a numeric string counts) or null.
    pub fn from_params(params: &Params) -> Result<Self, ToolError> {
        let map = params.as_map();
        let string = |field: &str| string_param(map, field);
        let path = required_string_param(map, "path")?;
        if path.is_empty() {
            return Err(invalid(
                "Too small: expected string to have >=1 characters",
                "path",
            ));
        }
        let new_text = required_string_param(map, "new_text")?;
        let old_text = match map.get("old_text") {
            Some(Value::Null) => None,
            _ => string("old_text")?,
        };
        let insert_line = match map.get("insert_line") {
            None | Some(Value::Null) => None,
            Some(value) => Some(integer(value).ok_or_else(|| {
                invalid(
                    "Invalid input: expected int, received number",
                    "insert_line",
                )
            })?),
        };
        Ok(Self {
            path,
            old_text,
            new_text,
            insert_line,
        })
    }

    /// `edit:PATH` or `insert:PATH`.
    pub fn query(&self) -> String {
        let operation = if self.insert_line.is_some() {
            "insert"
        } else {
            "edit"
        };
        format!("{operation}:{}", self.path)
    }

    /// Why the texts are too large for one call, when they are (`old_text` first).
    pub fn too_large(&self) -> Option<String> {
        let texts = [
            ("old_text", self.old_text.as_deref()),
            ("new_text", Some(&*self.new_text)),
        ];
        texts.into_iter().find_map(|(field, text)| {
            let length = text?.encode_utf16().count();
            (length > INPUT_LIMIT).then(|| {
                format!(
                    "Editor input too large: {field} was {length} characters, exceeding the \
                     recommended limit of {INPUT_LIMIT}. Split the edit into smaller tool calls \
                     so later tool calls are less likely to be truncated or time out."
                )
            })
        })
    }
}

/// An integer, or a string holding one (zod's `coerce.number().int()`).
fn integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(text) => {
            let trimmed = text.trim();
            if trimmed.is_empty() {
                return Some(0);
            }
            let number: f64 = trimmed.parse().ok()?;
            (number.fract() == 0.0).then_some(number as i64)
        }
        Value::Bool(flag) => Some(i64::from(*flag)),
        _ => None,
    }
}

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The operation's result text.
    pub text: String,
}

/// Applies `edit` to the file `verdict` names. The error is the reason, without Cline's
/// `Editor operation failed: ` prefix.
pub fn apply(workspace: &Workspace, verdict: &PathVerdict, edit: &Edit) -> Result<Outcome, String> {
    let shown = &verdict.absolute;
    let existing = match workspace.open_file(verdict) {
        Ok(mut file) => Some(file.read_all(MAX_EDIT_BYTES).map_err(|e| e.to_string())?),
        Err(FsError::NotFound) => None,
        // Node's words, as Cline's answer has them.
        Err(FsError::IsADirectory) => {
            return Err("EISDIR: illegal operation on a directory, read".to_string())
        }
        Err(e) => return Err(e.to_string()),
    };
    let text = |bytes: Vec<u8>| {
        String::from_utf8(bytes)
            .map_err(|_| format!("{shown} is not a UTF-8 text file; it was left as it is."))
    };
    let write = |content: &str| {
        workspace
            .write_file(verdict, content.as_bytes())
            .map_err(|e| e.to_string())
    };
    if let Some(line) = edit.insert_line {
        let Some(bytes) = existing else {
            return Err(format!("ENOENT: no such file or directory, open '{shown}'"));
        };
        let content = text(bytes)?;
        let updated = insert(&content, line, &edit.new_text).map_err(|boundary| {
            format!(
                "Invalid insert_line: {line}. insert_line must be a positive one-based boundary \
                 line in the range 1-{boundary}. Use {boundary} to append at EOF."
            )
        })?;
        write(&updated)?;
        return Ok(Outcome {
            text: format!("Inserted content at line {line} in {shown}."),
        });
    }
    let Some(bytes) = existing else {
        write(&edit.new_text)?;
        return Ok(Outcome {
            text: format!("File created successfully at: {shown}"),
        });
    };
    let Some(old_text) = &edit.old_text else {
        return Err(
            "Parameter `old_text` is required when editing an existing file without `insert_line`"
                .to_string(),
        );
    };
    let content = text(bytes)?;
    let eol = eol_of(&content);
    let old = with_eol(old_text, eol);
    let new = with_eol(&edit.new_text, eol);
    let occurrences = if old.is_empty() {
        0
    } else {
        content.matches(old.as_str()).count()
    };
    match occurrences {
        0 => {
            return Err(format!(
                "No replacement performed: text not found in {shown}."
            ))
        }
        1 => {}
        _ => {
            return Err(format!(
                "No replacement performed: multiple occurrences of text found in {shown}."
            ))
        }
    }
    let updated = content.replacen(old.as_str(), &new, 1);
    write(&updated)?;
    Ok(Outcome {
        text: format!(
            "Edited {shown}\n{}",
            line_diff(&content, &updated, MAX_DIFF_LINES)
        ),
    })
}

/// The file's line ending: CRLF when it has one, else LF.
fn eol_of(content: &str) -> &'static str {
    if content.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// The lines of `text` (split on CRLF or LF), joined with `eol`.
fn with_eol(text: &str, eol: &str) -> String {
    split_lines(text).join(eol)
}

/// `content` with `text`'s lines inserted before line `line`; the error is the largest line
/// that may be given.
fn insert(content: &str, line: i64, text: &str) -> Result<String, usize> {
    let eol = eol_of(content);
    let mut lines = split_lines(content);
    let boundary = lines.len() + 1;
    let at = usize::try_from(line)
        .ok()
        .filter(|&at| at >= 1 && at <= boundary)
        .ok_or(boundary)?;
    let inserted = split_lines(text);
    lines.splice(at - 1..at - 1, inserted);
    Ok(lines.join(eol))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn params(value: Value) -> Params {
        Params::from_map(value.as_object().unwrap().clone())
    }

    fn edit_file(content: &str, edit: Value) -> (Result<Outcome, String>, String) {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("f.txt"), content).unwrap();
        let workspace = Workspace::new(root.path()).unwrap();
        let edit = Edit::from_params(&params(edit)).unwrap();
        let outcome = apply(&workspace, &workspace.verdict(&edit.path), &edit);
        let after = std::fs::read_to_string(root.path().join("f.txt")).unwrap_or_default();
        (outcome, after)
    }

    #[test]
    fn a_text_found_once_is_replaced_with_a_diff() {
        let (outcome, after) = edit_file(
            "a\nb\nc",
            json!({"path": "f.txt", "old_text": "b", "new_text": "B"}),
        );
        assert_eq!(after, "a\nB\nc");
        assert!(outcome
            .unwrap()
            .text
            .ends_with("\n```diff\n-2: b\n+2: B\n```"));
    }

    #[test]
    fn missing_and_repeated_texts_change_nothing() {
        let (outcome, after) = edit_file(
            "x\nx\n",
            json!({"path": "f.txt", "old_text": "x", "new_text": "y"}),
        );
        assert!(outcome
            .unwrap_err()
            .starts_with("No replacement performed: multiple occurrences"));
        assert_eq!(after, "x\nx\n");
        let (outcome, _) = edit_file(
            "x\n",
            json!({"path": "f.txt", "old_text": "z", "new_text": "y"}),
        );
        assert!(outcome
            .unwrap_err()
            .starts_with("No replacement performed: text not found"));
        let (outcome, _) = edit_file("x\n", json!({"path": "f.txt", "new_text": "y"}));
        assert_eq!(
            outcome.unwrap_err(),
            "Parameter `old_text` is required when editing an existing file without `insert_line`"
        );
    }

    #[test]
    fn an_insert_goes_before_its_line_in_the_files_line_endings() {
        let (outcome, after) = edit_file(
            "one\r\ntwo\r\nthree",
            json!({"path": "f.txt", "new_text": "first\nsecond", "insert_line": "2"}),
        );
        assert!(outcome
            .unwrap()
            .text
            .starts_with("Inserted content at line 2 in "));
        assert_eq!(after, "one\r\nfirst\r\nsecond\r\ntwo\r\nthree");
        let (outcome, after) = edit_file(
            "one\ntwo",
            json!({"path": "f.txt", "new_text": "x", "insert_line": 4}),
        );
        assert!(outcome
            .unwrap_err()
            .ends_with("in the range 1-3. Use 3 to append at EOF."));
        assert_eq!(after, "one\ntwo");
    }

    #[test]
    fn parameters_are_checked_as_clines_schema_checks_them() {
        let error = |value: Value| {
            Edit::from_params(&params(value))
                .unwrap_err()
                .message
                .to_string()
        };
        assert_eq!(
            error(json!({"path": "f"})),
            "✖ Invalid input: expected string, received undefined\n  → at new_text"
        );
        assert_eq!(
            error(json!({"path": "", "new_text": ""})),
            "✖ Too small: expected string to have >=1 characters\n  → at path"
        );
        assert_eq!(
            error(json!({"path": "f", "new_text": "", "insert_line": 1.5})),
            "✖ Invalid input: expected int, received number\n  → at insert_line"
        );
        let big =
            Edit::from_params(&params(json!({"path": "f", "new_text": "x".repeat(6001)}))).unwrap();
        assert!(big
            .too_large()
            .unwrap()
            .starts_with("Editor input too large: new_text was 6001"));
    }
}
