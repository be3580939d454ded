//! One agent's run: a request to the model, its tool calls answered, again, until it answers
//! without calling a tool or reaches the turn limit. spawn_agent's sub-agent and the team's
//! teammates run this loop; each answers the tool calls its own way.

use tool_api::sdk::Ctx;

use crate::conversation::{request_body, Message, ToolAnswer, ToolDef, ToolRequest, Usage};
use crate::endpoint::{send, RequestError};
use crate::llm::LlmSettings;

/// Why a run finished (Cline's `AgentFinishReason`, of the values a run here can reach).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The model answered without calling a tool.
    Completed,
    /// The run made as many requests as it may.
    MaxIterations,
}

impl Finish {
    /// Cline's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::MaxIterations => "max_iterations",
        }
    }
}

/// What a run ends with (Cline's `AgentResult`, as far as a run here has it).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The model's last text.
    pub text: String,
    /// The requests made.
    pub iterations: u64,
    /// Why it finished.
    pub finish: Finish,
    /// The tokens of all its requests.
    pub usage: Usage,
}

/// Why a run ended without an [`Outcome`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The call was cancelled.
    Cancelled,
    /// A model request failed (after Cline's retries); the endpoint's message.
    Request(String),
    /// The run was told to stop (its `stopped` check said so between two steps).
    Stopped,
}

/// What one run is: the system prompt, the tools offered, and how many requests it may make.
#[derive(Debug, Clone, Copy)]
pub struct Agent<'a> {
    /// The system prompt.
    pub system: &'a str,
    /// The tools the model is offered.
    pub tools: &'a [ToolDef],
    /// The most requests the run makes.
    pub max_turns: u64,
}

/// Runs `agent` (with `llm`'s endpoint and `api_key`) on `messages` (which end with the user's turn, and gain the run's turns):
/// each tool call the model makes is answered by `answer`, in order, and before each step
/// `stopped` says whether the run must end there.
pub fn run(
    ctx: &Ctx<'_>,
    llm: &LlmSettings,
    api_key: Option<&str>,
    agent: Agent<'_>,
    messages: &mut Vec<Message>,
    answer: &dyn Fn(&ToolRequest) -> String,
    stopped: &dyn Fn() -> bool,
) -> Result<Outcome, RunError> {
    let mut usage = Usage::default();
    let mut text = String::new();
    for iteration in 1..=agent.max_turns {
        if stopped() {
            return Err(RunError::Stopped);
        }
        let body = request_body(llm, agent.system, agent.tools, messages);
        let reply = match send(ctx, llm, api_key, &body) {
            Ok(reply) => reply,
            Err(RequestError::Cancelled) => return Err(RunError::Cancelled),
            Err(RequestError::Failed { message, .. }) => return Err(RunError::Request(message)),
        };
        usage.input += reply.usage.input;
        usage.output += reply.usage.output;
        usage.cache_read += reply.usage.cache_read;
        usage.cache_write += reply.usage.cache_write;
        text = reply.text.clone();
        if reply.calls.is_empty() {
            messages.push(Message::Assistant {
                text: reply.text,
                calls: Vec::new(),
            });
            return Ok(Outcome {
                text,
                iterations: iteration,
                finish: Finish::Completed,
                usage,
            });
        }
        let mut answers = Vec::new();
        for request in &reply.calls {
            if ctx.is_cancelled() {
                return Err(RunError::Cancelled);
            }
            if stopped() {
                return Err(RunError::Stopped);
            }
            answers.push(ToolAnswer {
                id: request.id.clone(),
                text: answer(request),
            });
        }
        messages.push(Message::Assistant {
            text: reply.text,
            calls: reply.calls,
        });
        messages.push(Message::Results(answers));
    }
    if ctx.is_cancelled() {
        return Err(RunError::Cancelled);
    }
    Ok(Outcome {
        text,
        iterations: agent.max_turns,
        finish: Finish::MaxIterations,
        usage,
    })
}
