//! Results as an MCP tool answers them ([`McpResult`]): text, images, audio, embedded
//! resources, resource links, `structuredContent`. A tool that builds one answers
//! `toolhost mcp`'s clients with those structures as they are (the result's `mcp_result`),
//! and every other frontend, and the model, with their text ([`model_view`]).

use serde_json::{json, Value};

use crate::model::{ContentBlock, ToolContent};
use crate::texts;

/// An MCP `tools/call` result being built.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpResult {
    content: Vec<Value>,
    structured: Option<Value>,
    is_error: bool,
}

impl McpResult {
    /// An empty result.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a text block.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.block(json!({"type": "text", "text": text.into()}))
    }

    /// Adds an image (`data` base64, `mime_type` like `image/png`).
    pub fn image(self, mime_type: &str, data: impl Into<String>) -> Self {
        self.block(json!({"type": "image", "mimeType": mime_type, "data": data.into()}))
    }

    /// Adds audio (`data` base64, `mime_type` like `audio/wav`).
    pub fn audio(self, mime_type: &str, data: impl Into<String>) -> Self {
        self.block(json!({"type": "audio", "mimeType": mime_type, "data": data.into()}))
    }

    /// Adds an embedded resource holding text.
    pub fn resource_text(self, uri: &str, mime_type: &str, text: impl Into<String>) -> Self {
        let resource = json!({"uri": uri, "mimeType": mime_type, "text": text.into()});
        self.block(json!({"type": "resource", "resource": resource}))
    }

    /// Adds an embedded resource holding bytes (`blob` base64).
    pub fn resource_blob(self, uri: &str, mime_type: &str, blob: impl Into<String>) -> Self {
        let resource = json!({"uri": uri, "mimeType": mime_type, "blob": blob.into()});
        self.block(json!({"type": "resource", "resource": resource}))
    }

    /// Adds a link to a resource the client may read.
    pub fn resource_link(self, uri: &str, name: &str, mime_type: Option<&str>) -> Self {
        let mut link = json!({"type": "resource_link", "uri": uri, "name": name});
        if let Some(mime_type) = mime_type {
            link["mimeType"] = json!(mime_type);
        }
        self.block(link)
    }

    /// Adds any MCP content block as JSON (one with annotations, say).
    pub fn block(mut self, block: Value) -> Self {
        self.content.push(block);
        self
    }

    /// Sets `structuredContent` (what the tool's output schema describes).
    pub fn structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// Marks the result as the tool's failure (`isError`).
    pub fn error(mut self) -> Self {
        self.is_error = true;
        self
    }

    /// The result as a tool returns it: its text and images for the model, and the MCP
    /// result itself.
    pub fn into_content(self) -> ToolContent {
        let mut result = json!({"content": self.content, "isError": self.is_error});
        if let Some(structured) = self.structured {
            result["structuredContent"] = structured;
        }
        let view = model_view(&result);
        let mut blocks = vec![ContentBlock::Text { text: view.text }];
        blocks.extend(view.images);
        let mut content = ToolContent::blocks(blocks);
        content.is_error = view.is_error;
        content.mcp_result = Some(result);
        content
    }
}

/// What a tool needs of the client before it can answer, as a 2026-07-28 MCP tool says it
/// (SEP-2322's `InputRequiredResult`): requests by key (a form, a sampled message, the
/// client's roots) and a state of the tool's own. The client answers and calls the tool
/// again with the same arguments; the tool then finds the answers and its state in
/// [`crate::model::TaskContext::mcp`]. A client that cannot do that (an older MCP client, the
/// command line, a model's agent loop) is answered by the host: it asks its user or its
/// client each request and calls the tool again itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRequired {
    requests: serde_json::Map<String, Value>,
    state: Option<String>,
}

impl InputRequired {
    /// No request yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the user to fill in a form (`schema`: MCP's `requestedSchema`, primitive fields).
    pub fn elicit(self, key: &str, message: &str, schema: Value) -> Self {
        let params = json!({"message": message, "requestedSchema": schema});
        self.request(key, "elicitation/create", params)
    }

    /// Asks the client's model for a message (`params`: `sampling/createMessage`'s).
    pub fn sample(self, key: &str, params: Value) -> Self {
        self.request(key, "sampling/createMessage", params)
    }

    /// Asks for the client's roots.
    pub fn list_roots(self, key: &str) -> Self {
        self.request(key, "roots/list", json!({}))
    }

    /// Adds any MCP request a server may send its client.
    pub fn request(mut self, key: &str, method: &str, params: Value) -> Self {
        self.requests
            .insert(key.to_string(), json!({"method": method, "params": params}));
        self
    }

    /// Sets the state that comes back with the answers. The host signs it, so the client
    /// cannot change it, and binds it to this tool and these arguments; it does not encrypt
    /// it (put no secret in it), and it may come back more than once.
    pub fn state(mut self, state: impl Into<String>) -> Self {
        self.state = Some(state.into());
        self
    }

    /// The result as a tool returns it.
    pub fn into_content(self) -> ToolContent {
        let keys: Vec<&str> = self.requests.keys().map(String::as_str).collect();
        let mut result = json!({"resultType": INPUT_REQUIRED, "inputRequests": self.requests});
        if let Some(state) = self.state {
            result["requestState"] = json!(state);
        }
        let mut content = ToolContent::text(format!(
            "The tool needs input from the client first ({}).",
            keys.join(", ")
        ));
        content.mcp_result = Some(result);
        content
    }
}

/// The `resultType` of an [`InputRequired`] result.
pub const INPUT_REQUIRED: &str = "input_required";

/// The input requests of an MCP result that is an [`InputRequired`] one.
pub fn input_requests(result: &Value) -> Option<&serde_json::Map<String, Value>> {
    (result["resultType"] == INPUT_REQUIRED)
        .then(|| result["inputRequests"].as_object())
        .flatten()
}

/// An MCP result as a model reads it: the text, the images, and whether it is an error.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelView {
    /// The text the model reads.
    pub text: String,
    /// The images, as image blocks.
    pub images: Vec<ContentBlock>,
    /// The result's `isError`.
    pub is_error: bool,
}

/// An MCP `tools/call` result as the model reads it, Cline's way where Cline keeps something:
/// text items as they are, embedded resources as pretty JSON without their `blob`, images
/// collected separately, all joined by blank lines. Beyond Cline, which drops them: resource
/// links as pretty JSON, an audio item as a line naming it, each item's annotations on a line
/// after it, and `structuredContent` as pretty JSON unless a text item already holds the
/// same JSON (the specification asks servers to echo it so). An empty success is
/// `(No response)`; an error's text is the error's message.
pub fn model_view(result: &Value) -> ModelView {
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
    ModelView {
        text,
        images,
        is_error,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
            model_view(&result),
            ModelView {
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
        assert_eq!(model_view(&echoed).text, "{\"a\": 1}");
        let wrapped = json!({"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": "42"}});
        assert_eq!(model_view(&wrapped).text, "42");
        let alone = json!({"content": [], "structuredContent": structured});
        assert_eq!(
            model_view(&alone).text,
            texts::structured_content("{\n  \"a\": 1\n}")
        );
    }

    #[test]
    fn empty_results_and_errors() {
        assert_eq!(model_view(&json!({"content": []})).text, "(No response)");
        let empty_error = model_view(&json!({"content": [], "isError": true}));
        assert_eq!(empty_error.text, texts::ERROR_WITHOUT_TEXT);
        assert!(empty_error.is_error);
        let failed = json!({"content": [{"type": "text", "text": "boom"}], "isError": true});
        assert_eq!(model_view(&failed).text, "boom");
    }

    #[test]
    fn a_built_result_carries_both_views() {
        let content = McpResult::new()
            .text("Mixed:")
            .audio("audio/wav", "UklG")
            .resource_text("test://r", "text/plain", "inside")
            .structured(json!({"n": 1}))
            .into_content();
        let result = content.mcp_result.clone().unwrap_or_default();
        assert_eq!(result["content"][1]["type"], "audio");
        assert_eq!(result["content"][2]["resource"]["text"], "inside");
        assert_eq!(result["structuredContent"], json!({"n": 1}));
        assert_eq!(result["isError"], false);
        assert_eq!(
            content.content,
            vec![ContentBlock::Text {
                text: format!(
                    "Mixed:\n\n{}\n\n{{\n  \"uri\": \"test://r\",\n  \"mimeType\": \"text/plain\",\n  \"text\": \"inside\"\n}}\n\n{}",
                    texts::audio_not_shown("audio/wav"),
                    texts::structured_content("{\n  \"n\": 1\n}")
                )
            }]
        );
    }
}
