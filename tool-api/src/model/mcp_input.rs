//! What an MCP client sent with a call beyond its arguments ([`super::TaskContext::mcp`]),
//! for a tool that answers as an MCP server's tool does.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The MCP side of a call made through `toolhost mcp`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpInput {
    /// The client's capabilities (MCP's `ClientCapabilities`: `elicitation`, `sampling`,
    /// `roots`, `extensions`): a 2026-07-28 request's own, or those the client declared at
    /// `initialize`.
    #[serde(default)]
    pub client_capabilities: Value,
    /// The answers to the input requests of the tool's previous result
    /// ([`crate::sdk::mcp_result::InputRequired`]), by the keys the tool gave them: an
    /// elicitation's `{"action", "content"}`, a sampled message, `{"roots": [...]}`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub input_responses: Map<String, Value>,
    /// The state the tool returned with those requests, as it returned it: the host sealed it
    /// for the client and checked that it came back unchanged, for this tool and these
    /// arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl McpInput {
    /// The answer to the input request `key`.
    pub fn response(&self, key: &str) -> Option<&Value> {
        self.input_responses.get(key)
    }

    /// Whether the client declared the capability `name` (`elicitation`, `sampling`, `roots`).
    pub fn client_can(&self, name: &str) -> bool {
        self.client_capabilities
            .get(name)
            .is_some_and(|value| !value.is_null())
    }
}
