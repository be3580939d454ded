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

/// `text` cut to `max` characters, with "..." when it was longer.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}
