//! One subagent: its own conversation with the model, tool calls through the host, until
//! attempt_completion, the turn limit, a failure or the call's cancellation.

use serde_json::Value;
use tool_api::sdk::Ctx;
use tool_api::texts;

use agent_support::conversation::{
    parse_arguments, request_body, Message, ToolAnswer, ToolDef, ToolRequest,
};
use agent_support::endpoint::{send, RequestError};
use agent_support::llm::LlmSettings;

use crate::board::{Board, Status};
use crate::tools::{is_offered, preview, ATTEMPT_COMPLETION};

/// The failure of a cancelled run (Cline's text).
pub const CANCELLED: &str = "Subagent run cancelled.";

/// The failure after too many answers without a tool call (Cline's text).
pub const NO_COMPLETION: &str = "Subagent did not call attempt_completion.";

/// Answers without a tool call tolerated before the run fails (Cline's 3).
const NO_TOOL_RETRIES: u32 = 3;

/// What the model said when its answer had neither text nor tools (Cline's placeholder).
const EMPTY_ANSWER: &str = "Failure: I did not provide a response.";

/// Everything the runs of one call share.
pub struct Shared<'a, 'c> {
    /// The call's host services.
    pub ctx: &'a Ctx<'c>,
    /// The endpoint.
    pub llm: &'a LlmSettings,
    /// The API key, if any.
    pub api_key: Option<&'a str>,
    /// The system prompt.
    pub system: &'a str,
    /// The tools offered.
    pub tools: &'a [ToolDef],
    /// The `<environment_details>` block of the first message.
    pub environment: &'a str,
    /// Requests per subagent.
    pub max_turns: u64,
    /// The status board.
    pub board: &'a Board<'a>,
}

/// The failure after the turn limit.
pub fn turn_limit(max_turns: u64) -> String {
    format!(
        "Subagent reached the limit of {max_turns} model requests (subagents.max_turns) without calling attempt_completion."
    )
}

/// The nudge after an answer without a tool call (Cline's `noToolsUsed` in native mode: no XML
/// reminder).
pub fn no_tools_used() -> String {
    "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.\n\n# Next Steps\n\nIf the task is done, use attempt_completion. Otherwise go on with the next step of the task, using a tool.\n(This is an automated message, so do not respond to it conversationally.)".to_string()
}

/// The answer to a tool a subagent may not use (Cline's text).
pub fn not_available(name: &str) -> String {
    texts::tool_error(&format!(
        "Tool '{name}' is not available inside subagent runs."
    ))
}

/// Runs subagent `index` (0-based) and records its outcome on the board.
pub fn run(shared: &Shared<'_, '_>, index: usize, prompt: &str) {
    shared
        .board
        .update(index, |item| item.status = Status::Running);
    let outcome = converse(shared, index, prompt);
    shared.board.update(index, |item| match outcome {
        Ok(result) => {
            item.status = Status::Completed;
            item.result = Some(result);
        }
        Err(error) => {
            item.status = Status::Failed;
            item.error = Some(error);
        }
    });
}

/// The loop; `Ok` is the attempt_completion result, `Err` the reason the run failed.
fn converse(shared: &Shared<'_, '_>, index: usize, prompt: &str) -> Result<String, String> {
    let ctx = shared.ctx;
    let mut messages = vec![Message::User(vec![
        prompt.to_string(),
        shared.environment.to_string(),
    ])];
    let mut answers_without_tools = 0;
    for _ in 0..shared.max_turns {
        if ctx.is_cancelled() {
            return Err(CANCELLED.to_string());
        }
        let body = request_body(shared.llm, shared.system, shared.tools, &messages);
        let reply = match send(ctx, shared.llm, shared.api_key, &body) {
            Ok(reply) => reply,
            Err(RequestError::Cancelled) => return Err(CANCELLED.to_string()),
            Err(RequestError::Failed { message, .. }) => {
                return Err(format!("The model request failed: {message}"))
            }
        };
        shared.board.add_usage(index, reply.usage);
        if reply.calls.is_empty() {
            answers_without_tools += 1;
            if answers_without_tools > NO_TOOL_RETRIES {
                return Err(NO_COMPLETION.to_string());
            }
            let text = if reply.text.trim().is_empty() {
                EMPTY_ANSWER.to_string()
            } else {
                reply.text
            };
            messages.push(Message::Assistant {
                text,
                calls: Vec::new(),
            });
            messages.push(Message::User(vec![no_tools_used()]));
            continue;
        }
        answers_without_tools = 0;
        let mut answers = Vec::new();
        for call in &reply.calls {
            if ctx.is_cancelled() {
                return Err(CANCELLED.to_string());
            }
            match execute(shared, index, call) {
                Step::Finish(result) => return Ok(result),
                Step::Answer(text) => answers.push(ToolAnswer {
                    id: call.id.clone(),
                    text,
                }),
            }
        }
        messages.push(Message::Assistant {
            text: reply.text,
            calls: reply.calls,
        });
        messages.push(Message::Results(answers));
    }
    Err(turn_limit(shared.max_turns))
}

/// What one tool call leads to.
enum Step {
    /// attempt_completion with a result: the run is over.
    Finish(String),
    /// The text the model reads as the call's result.
    Answer(String),
}

fn execute(shared: &Shared<'_, '_>, index: usize, call: &ToolRequest) -> Step {
    let arguments = match parse_arguments(&call.raw_arguments) {
        Ok(arguments) => arguments,
        Err(message) => return Step::Answer(texts::tool_error(&message)),
    };
    let latest = preview(&call.name, &arguments);
    shared.board.update(index, |item| {
        item.tool_calls += 1;
        item.latest_tool_call = Some(latest);
    });
    if !is_offered(shared.tools, &call.name) {
        return Step::Answer(not_available(&call.name));
    }
    if call.name == ATTEMPT_COMPLETION {
        let result = arguments
            .get("result")
            .or_else(|| arguments.get("response"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if result.trim().is_empty() {
            return Step::Answer(texts::tool_error(&texts::missing_param_error_native(
                "result",
            )));
        }
        return Step::Finish(result.to_string());
    }
    Step::Answer(agent_support::call_through_host(
        shared.ctx, &call.name, arguments,
    ))
}
