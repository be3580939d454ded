//! The text and images the model gets from MCP results, and the 400 KiB cap.

use serde_json::Value;
use tool_api::model::ContentBlock;

use crate::texts;

/// The most UTF-16 code units a result keeps (Cline's `truncateContent(s, 409600)`).
pub const MAX_CONTENT_UNITS: usize = 409_600;

/// A `tools/call` result as the model reads it: the text, the images (base64 with MIME type),
/// and whether the server reported an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Formatted {
    /// The text the model reads.
    pub text: String,
    /// The images, as image blocks.
    pub images: Vec<ContentBlock>,
    /// The server's `isError`.
    pub is_error: bool,
}

/// Formats a `tools/call` result, Cline's way where Cline keeps something: text items as they
/// are, embedded resources as pretty JSON without their `blob`, images collected separately,
/// all joined by blank lines. Beyond Cline, which drops them: resource links as pretty JSON,
/// an audio item as a line naming it, each item's annotations on a line after it, and
/// `structuredContent` as pretty JSON unless a text item already holds the same JSON (the
/// specification asks servers to echo it so). An empty success is `(No response)`; an error's
/// text is the error's message.
pub fn tool_result(result: &Value) -> Formatted {
    let content = result["content"].as_array().map_or(&[][..], Vec::as_slice);
    let mut images = Vec::new();
    let mut parts = Vec::new();
    for item in content {
        let field = |key: &str| item[key].as_str().unwrap_or_default().to_string();
        let part = match item["type"].as_str() {
            Some("text") => field("text"),
            Some("resource") => {
                let mut resource = item["resource"].clone();
                if let Some(map) = resource.as_object_mut() {
                    map.remove("blob");
                }
                pretty(&resource)
            }
            Some("resource_link") => {
                let mut link = item.clone();
                if let Some(map) = link.as_object_mut() {
                    map.remove("type");
                    map.remove("annotations");
                }
                pretty(&link)
            }
            Some("image") => {
                images.push(ContentBlock::Image {
                    media_type: field("mimeType"),
                    data: field("data"),
                });
                String::new()
            }
            Some("audio") => texts::audio_not_shown(&field("mimeType")),
            _ => String::new(),
        };
        parts.push(match item.get("annotations").filter(|a| !a.is_null()) {
            Some(annotations) => texts::with_annotations(&part, &annotations.to_string()),
            None => part,
        });
    }
    let structured = result
        .get("structuredContent")
        .filter(|s| !s.is_null() && !echoed(content, s));
    if let Some(structured) = structured {
        parts.push(texts::structured_content(&pretty(structured)));
    }
    let joined = parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let is_error = result["isError"].as_bool().unwrap_or(false);
    let text = if is_error && joined.is_empty() {
        texts::ERROR_WITHOUT_TEXT.to_string()
    } else if joined.is_empty() {
        texts::NO_RESPONSE.to_string()
    } else {
        joined
    };
    Formatted {
        text,
        images,
        is_error,
    }
}

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

/// Whether a text item of `content` already says `structured`: it is its JSON, or the value
/// of the one-key object the SDKs wrap a tool's non-object output in (`{"result": …}`), as
/// that text or its JSON.
fn echoed(content: &[Value], structured: &Value) -> bool {
    let wrapped = structured
        .as_object()
        .filter(|map| map.len() == 1)
        .and_then(|map| map.values().next());
    content.iter().any(|item| {
        let Some(text) = item["text"].as_str().filter(|_| item["type"] == "text") else {
            return false;
        };
        let parsed = serde_json::from_str::<Value>(text).ok();
        parsed.as_ref() == Some(structured)
            || wrapped
                .is_some_and(|value| value.as_str() == Some(text) || parsed.as_ref() == Some(value))
    })
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
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
        let result = json!({"content": [
            json!({"type": "text", "text": "Sunny"}),
            json!({"type": "text", "text": ""}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"type": "resource", "resource": {"uri": "x://a", "text": "hi", "blob": "QQ=="}}),
            json!({"type": "audio", "data": "BBBB", "mimeType": "audio/wav"}),
        ]});
        assert_eq!(
            tool_result(&result),
            Formatted {
                text: format!(
                    "Sunny\n\n{{\n  \"uri\": \"x://a\",\n  \"text\": \"hi\"\n}}\n\n{}",
                    texts::audio_not_shown("audio/wav")
                ),
                images: vec![ContentBlock::Image {
                    media_type: "image/png".into(),
                    data: "AAAA".into()
                }],
                is_error: false,
            }
        );
    }

    #[test]
    fn structured_content_is_shown_once() {
        let structured = json!({"a": 1});
        let echoed = json!({"content": [{"type": "text", "text": "{\"a\": 1}"}], "structuredContent": structured});
        assert_eq!(tool_result(&echoed).text, "{\"a\": 1}");
        let wrapped = json!({"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": "42"}});
        assert_eq!(tool_result(&wrapped).text, "42");
        let alone = json!({"content": [], "structuredContent": structured});
        assert_eq!(
            tool_result(&alone).text,
            texts::structured_content("{\n  \"a\": 1\n}")
        );
    }

    #[test]
    fn empty_results_and_errors() {
        assert_eq!(tool_result(&json!({"content": []})).text, "(No response)");
        let empty_error = tool_result(&json!({"content": [], "isError": true}));
        assert_eq!(empty_error.text, texts::ERROR_WITHOUT_TEXT);
        assert!(empty_error.is_error);
        let failed = json!({"content": [{"type": "text", "text": "boom"}], "isError": true});
        assert_eq!(tool_result(&failed).text, "boom");
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
