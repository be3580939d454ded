//! What the agent tools share: an agent loop's model endpoint and conversation.
//!
//! - [`llm`]: `[llm]` (`base_url`, `model`, `protocol = "openai" | "anthropic"`,
//!   `api_key_env`, ...).
//! - [`conversation`]: the protocol-neutral conversation, the tools offered, and the two wire
//!   formats (native tool calling, non-streaming requests).
//! - [`endpoint`]: one request with Cline's retry rule, on a runtime of its own.
//! - [`agent_loop`]: one agent's run, from its task to its answer.

pub mod agent_loop;
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

/// The longest tool description OpenAI's API takes; longer ones are cut by the host.
const OPENAI_DESCRIPTION_LIMIT: u64 = 1024;

/// The tools the host serves, as the model sees them (the host's `tools.list`, descriptions
/// within what `llm`'s API takes).
pub fn host_tools(
    ctx: &tool_api::sdk::Ctx<'_>,
    llm: &llm::LlmSettings,
) -> Result<Vec<conversation::ToolDef>, tool_api::abi::ToolError> {
    let limit = match llm.protocol {
        llm::Protocol::OpenAi => serde_json::json!(OPENAI_DESCRIPTION_LIMIT),
        llm::Protocol::Anthropic => serde_json::Value::Null,
    };
    let listed = ctx.call_service(
        "tools",
        "list",
        &serde_json::json!({ "description_limit": limit }),
    )?;
    let tools = listed["tools"].as_array().cloned().unwrap_or_default();
    Ok(tools
        .into_iter()
        .filter_map(|tool| {
            Some(conversation::ToolDef {
                name: tool["name"].as_str()?.to_string(),
                description: tool["description"].as_str().unwrap_or_default().to_string(),
                schema: tool["input_schema"].clone(),
            })
        })
        .collect())
}

/// `text` cut to `max` characters, with "..." when it was longer.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}
