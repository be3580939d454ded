//! One edit, without the host: read the file, compute its new content, write it.
//!
//! Split in two steps so the caller can show the change (the UI event) between computing and
//! writing, and so that nothing touches the disk unless the new content could be computed.

use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::model::PathVerdict;
use tool_api::workspace::{FsError, Workspace};

use crate::content::{apply_model_fixes, final_content, for_model, strip_code_fences};
use crate::matcher::{construct_new_file_content, has_search_marker};
use crate::{texts, write};

/// Which of the three tools runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditKind {
    /// `write_to_file`: the content is the whole new file.
    WriteToFile,
    /// `replace_in_file`: SEARCH/REPLACE blocks applied to the file.
    ReplaceInFile,
    /// `new_rule`: like `write_to_file`, for a rule file.
    NewRule,
}

impl EditKind {
    /// The kind a tool name stands for.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "write_to_file" => Some(Self::WriteToFile),
            "replace_in_file" => Some(Self::ReplaceInFile),
            "new_rule" => Some(Self::NewRule),
            _ => None,
        }
    }

    /// The parameter holding the text: `diff` or `content`.
    pub fn text_param(self) -> &'static str {
        match self {
            Self::ReplaceInFile => "diff",
            Self::WriteToFile | Self::NewRule => "content",
        }
    }
}

/// What one edit is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct EditRequest<'a> {
    /// The tool.
    pub kind: EditKind,
    /// The `diff` or `content` parameter as the model sent it.
    pub text: &'a str,
    /// The workspace the file is reached through.
    pub workspace: &'a Workspace,
    /// The host's verdict on the file's path (the file it really leads to is changed).
    pub verdict: &'a PathVerdict,
    /// The path as shown to the model and the user.
    pub display: &'a str,
    /// The model's id, when the host knows it (decides Cline's non-Claude fixes).
    pub model_id: Option<&'a str>,
}

/// A computed edit, not yet written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// Whether the file existed before.
    pub existed: bool,
    /// The file's new content, exactly as it will be written.
    pub new_content: String,
    /// The 1-based lines where the SEARCH blocks matched (empty for whole-file writes).
    pub start_line_numbers: Vec<usize>,
    /// What the UI event shows: the diff (after the model fixes) or the content as sent.
    pub ui_content: String,
}

/// Why an edit could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareError {
    /// The SEARCH/REPLACE blocks did not apply; the message includes the help text and the
    /// file's current content.
    Diff(String),
    /// The file could not be read or is not text.
    File(String),
    /// A policy refused the file (it changed into an ignored or outside file after the check).
    Blocked(String),
    /// The path no longer leads where it led when the host checked it; nothing was read (the
    /// host checks it again).
    Changed(String),
}

impl PrepareError {
    /// The message for the model.
    pub fn message(&self) -> &str {
        match self {
            Self::Diff(message)
            | Self::File(message)
            | Self::Blocked(message)
            | Self::Changed(message) => message,
        }
    }
}

/// Reads the file and computes its new content. `is_final` is false for a streaming preview.
pub fn prepare(request: &EditRequest<'_>, is_final: bool) -> Result<Prepared, PrepareError> {
    let EditRequest {
        kind,
        text,
        workspace,
        verdict,
        display,
        model_id,
    } = *request;
    let existing = write::read_existing(workspace, verdict).map_err(|e| {
        if matches!(e, FsError::Changed { .. }) {
            PrepareError::Changed(e.to_string())
        } else if e.is_blocked() {
            PrepareError::Blocked(e.to_string())
        } else {
            PrepareError::File(format!(
                "Cannot open '{display}': {}.",
                tool_api::texts::clause(&e)
            ))
        }
    })?;
    let existed = existing.is_some();

    if kind != EditKind::ReplaceInFile {
        // The old content does not matter for a whole-file write, whatever its encoding.
        let new_content = apply_model_fixes(&strip_code_fences(text), model_id, display);
        return Ok(Prepared {
            existed,
            new_content,
            start_line_numbers: Vec::new(),
            ui_content: text.to_string(),
        });
    }

    let original = match existing {
        None => String::new(),
        Some(bytes) => String::from_utf8(bytes).map_err(|_| {
            PrepareError::File(format!(
                "Cannot edit '{display}': the file is not UTF-8 text, so SEARCH/REPLACE blocks \
cannot be applied to it. The file was not changed."
            ))
        })?,
    };
    let diff = apply_model_fixes(text, model_id, display);
    let replaced = construct_new_file_content(&diff, &original, is_final).map_err(|error| {
        PrepareError::Diff(format!(
            "{error}\n\n{}",
            texts::diff_error(display, &for_model(display, &original))
        ))
    })?;
    // A final diff that applied no block at all would save the file unchanged and report
    // success (Cline does); the model should hear that its diff was not understood.
    if is_final && replaced.match_indices.is_empty() {
        return Err(PrepareError::Diff(texts::no_block_error(
            display,
            has_search_marker(&diff),
        )));
    }
    Ok(Prepared {
        existed,
        new_content: replaced.new_content,
        start_line_numbers: replaced.start_line_numbers,
        ui_content: diff,
    })
}

/// Writes a prepared edit atomically and returns the result text for the model. A path that
/// changed after the host checked it is `PATH_CHANGED` (nothing written), any other failure
/// `FAILED`.
pub fn commit(request: &EditRequest<'_>, prepared: &Prepared) -> Result<String, ToolError> {
    let display = request.display;
    write::write_atomically(
        request.workspace,
        request.verdict,
        prepared.new_content.as_bytes(),
    )
    .map_err(|e| {
        let state = if prepared.existed {
            "The file was not changed."
        } else {
            "The file was not created."
        };
        let kind = if matches!(e, FsError::Changed { .. }) {
            ToolErrorKind::PATH_CHANGED
        } else {
            ToolErrorKind::FAILED
        };
        ToolError::new(
            kind,
            format!(
                "Failed to save '{display}': {}. {state}",
                tool_api::texts::clause(&e)
            ),
        )
    })?;
    let shown = final_content(&for_model(display, &prepared.new_content));
    Ok(texts::saved(display, &shown))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::fs;
    use std::path::Path;

    /// The workspace of `root` and the verdict on `relative` in it.
    fn at(root: &Path, relative: &str) -> (Workspace, PathVerdict) {
        let workspace = Workspace::new(root).unwrap();
        let verdict = workspace.verdict(relative);
        (workspace, verdict)
    }

    fn request<'a>(
        kind: EditKind,
        text: &'a str,
        (workspace, verdict): &'a (Workspace, PathVerdict),
    ) -> EditRequest<'a> {
        EditRequest {
            kind,
            text,
            workspace,
            verdict,
            display: "f.txt",
            model_id: None,
        }
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_failed_match_leaves_the_file_byte_identical() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("f.txt");
        let at = at(root.path(), "f.txt");
        let original = b"alpha\r\nbeta\r\n\xef\xbb\xbf gamma\n".to_vec();
        fs::write(&target, &original).unwrap();
        let diff = "------- SEARCH\nnot there\n=======\nx\n+++++++ REPLACE";
        let error = prepare(&request(EditKind::ReplaceInFile, diff, &at), true).unwrap_err();
        let expected_help = texts::diff_error("f.txt", "alpha\r\nbeta\r\n\u{FEFF} gamma\n");
        assert_eq!(
            error,
            PrepareError::Diff(format!(
                "The SEARCH block:\nnot there\n...does not match anything in the file.\n\n{expected_help}"
            ))
        );
        assert_eq!(fs::read(&target).unwrap(), original);
        assert_eq!(entries(root.path()), vec!["f.txt"]);
    }

    #[test]
    fn a_failed_edit_of_a_missing_file_creates_nothing() {
        let root = tempfile::tempdir().unwrap();
        let at = at(root.path(), "new/dir/f.txt");
        let diff = "------- SEARCH\nsomething\n=======\nx\n+++++++ REPLACE";
        let error = prepare(&request(EditKind::ReplaceInFile, diff, &at), true).unwrap_err();
        assert_eq!(
            error,
            PrepareError::Diff(format!(
                "The SEARCH block:\nsomething\n...does not match anything in the file.\n\n{}",
                texts::diff_error("f.txt", "")
            ))
        );
        assert_eq!(entries(root.path()), Vec::<String>::new());
    }

    #[test]
    fn an_edit_is_written_as_computed_and_reported_normalised() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("f.txt");
        let at = at(root.path(), "f.txt");
        fs::write(&target, "one\r\ntwo\r\nthree\r\n").unwrap();
        let diff = "------- SEARCH\ntwo\n=======\n2\n+++++++ REPLACE";
        let req = request(EditKind::ReplaceInFile, diff, &at);
        let prepared = prepare(&req, true).unwrap();
        assert_eq!(
            prepared,
            Prepared {
                existed: true,
                new_content: "one\r\n2\nthree\r\n".to_string(),
                start_line_numbers: vec![2],
                ui_content: diff.to_string(),
            }
        );
        let text = commit(&req, &prepared).unwrap();
        // On disk: exactly the new content. To the model: line endings unified.
        assert_eq!(fs::read(&target).unwrap(), b"one\r\n2\nthree\r\n");
        assert_eq!(text, texts::saved("f.txt", "one\r\n2\r\nthree\r\n"));
    }

    #[test]
    fn a_new_file_is_created_with_its_parents() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("src/deep/f.txt");
        let at = at(root.path(), "src/deep/f.txt");
        let req = request(EditKind::WriteToFile, "```rust\nfn main() {}\n```", &at);
        let prepared = prepare(&req, true).unwrap();
        assert_eq!(
            prepared,
            Prepared {
                existed: false,
                new_content: "fn main() {}".to_string(),
                start_line_numbers: vec![],
                ui_content: "```rust\nfn main() {}\n```".to_string(),
            }
        );
        let text = commit(&req, &prepared).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "fn main() {}");
        assert_eq!(text, texts::saved("f.txt", "fn main() {}\n"));
    }

    #[test]
    fn an_empty_search_creates_a_missing_file() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("f.txt");
        let at = at(root.path(), "f.txt");
        let req = request(
            EditKind::ReplaceInFile,
            "------- SEARCH\n=======\nhello\n+++++++ REPLACE",
            &at,
        );
        let prepared = prepare(&req, true).unwrap();
        assert_eq!(
            (prepared.existed, prepared.new_content.as_str()),
            (false, "hello\n")
        );
        commit(&req, &prepared).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "hello\n");
    }

    #[test]
    fn an_empty_content_writes_an_empty_file() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("f.txt");
        let at = at(root.path(), "f.txt");
        fs::write(&target, "old").unwrap();
        let req = request(EditKind::WriteToFile, "", &at);
        let prepared = prepare(&req, true).unwrap();
        let text = commit(&req, &prepared).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"");
        assert_eq!(text, texts::saved("f.txt", ""));
    }

    #[test]
    fn non_utf8_files_are_not_edited() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("f.txt");
        let at = at(root.path(), "f.txt");
        fs::write(&target, b"caf\xe9\n").unwrap();
        let diff = "------- SEARCH\ncaf\n=======\ntea\n+++++++ REPLACE";
        let error = prepare(&request(EditKind::ReplaceInFile, diff, &at), true).unwrap_err();
        assert_eq!(
            error,
            PrepareError::File(
                "Cannot edit 'f.txt': the file is not UTF-8 text, so SEARCH/REPLACE blocks cannot be applied to it. The file was not changed.".to_string()
            )
        );
        assert_eq!(fs::read(&target).unwrap(), b"caf\xe9\n");
    }

    #[test]
    fn a_failed_write_reports_and_changes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("f.txt");
        let at = at(root.path(), "f.txt");
        fs::write(&target, "keep").unwrap();
        let mut permissions = fs::metadata(&target).unwrap().permissions();
        permissions.set_readonly(true);
        fs::set_permissions(&target, permissions).unwrap();
        let req = request(EditKind::WriteToFile, "new", &at);
        let prepared = prepare(&req, true).unwrap();
        assert_eq!(
            commit(&req, &prepared).map_err(|e| e.message.to_string()),
            Err(
                "Failed to save 'f.txt': the file is read-only. The file was not changed."
                    .to_string()
            )
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn a_diff_that_applies_no_block_is_an_error_and_changes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("f.txt");
        let at = at(root.path(), "f.txt");
        fs::write(&target, "a\nb\n").unwrap();
        for (diff, has_markers) in [
            // No markers at all: prose, a bare replacement, a blank line.
            ("just make b uppercase", false),
            ("-b\n+B", false),
            ("\n", false),
            // Markers, but no block is complete.
            ("------- SEARCH\nb", true),
            ("------- SEARCH\nb\n==", true),
        ] {
            let error = prepare(&request(EditKind::ReplaceInFile, diff, &at), true).unwrap_err();
            assert_eq!(
                error,
                PrepareError::Diff(texts::no_block_error("f.txt", has_markers)),
                "{diff:?}"
            );
            // While streaming, such a diff is only an incomplete preview.
            assert!(prepare(&request(EditKind::ReplaceInFile, diff, &at), false).is_ok());
        }
        let message = texts::no_block_error("f.txt", false);
        assert!(message.starts_with("The diff contains no SEARCH/REPLACE block"));
        assert!(message.contains("\n------- SEARCH\nlines copied exactly from the file\n=======\n"));
        assert_eq!(fs::read_to_string(&target).unwrap(), "a\nb\n");
        assert_eq!(entries(root.path()), vec!["f.txt"]);
    }

    #[test]
    fn kinds_follow_the_tool_names() {
        assert_eq!(
            ["write_to_file", "replace_in_file", "new_rule", "read_file"].map(EditKind::from_name),
            [
                Some(EditKind::WriteToFile),
                Some(EditKind::ReplaceInFile),
                Some(EditKind::NewRule),
                None
            ]
        );
    }
}
