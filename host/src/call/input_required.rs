//! A result that needs input first ([`tool_api::sdk::mcp_result::InputRequired`]), for a
//! frontend whose client does not answer such results itself: the host answers each request
//! (a form asked of the call's user or client, a message its client's model writes, the
//! workspace's roots), then runs the handler again with the answers and the tool's state in
//! its context, as a 2026-07-28 MCP client would call it again. A tool may ask
//! [`MAX_ROUNDS`] times in one call.

use serde_json::{Map, Value};
use tool_api::model::{McpInput, ToolContent};
use tool_api::sdk::mcp_result::input_requests;

use super::host::Host;
use super::options::CallOptions;
use super::ui_services::ui_service;
use crate::error::{CallError, ErrorKind};

/// How many rounds of input one call may ask for.
pub(super) const MAX_ROUNDS: u32 = 8;

/// A result that needs input: its requests and the tool's state.
pub(super) struct Needed {
    requests: Map<String, Value>,
    state: Option<String>,
}

/// What `result` needs before it is one, when it is a result that needs input.
pub(super) fn needed(result: &Result<ToolContent, CallError>) -> Option<Needed> {
    let answer = result.as_ref().ok()?.mcp_result.as_ref()?;
    Some(Needed {
        requests: input_requests(answer)?.clone(),
        state: answer["requestState"].as_str().map(str::to_string),
    })
}

impl Host {
    /// The handler's next input: the answers to `needed`'s requests and its state (the
    /// client's capabilities kept from `options`); the error of the first request nobody can
    /// answer, or of a call past its `round`s.
    pub(super) fn answer_input(
        &self,
        needed: Needed,
        options: &CallOptions,
        subagent: bool,
        round: u32,
    ) -> Result<McpInput, CallError> {
        if round > MAX_ROUNDS {
            return Err(CallError::new(
                ErrorKind::Failed,
                format!("The tool asked for input more than {MAX_ROUNDS} times in one call; it was stopped."),
            ));
        }
        let ui = self.ui_for(options);
        let answers = if ui.answers_together() && !subagent {
            ui.input(&needed.requests).ok_or_else(|| {
                CallError::new(
                    ErrorKind::Unavailable,
                    "The client did not answer the tool's requests.",
                )
            })?
        } else {
            self.answer_one_by_one(needed.requests, options, subagent)?
        };
        Ok(McpInput {
            client_capabilities: options
                .mcp
                .as_ref()
                .map(|mcp| mcp.client_capabilities.clone())
                .unwrap_or_default(),
            input_responses: answers,
            request_state: needed.state,
        })
    }

    /// The answers to `requests`, asked one by one.
    fn answer_one_by_one(
        &self,
        requests: Map<String, Value>,
        options: &CallOptions,
        subagent: bool,
    ) -> Result<Map<String, Value>, CallError> {
        let mut answers = Map::new();
        for (key, request) in requests {
            let method = request["method"].as_str().unwrap_or_default();
            let params = &request["params"];
            let answer = match method {
                "elicitation/create" => ui_service(self, options, subagent, "elicit", params)?,
                "sampling/createMessage" => ui_service(self, options, subagent, "sample", params)?,
                "roots/list" => self.workspace.mcp_roots(),
                other => {
                    return Err(CallError::new(
                        ErrorKind::Unavailable,
                        format!("The tool asked for '{other}', which this host cannot answer."),
                    ))
                }
            };
            answers.insert(key, answer);
        }
        Ok(answers)
    }
}
