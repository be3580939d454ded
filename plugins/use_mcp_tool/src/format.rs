//! The text and images the model gets from MCP results, and the 400 KiB cap.

use serde_json::Value;

use crate::texts;

/// The most UTF-16 code units a result keeps (Cline's `truncateContent(s, 409600)`).
pub const MAX_CONTENT_UNITS: usize = 409_600;

/// A `tools/call` result as the model reads it ([`tool_api::sdk::mcp_result::model_view`]).
pub use tool_api::sdk::mcp_result::{model_view as tool_result, ModelView as Formatted};

/// The result as `toolhost mcp` relays it: the server's `content` (each text cut as the
/// model's text is), `structuredContent` and `isError`; nothing else of the answer. `None`
/// when its text beyond the media data (images, audio, blobs) is over the cap: the cut text
/// made for the model goes out then, as the cap is there to keep a server from flooding the
/// client's context.
pub fn relayed(result: &Value) -> Option<Value> {
    let mut content = result["content"].as_array().cloned().unwrap_or_default();
    for item in &mut content {
        if item["type"] == "text" {
            if let Some(text) = item["text"].as_str() {
                item["text"] = Value::String(truncate(text.to_string()));
            }
        }
    }
    let mut relayed = serde_json::json!({
        "content": content,
        "isError": result["isError"].as_bool().unwrap_or(false),
    });
    if let Some(structured) = result.get("structuredContent").filter(|s| !s.is_null()) {
        relayed["structuredContent"] = structured.clone();
    }
    (textual_size(&relayed) <= MAX_CONTENT_UNITS).then_some(relayed)
}

/// The length of `value`'s JSON without the media data of its items.
fn textual_size(value: &Value) -> usize {
    let mut bare = value.clone();
    if let Some(items) = bare["content"].as_array_mut() {
        for item in items {
            for pointer in ["/data", "/resource/blob"] {
                if let Some(data) = item.pointer_mut(pointer) {
                    *data = Value::Null;
                }
            }
        }
    }
    bare.to_string().len()
}

/// The text of a `resources/read` result: every item's `text` (blobs skipped), joined by blank
/// lines, or `(Empty response)`.
pub fn resource_result(contents: &[Value]) -> String {
    let text = contents
        .iter()
        .filter_map(|item| item.get("text").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    if text.is_empty() {
        texts::EMPTY_RESPONSE.to_string()
    } else {
        text
    }
}

/// Cuts text longer than [`MAX_CONTENT_UNITS`] UTF-16 code units and appends Cline's notice.
pub fn truncate(text: String) -> String {
    tool_api::texts::truncate_with_notice(text, MAX_CONTENT_UNITS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resources_without_text_are_empty() {
        assert_eq!(
            resource_result(&[json!({"uri": "x", "blob": "AA"})]),
            "(Empty response)"
        );
        assert_eq!(
            resource_result(&[json!({"text": "a"}), json!({"text": "b"})]),
            "a\n\nb"
        );
    }

    #[test]
    fn long_content_is_cut_with_a_notice() {
        assert_eq!(truncate("short".to_string()), "short");
        let capped = truncate("é".repeat(MAX_CONTENT_UNITS + 1024));
        assert_eq!(
            capped,
            format!(
                "{}\n\n---\n\n[FILE TRUNCATED: This content is 401.0 KB but only the first 400.0 KB is shown (1.0 KB truncated). Use search_files to find specific patterns, or execute_command with grep/head/tail for targeted reading.]",
                "é".repeat(MAX_CONTENT_UNITS)
            )
        );
    }
}
