//! What the agent tools share: an agent loop's model endpoint and conversation.
//!
//! - [`llm`]: `[llm]` (`base_url`, `model`, `protocol = "openai" | "anthropic"`,
//!   `api_key_env`, ...).
//! - [`conversation`]: the protocol-neutral conversation, the tools offered, and the two wire
//!   formats (native tool calling, non-streaming requests).
//! - [`endpoint`]: one request with Cline's retry rule, on a runtime of its own.

pub mod conversation;
pub mod endpoint;
pub mod llm;

/// What the model reads for its call of `name` with `arguments`, made through the host (as the
/// calling plugin's subagent call): the result's text, a denial as it is, any other failure
/// as a tool error.
pub fn call_through_host(
    ctx: &tool_api::sdk::Ctx<'_>,
    name: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
) -> String {
    match ctx.invoke_tool(name, &serde_json::Value::Object(arguments)) {
        Ok(content) => content.joined_text(),
        Err(e) if e.kind == tool_api::abi::ToolErrorKind::DENIED => e.message.to_string(),
        Err(e) => tool_api::texts::tool_error(e.message.as_str()),
    }
}

/// `text` cut to `max` characters, with "..." when it was longer.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}
