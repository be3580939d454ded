//! A call's outcome as the result `toolhost mcp` answers.
//!
//! A relayed MCP result is answered as it came: when a tool passes on another MCP server's
//! `tools/call` result (use_mcp_tool and the servers' native tools), `toolhost mcp` answers with
//! that server's content blocks (resource links, embedded resources, audio, annotations),
//! `structuredContent` and `isError`, rather than with the text made for a model.

use rmcp::model::{CallToolResult, ContentBlock};

use crate::call::CallOutcome;

/// A call's outcome as an MCP result: a relayed MCP server's result as it came
/// ([`relayed`]), else the model's text, then the images.
pub fn call_result(outcome: &CallOutcome) -> CallToolResult {
    if let Some(relayed) = relayed(outcome) {
        return relayed;
    }
    let text = outcome.unattended_text();
    let images = outcome.images();
    let mut content = Vec::with_capacity(1 + images.len());
    if !text.is_empty() || images.is_empty() {
        content.push(ContentBlock::text(text));
    }
    content.extend(
        images
            .into_iter()
            .map(|image| ContentBlock::image(image.data, image.media_type)),
    );
    if outcome.is_error() {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

/// The outcome's relayed MCP result, with the note of a hook's cancel of the task after it;
/// `None` when the tool relayed none (or it does not read as an MCP result: the outcome's text
/// is answered then).
fn relayed(outcome: &CallOutcome) -> Option<CallToolResult> {
    let mut relayed = outcome.mcp_result()?.clone();
    complete(&mut relayed);
    let mut result = match serde_json::from_value::<CallToolResult>(relayed) {
        Ok(result) => result,
        Err(e) => {
            tracing::warn!(target: "toolhost::mcp", "the MCP result {} relayed is not one ({e}); its text is answered", outcome.tool);
            return None;
        }
    };
    result.is_error = Some(outcome.is_error());
    if let Some(cancelled) = &outcome.task_cancelled {
        result.content.push(ContentBlock::text(cancelled.note()));
    }
    Some(result)
}

/// Marks a result made from JSON (a plugin's, a relayed server's) as complete, as every
/// 2026-07-28 result must say (`resultType`), unless it says otherwise.
pub fn complete(result: &mut serde_json::Value) {
    if let Some(object) = result.as_object_mut() {
        object
            .entry("resultType")
            .or_insert_with(|| serde_json::Value::from("complete"));
    }
}
