//! The `read_file` tool: a file's text with line numbers, a line range, and a continuation hint.
//!
//! Behaviour follows Cline's: 1000 lines per read unless a range is given, a 400 KiB cap on
//! what one read returns, the text of PDF, DOCX and XLSX documents ([`documents`]), images as
//! image blocks, notebooks without their outputs, binary files refused, and a note when the
//! model reads the same unchanged file again. While a call streams, the file about to be read
//! is shown (Cline's partial `readFile` message).
//!
//! Deliberate differences from Cline:
//! - The range comes first, then the cap, then the hint ([`format_numbered`]): any part of a
//!   large file can be read, and a capped read still says where to continue. Cline capped the
//!   whole file's text at 400 KB before slicing the range.
//! - Documents are read within limits ([`documents::Limits`]: file size, decompressed size,
//!   text size, time); their text differs from Cline's in the details the [`documents`]
//!   modules list.

pub mod documents;
mod extract;
mod format;
mod limits;

pub use extract::{extract, Extracted};
pub use format::{format_capped, format_numbered, Numbered, DEFAULT_WINDOW, MAX_TEXT_UNITS};
pub use limits::MAX_FILE_BYTES;

use serde_json::json;
use tool_api::sdk::js::strip_partial_closing_tag;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str =
    "Read the contents of a file at the given path. Use it to examine a file \
whose contents you do not know, for example to analyse code, review text or take information \
from configuration. Lines come prefixed with their numbers (`12 | text`). At most 1000 lines are \
returned per call; use start_line and end_line to read other parts of a long file. Text is \
extracted from PDF, DOCX and XLSX documents and from Jupyter notebooks; images are returned as \
images when the model supports them. Binary files are refused.";

/// The read_file tool.
#[derive(Debug, Default)]
pub struct ReadFile;

impl Tool for ReadFile {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "read_file",
            DESCRIPTION,
            &[
                (
                    "path",
                    "The path of the file to read, relative to the current working directory.",
                    true,
                ),
                (
                    "start_line",
                    "The first line to read, 1-based (default 1).",
                    false,
                ),
                (
                    "end_line",
                    "The last line to read, inclusive (default: start_line + 999).",
                    false,
                ),
            ],
        )
        .approval(ApprovalCategory::Read)
        .path_params(&["path"])
        .with_partial()
        .read_only()
        .title("Read file")
        .idempotent()]
    }

    /// While the call streams: the file about to be read (Cline's partial `readFile` message),
    /// as a `say` when the read will be auto-approved, else as an `ask`. Nothing is read.
    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        if call.task.is_subagent {
            return Ok(());
        }
        let raw = call.params.string_or_empty("path");
        let path = strip_partial_closing_tag(&raw, "path");
        if path.is_empty() {
            return Ok(());
        }
        let verdict = ctx.check_path(path)?;
        if verdict.ignored {
            return Ok(());
        }
        let message = json!({
            "tool": "readFile",
            "path": verdict.display,
            "operationIsLocatedInWorkspace": verdict.inside_workspace,
        })
        .to_string();
        if ctx.auto_approves(ApprovalCategory::Read, verdict.inside_workspace) {
            ctx.say_partial("tool", &message);
        } else {
            ctx.ask_partial("tool", &message);
        }
        Ok(())
    }

    fn describe(&self, call: &Call) -> String {
        format!("[read_file for '{}']", call.params.string_or_empty("path"))
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let path = call.params.required_nonblank("path")?;
        let verdict = ctx.check_path(&path)?;
        let supports_images = ctx.setting::<bool>("model.supports_images").unwrap_or(true);
        let failed = |message: String| {
            ToolError::new(
                ToolErrorKind::FAILED,
                format!("Error reading file: {message}"),
            )
        };
        let mut file = match ctx.workspace().open_file(&verdict) {
            Ok(file) => file,
            Err(FsError::NotFound) => {
                return Err(failed(format!("File not found: {}", verdict.absolute)))
            }
            Err(FsError::IsADirectory) => {
                return Err(failed(
                    "EISDIR: illegal operation on a directory, read".to_string(),
                ))
            }
            Err(e) if e.is_blocked() => return Err(e.into()),
            Err(e) => return Err(failed(e.to_string())),
        };
        let extracted = extract(
            &mut file,
            std::path::Path::new(&verdict.absolute),
            supports_images,
            &|| ctx.is_cancelled(),
        )
        .map_err(failed)?;
        let mtime_ms = file.modified_ms();
        let reads = ctx.record_file_read(&verdict.absolute, mtime_ms);
        let prefix = repeat_prefix(reads, &verdict.display);

        let mut ui = json!({
            "tool": "readFile",
            "path": verdict.display,
            "content": verdict.absolute,
            "operationIsLocatedInWorkspace": verdict.inside_workspace,
        });
        let content = match extracted {
            Extracted::Image { media_type, data } => {
                ctx.say("tool", &ui.to_string());
                ToolContent::blocks(vec![
                    ContentBlock::Text {
                        text: format!("{prefix}Successfully read image"),
                    },
                    ContentBlock::Image { media_type, data },
                ])
            }
            Extracted::Text(text) => {
                let numbered = format_numbered(
                    &text,
                    call.params.int("start_line"),
                    call.params.int("end_line"),
                );
                if let Some((start, end)) = numbered.displayed_range {
                    ui["readLineStart"] = json!(start);
                    ui["readLineEnd"] = json!(end);
                }
                ctx.say("tool", &ui.to_string());
                ToolContent::text(format!("{prefix}{}", numbered.text))
            }
        };
        Ok(content)
    }
}

/// The note before the content when the model reads an unchanged file again.
fn repeat_prefix(reads: u32, display_path: &str) -> String {
    match reads {
        0 | 1 => String::new(),
        2 => format!(
            "[File already read] The file '{display_path}' was already read earlier in this conversation. Returning content:\n"
        ),
        n => format!(
            "[DUPLICATE READ] You have already read '{display_path}' {n} times in this conversation. The content has not changed since your last read. Please use the information you already have and proceed with your task.\n"
        ),
    }
}

tool_api::submit_tool!(ReadFile);
tool_api::export_plugin!(
    capabilities: [
        "partial",
        tool_api::model::access::FS_FULL,
        "toolset:cline-legacy",
    ]
);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use tool_api::sdk::testing::{Preview, TestHost};

    fn message(path: &str, inside: bool) -> String {
        json!({"tool": "readFile", "path": path, "operationIsLocatedInWorkspace": inside})
            .to_string()
    }

    #[test]
    fn a_streaming_read_shows_the_file_and_reads_nothing() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("notes.txt"), "one\n").unwrap();
        std::fs::write(ws.path().join(".clineignore"), "secret.txt\n").unwrap();
        let host = TestHost::new(ws.path());
        for params in [
            json!({}),
            json!({"path": ""}),
            json!({"path": "notes.txt</pa"}),
            json!({"path": "secret.txt"}),
        ] {
            host.partial(&ReadFile, "read_file", params).unwrap();
        }
        // Reads inside the workspace are auto-approved by default: a partial say.
        assert_eq!(
            host.previews(),
            [Preview::Say("tool".into(), message("notes.txt", true))]
        );
        assert!(host.said().is_empty(), "a partial call reports nothing");

        // Not auto-approved: a partial ask, outside the workspace too.
        let asking =
            TestHost::new(ws.path()).with_settings(json!({"auto_approve": {"read_files": false}}));
        asking
            .partial(&ReadFile, "read_file", json!({"path": "notes.txt"}))
            .unwrap();
        let outside = TestHost::new(ws.path());
        outside
            .partial(&ReadFile, "read_file", json!({"path": "/etc/hostname"}))
            .unwrap();
        assert_eq!(
            [asking.previews(), outside.previews()].concat(),
            [
                Preview::Ask("tool".into(), message("notes.txt", true)),
                Preview::Ask("tool".into(), message("/etc/hostname", false)),
            ]
        );

        // A subagent's call shows nothing.
        let subagent = TestHost::new(ws.path()).as_subagent();
        subagent
            .partial(&ReadFile, "read_file", json!({"path": "notes.txt"}))
            .unwrap();
        assert!(subagent.previews().is_empty());
        assert!(ReadFile.specs()[0].partial);
    }
}
