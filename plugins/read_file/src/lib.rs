//! The `read_file` tool: a file's text with line numbers, a line range, and a continuation hint.
//!
//! Behaviour follows Cline's: 1000 lines per read unless a range is given, a 400 KiB cap on the
//! text, images as image blocks, notebooks without their outputs, binary files refused, and a
//! note when the model reads the same unchanged file again.

mod extract;
mod format;

pub use extract::{extract, Extracted};
pub use format::{format_numbered, Numbered, DEFAULT_WINDOW};

use serde_json::json;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str =
    "Read the contents of a file at the given path. Use it to examine a file \
whose contents you do not know, for example to analyse code, review text or take information \
from configuration. Lines come prefixed with their numbers (`12 | text`). At most 1000 lines are \
returned per call; use start_line and end_line to read other parts of a long file. Text is \
extracted from Jupyter notebooks; images are returned as images when the model supports them. \
Binary files are refused.";

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
        .read_only()]
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
                ToolContent {
                    content: vec![
                        ContentBlock::Text {
                            text: format!("{prefix}Successfully read image"),
                        },
                        ContentBlock::Image { media_type, data },
                    ],
                }
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
tool_api::export_plugin!();
