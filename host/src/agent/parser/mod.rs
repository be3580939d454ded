//! Tool calls in assistant messages: Cline's XML-style calls in streamed text, and native
//! (JSON-argument) calls, both turned into [`Block`]s.

mod stream;
mod xml;

pub use stream::StreamParser;
pub use xml::{XmlParser, PARAM_NAMES};

use serde::Serialize;
use serde_json::{Map, Value};

/// One block of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Text between tool calls.
    Text {
        /// The text, trimmed.
        content: String,
        /// Whether more of it may still stream in.
        partial: bool,
    },
    /// A tool call.
    ToolUse(ToolUse),
}

/// A tool call, complete or still streaming.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolUse {
    /// The tool's name.
    pub name: String,
    /// The parameters; Cline's values are strings.
    pub params: Map<String, Value>,
    /// Whether the call is still streaming.
    pub partial: bool,
    /// Whether the call came from provider-native tool calling.
    #[serde(rename = "isNativeToolCall")]
    pub is_native_tool_call: bool,
    /// The call's id (made up for XML calls).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub call_id: String,
}
