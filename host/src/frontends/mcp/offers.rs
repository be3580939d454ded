//! What plugins offer an MCP client besides tools: resources, resource templates, prompts and
//! completions, each served by the plugins declaring its capability
//! ([`tool_api::model::RESOURCES_CAPABILITY`], [`tool_api::model::PROMPTS_CAPABILITY`],
//! [`tool_api::model::COMPLETION_CAPABILITY`]) through handler extensions, asked on the
//! blocking pool (a plugin's code may block). Lists are every such plugin's, in load order;
//! a read, a prompt or a completion goes to the first plugin that serves it.

use rmcp::model::{GetPromptRequestParams, GetPromptResponse};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tool_api::model::PROMPTS_CAPABILITY;
use tool_api::sdk::mcp_result::input_requests;

use super::input_required::{binding, Resumed};
use super::modern::is_modern;
use super::server::McpServer;
use crate::error::ErrorKind;
use crate::Host;

/// A request to plugins that failed: the JSON-RPC error to answer with.
pub type Refused = rmcp::ErrorData;

impl McpServer {
    /// Whether a loaded plugin declares `capability`.
    pub(super) fn offers(&self, capability: &str) -> bool {
        self.host.registry().plugin_with(capability).is_some()
    }

    /// Every plugin of `capability` asked `method` with `payload` (and the workspace); the
    /// items under `key` of their answers, in load order.
    pub(super) async fn listed(
        &self,
        capability: &'static str,
        method: &'static str,
        key: &'static str,
    ) -> Result<Vec<Value>, Refused> {
        let host = self.host.clone();
        blocking(move || {
            let payload = with_workspace(&host, json!({}));
            let mut items = Vec::new();
            for plugin in host.registry().plugins_with(capability) {
                let answer = plugin.request(method, &payload).map_err(|e| refused(&e))?;
                if let Some(listed) = answer.get(key).and_then(Value::as_array) {
                    items.extend(listed.iter().cloned());
                }
            }
            Ok(items)
        })
        .await
    }

    /// The answer of the first plugin of `capability` that serves `method` for `payload`
    /// (one that answers `INVALID_PARAMS` does not serve it; the last such refusal is the
    /// answer when none does).
    pub(super) async fn first_answer(
        &self,
        capability: &'static str,
        method: &'static str,
        payload: Value,
    ) -> Result<Value, Refused> {
        let host = self.host.clone();
        blocking(move || {
            let payload = with_workspace(&host, payload);
            let mut last = None;
            for plugin in host.registry().plugins_with(capability) {
                match plugin.request(method, &payload) {
                    Ok(answer) => return Ok(answer),
                    Err(e) if e.kind == ErrorKind::InvalidParams => last = Some(refused(&e)),
                    Err(e) => return Err(refused(&e)),
                }
            }
            Err(last.unwrap_or_else(|| {
                Refused::invalid_params(format!("no plugin serves this ({method})"), None)
            }))
        })
        .await
    }
}

impl McpServer {
    /// Answers `prompts/get`: the plugin's prompt, or, to a 2026-07-28 client, the input it
    /// needs first (its state sealed as a tool's, bound to the prompt and its arguments; the
    /// retry brings the plugin the answers and that state). An older client cannot give
    /// input: such a prompt is an error for it.
    pub(super) async fn answer_prompt(
        &self,
        request: GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, Refused> {
        let arguments = request.arguments.clone().map(Value::Object);
        let bound = binding(&format!("prompts/get {}", request.name), arguments.as_ref());
        let mut payload = json!({"name": request.name, "arguments": request.arguments});
        if let Some(state) = &request.request_state {
            match self.shared.parked.resume(state, &bound, None)? {
                Resumed::Again(state) => payload["requestState"] = json!(state),
                Resumed::Answered(_) | Resumed::Unanswered(..) => {
                    return Err(Refused::invalid_params(
                        "requestState is not a prompt's",
                        None,
                    ))
                }
            }
        }
        if let Some(responses) = &request.input_responses {
            payload["inputResponses"] = json!(responses);
        }
        let mut answer = self
            .first_answer(PROMPTS_CAPABILITY, "prompts_get", payload)
            .await?;
        if input_requests(&answer).is_some() {
            if !is_modern(context) {
                return Err(Refused::invalid_params(
                    format!(
                        "the prompt {} needs input first, which only a 2026-07-28 client can give",
                        request.name
                    ),
                    None,
                ));
            }
            return Ok(GetPromptResponse::InputRequired(
                self.shared.parked.relay(&answer, &bound)?,
            ));
        }
        super::result::complete(&mut answer);
        let prompt = serde_json::from_value(answer).map_err(|e| {
            Refused::internal_error(
                format!("a plugin answered with a malformed prompt: {e}"),
                None,
            )
        })?;
        Ok(GetPromptResponse::Complete(prompt))
    }
}

/// `payload` with the task's workspace (`"workspace"`: the context a plugin's calls read) and
/// the settings: a [`tool_api::model::OfferRequest`].
fn with_workspace(host: &Host, mut payload: Value) -> Value {
    payload["workspace"] = host.task_context();
    payload["settings"] = host.settings().document().clone();
    payload
}

/// A plugin's refusal as a JSON-RPC error: its invalid parameters as `-32602` (a resource or
/// prompt it does not serve), anything else as an internal error.
fn refused(error: &crate::CallError) -> Refused {
    match error.kind {
        ErrorKind::InvalidParams => Refused::invalid_params(error.message.clone(), None),
        _ => Refused::internal_error(error.message.clone(), None),
    }
}

/// Runs `work` on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Refused> + Send + 'static,
) -> Result<T, Refused> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Refused::internal_error(e.to_string(), None))?
}
