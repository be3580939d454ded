//! The `editor` tool of Cline's SDK tool set (the `cline-sdk` tool set's act preset): replaces
//! `old_text` with `new_text` where it occurs exactly once, inserts `new_text` before line
//! `insert_line`, or creates a missing file with `new_text`. Its answer is one operation
//! result (`{"query", "result", "success"}`, or `"error"` when the edit was not made).
//!
//! Reading and writing go through the workspace capability (the file the host's verdict
//! names, written atomically); the host checks the path (boundary, `.clineignore`, approval
//! in the `edit` category) before the call runs.
//!
//! Deliberate differences from Cline's SDK executor:
//! - A relative path is the workspace's, and a path outside it is asked about, as for every
//!   tool here; Cline refuses a relative path outside its cwd and writes absolute ones anywhere.
//! - A file that is not UTF-8 is refused rather than decoded lossily and written back.

mod diff;
mod edit;

use serde_json::{json, Value};
use tool_api::sdk::operation::OperationResult;
use tool_api::sdk::prelude::*;

pub use edit::{apply, Edit, Outcome, INPUT_LIMIT};

const DESCRIPTION: &str = "An editor for controlled filesystem edits on the text file at the provided path. Provide `insert_line` to insert `new_text` at a specific line number. Otherwise, the tool replaces `old_text` with `new_text`, or creates the file with `new_text` if file does not exist. Use this tool for making small, precise edits to existing files or creating new files over shell commands. If several edits to different files or non-overlapping regions are already known, emit multiple editor tool calls in the same response instead of serializing them across turns.";

/// The tool's input schema, as Cline's SDK shows it to the model.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "The absolute path for the action to be performed on"
            },
            "old_text": {
                "description": format!("Exact text to replace (must match exactly once). Omit this when creating a missing file or inserting via insert_line. Keep this at or below {INPUT_LIMIT} characters when possible; larger payloads should be split across multiple tool calls to avoid timeouts."),
                "anyOf": [{"type": "string"}, {"type": "null"}]
            },
            "new_text": {
                "type": "string",
                "description": format!("The new content to write when creating a missing file, the replacement text for edits, or the inserted text when insert_line is provided. Keep this at or below {INPUT_LIMIT} characters when possible; for large edits, use multiple calls with small chunks of old_text and new_text to iteratively edit the file.")
            },
            "insert_line": {
                "description": "Optional positive one-based boundary line. When provided, the tool inserts new_text before that line instead of performing a replacement edit; use line_count + 1 to append at EOF.",
                "anyOf": [
                    {"type": "integer", "minimum": -9007199254740991_i64, "maximum": 9007199254740991_i64},
                    {"type": "null"}
                ]
            }
        },
        "required": ["path", "new_text"],
        "additionalProperties": false,
        "description": "Edit a text file by replacing old_text with new_text, create the file with new_text if it does not exist, or insert new_text at insert_line when insert_line is provided. Prefer using this tool for file edits over shell commands. IMPORTANT: large edits can time out, so use small chunks and multiple calls when possible."
    })
}

/// The editor tool.
#[derive(Debug, Default)]
pub struct Editor;

impl Tool for Editor {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut spec = ToolSpec::simple("editor", DESCRIPTION, &[])
            .approval(ApprovalCategory::Edit)
            .path_params(&["path"])
            .destructive()
            .title("Editor")
            .checks_own_params();
        spec.input_schema = input_schema();
        vec![spec]
    }

    fn describe(&self, call: &Call) -> String {
        format!("[editor for '{}']", call.params.string_or_empty("path"))
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let edit = Edit::from_params(&call.params)?;
        let query = edit.query();
        let result = match edit.too_large() {
            Some(error) => OperationResult::failure(query, error),
            None => {
                let verdict = ctx.check_path(&edit.path)?;
                match apply(ctx.workspace(), &verdict, &edit) {
                    Ok(outcome) => {
                        ctx.forget_file_read(&verdict.absolute);
                        ctx.forget_file_read(&verdict.resolved);
                        OperationResult::success(query, outcome.text)
                    }
                    Err(why) => {
                        OperationResult::failure(query, format!("Editor operation failed: {why}"))
                    }
                }
            }
        };
        Ok(ToolContent::text(OperationResult::to_json(&result)))
    }
}

tool_api::submit_tool!(Editor);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        "needs:toolset_conditions",
        // Cline's model routing: GPT and Codex models get apply_patch instead in act mode.
        "toolset:cline-sdk@act?!model~codex,gpt|provider~openai-native",
        "toolset:cline-sdk@yolo",
        "toolset:cline-sdk@default?!model~codex,gpt|provider~openai-native",
    ]
);
