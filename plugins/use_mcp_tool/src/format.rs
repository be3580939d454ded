//! The text and images the model gets from MCP results, and the 400 KiB cap.

use serde_json::Value;
use tool_api::model::ContentBlock;

use crate::texts;

/// The most UTF-16 code units a result keeps (Cline's `truncateContent(s, 409600)`).
pub const MAX_CONTENT_UNITS: usize = 409_600;

/// A `tools/call` result as Cline shows it: the text and the images (base64 with MIME type).
#[derive(Debug, Clone, PartialEq)]
pub struct Formatted {
    /// The text the model reads.
    pub text: String,
    /// The images, as image blocks.
    pub images: Vec<ContentBlock>,
}

/// Formats the `content` array and `isError` flag of a `tools/call` result: text items as they
/// are, embedded resources as pretty JSON without their `blob`, other kinds dropped, all joined
/// by blank lines; images collected separately.
pub fn tool_result(content: &[Value], is_error: bool) -> Formatted {
    let mut images = Vec::new();
    let mut parts = Vec::new();
    for item in content {
        match item.get("type").and_then(Value::as_str) {
            Some("text") => parts.push(
                item.get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            ),
            Some("resource") => {
                let mut resource = item.get("resource").cloned().unwrap_or(Value::Null);
                if let Some(map) = resource.as_object_mut() {
                    map.remove("blob");
                }
                parts.push(serde_json::to_string_pretty(&resource).unwrap_or_default());
            }
            Some("image") => {
                let field = |key: &str| {
                    item.get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                images.push(ContentBlock::Image {
                    media_type: field("mimeType"),
                    data: field("data"),
                });
            }
            _ => {}
        }
    }
    let joined = parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let text = if is_error {
        format!("Error:\n{joined}")
    } else if joined.is_empty() {
        texts::NO_RESPONSE.to_string()
    } else {
        joined
    };
    Formatted { text, images }
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
    fn texts_resources_and_images() {
        let content = [
            json!({"type": "text", "text": "Sunny"}),
            json!({"type": "text", "text": ""}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"type": "resource", "resource": {"uri": "x://a", "text": "hi", "blob": "QQ=="}}),
            json!({"type": "audio", "data": "BBBB", "mimeType": "audio/wav"}),
        ];
        assert_eq!(
            tool_result(&content, false),
            Formatted {
                text: "Sunny\n\n{\n  \"uri\": \"x://a\",\n  \"text\": \"hi\"\n}".to_string(),
                images: vec![ContentBlock::Image {
                    media_type: "image/png".into(),
                    data: "AAAA".into()
                }],
            }
        );
    }

    #[test]
    fn empty_results_and_errors() {
        assert_eq!(tool_result(&[], false).text, "(No response)");
        assert_eq!(tool_result(&[], true).text, "Error:\n");
        let failed = [json!({"type": "text", "text": "boom"})];
        assert_eq!(tool_result(&failed, true).text, "Error:\nboom");
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
