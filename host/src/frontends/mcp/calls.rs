//! A `tools/call` as [`McpServer`] answers it: the call starts on a call thread of its own
//! ([`crate::Host::start_call`]), its cancellation a child of the session's, and the request
//! waits for it ([`RunningCall`]) without blocking the protocol, keeping its timeout.
//!
//! What the request's protocol version changes:
//! - 2025-11-25 and older: events and questions go through the session ([`ClientLink`]):
//!   questions as `elicitation/create` when the client declared elicitation at `initialize`,
//!   log messages at the session's `logging/setLevel`.
//! - 2026-07-28: each request carries what a session would. Its `_meta` says whether the client
//!   can be asked (form elicitation) and its log level (no log message without one); its
//!   events go to its own stream; a question comes back as an `InputRequiredResult` and the
//!   retry resumes the call ([`super::input_required`]). A call that runs long, for a client
//!   that declared the tasks extension, is a task ([`super::tasks`]).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tool_api::model::McpInput;
use tool_api::sdk::mcp_result::input_requests;
use tool_api::texts;

use super::ask::Questions;
use super::call_ui::{Asking, CallUi};
use super::input_required::{binding, Resumed};
use super::modern::{can_elicit, is_modern, LOG_LEVEL_KEY};
use super::progress::CallProgress;
use super::result;
use super::running::{Growing, RunningCall, Waited};
use super::server::McpServer;
use super::ui::ClientLink;
use crate::call::{CallOptions, CallScope, InputRelay};
use crate::ui::Ui;
use crate::RegisteredTool;

/// A new call, started.
enum Started {
    /// It runs: wait for it.
    Running(RunningCall),
    /// It was answered at once (it could not start, or it is a task).
    Answered(CallToolResponse),
}

impl McpServer {
    /// Answers one `tools/call`: a new call, or the retry of a call that asked.
    pub(super) async fn answer_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let modern = is_modern(&context);
        if modern && context.meta.contains_key(LOG_LEVEL_KEY) && context.meta.log_level().is_none()
        {
            return Err(ErrorData::invalid_params(
                format!("{LOG_LEVEL_KEY} is not a log level (debug, info, notice, warning, error, critical, alert, emergency)"),
                None,
            ));
        }
        if !modern {
            super::log::connect_once(
                &self.client,
                context.peer.clone(),
                tokio::runtime::Handle::current(),
            );
        }
        // Every answer is a result object (an elicitation's, a sampled message, the roots).
        let responses = request.input_responses.iter().flatten();
        if let Some((key, _)) = responses
            .into_iter()
            .find(|(_, answer)| !answer.is_object())
        {
            return Err(ErrorData::invalid_params(
                format!("inputResponses.{key} is not a result object"),
                None,
            ));
        }
        let arguments = request.arguments.clone().map(Value::Object);
        let bound = binding(&request.name, arguments.as_ref());
        let mut input = McpInput {
            client_capabilities: serde_json::to_value(context.client_capabilities())
                .unwrap_or_default(),
            input_responses: request
                .input_responses
                .clone()
                .unwrap_or_default()
                .into_iter()
                .collect(),
            request_state: None,
        };
        let resumed = match request.request_state.as_deref() {
            Some(state) => Some(self.shared.parked.resume(
                state,
                &bound,
                request.input_responses.as_ref(),
            )?),
            None => None,
        };
        let mut call = match resumed {
            Some(Resumed::Answered(call)) => call,
            Some(Resumed::Unanswered(call, question)) => {
                return Ok(self.shared.parked.park(call, question, &bound)?.into())
            }
            Some(Resumed::Again(state)) => {
                input.request_state = state;
                match self.start_new(&request, arguments, &context, input).await? {
                    Started::Running(call) => call,
                    Started::Answered(response) => return Ok(response),
                }
            }
            None => match self.start_new(&request, arguments, &context, input).await? {
                Started::Running(call) => call,
                Started::Answered(response) => return Ok(response),
            },
        };
        loop {
            match call.wait(&context.ct).await {
                Waited::Done(outcome) => {
                    if let Some(answer) =
                        outcome.mcp_result().filter(|a| input_requests(a).is_some())
                    {
                        return Ok(self.shared.parked.relay(answer, &bound)?.into());
                    }
                    return Ok(result::call_result(&outcome).into());
                }
                Waited::Asks(asking, question) if modern => {
                    return Ok(self.shared.parked.park(asking, question, &bound)?.into());
                }
                Waited::Grown(call) => {
                    return Ok(super::tasks::start(&self.shared.tasks, call).into());
                }
                // Only a 2026-07-28 request's call forwards its questions.
                Waited::Asks(asking, question) => {
                    question.answer(None);
                    call = asking;
                }
            }
        }
    }

    /// Starts a new call of the requested tool (a task, for a client that follows tasks, of
    /// a tool that runs long): the running call, or the answer when there is nothing to wait
    /// for (an unknown tool is an error).
    async fn start_new(
        &self,
        request: &CallToolRequestParams,
        arguments: Option<Value>,
        context: &RequestContext<RoleServer>,
        input: McpInput,
    ) -> Result<Started, ErrorData> {
        let modern = is_modern(context);
        let Some(tool) = self.find_tool(&request.name).await else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        };
        let capabilities = context.client_capabilities().unwrap_or_default();
        let needs = &tool.spec.handling.client_needs;
        if let Some(missing) = needs.iter().find(|need| !declared(&capabilities, need)) {
            return Err(missing_capability(missing));
        }
        let may_grow = modern
            && (tool.spec.handling.runs_long || needs.iter().any(|need| need == TASKS))
            && capabilities.supports_tasks();
        match self.start(tool, arguments, context, input, may_grow).await {
            Ok(call) => Ok(Started::Running(call)),
            Err(result) => Ok(Started::Answered(result.into())),
        }
    }

    /// Starts a call of `tool` with `arguments` for the request of `context` (one that
    /// becomes a task after [`TASK_AFTER`], when it `may_grow`): the running call, or the
    /// result of one that cannot start (a workspace refused, a call refused before its
    /// thread).
    async fn start(
        &self,
        tool: Arc<RegisteredTool>,
        arguments: Option<Value>,
        context: &RequestContext<RoleServer>,
        input: McpInput,
        may_grow: bool,
    ) -> Result<RunningCall, CallToolResult> {
        let modern = is_modern(context);
        let host = match self.task(&context.peer, modern).await {
            Ok(host) => host,
            Err(refused) => {
                return Err(CallToolResult::error(vec![ContentBlock::text(
                    texts::tool_error(&refused),
                )]))
            }
        };
        let (questions, asked) = Questions::channel();
        let (link, asking) = if modern {
            let link = ClientLink::for_request(
                context.peer.clone(),
                tokio::runtime::Handle::current(),
                context.meta.log_level(),
                self.client.ask_timeout(),
            );
            let capabilities = context.client_capabilities().unwrap_or_default();
            let asking = Asking::Forwarded {
                questions,
                forms: can_elicit(context),
                sampling: capabilities.sampling.is_some(),
            };
            (link, asking)
        } else {
            (self.client.clone(), Asking::Elicitation)
        };
        let params = arguments.unwrap_or_else(|| Value::Object(Default::default()));
        let cancellation = self.session.child();
        let progress = context.meta.get_progress_token().map(|token| {
            CallProgress::new(
                token,
                context.peer.clone(),
                &tokio::runtime::Handle::current(),
            )
        });
        let ui: Arc<dyn Ui> = Arc::new(CallUi::new(
            link.clone(),
            progress.clone(),
            cancellation.clone(),
            asking,
        ));
        let link_for_growing = link.clone();
        let options = CallOptions {
            cancellation: Some(cancellation.clone()),
            ui: Some(ui),
            scope: CallScope::new(move |call| super::log::in_session(&link, call)),
            mcp: Some(input),
            input_relay: if modern {
                InputRelay::to_client()
            } else {
                InputRelay::default()
            },
        };
        let growing = may_grow.then(|| Growing {
            after: TASK_AFTER,
            relay: options.input_relay.clone(),
            link: link_for_growing.clone(),
        });
        let (sender, delivered) = tokio::sync::oneshot::channel();
        let deliver = move |outcome| {
            let _ = sender.send(outcome);
        };
        match host.start_call(&tool, params, &options, deliver) {
            Ok(pending) => Ok(
                RunningCall::new(pending, delivered, cancellation, asked, host)
                    .keeping_alive(progress)
                    .growing(growing),
            ),
            Err(outcome) => Err(result::call_result(&outcome)),
        }
    }
}

/// How long a call that may become a task runs before it does: one that ends or asks sooner
/// is answered as any call is (its questions as an `InputRequiredResult`).
const TASK_AFTER: std::time::Duration = std::time::Duration::from_millis(250);

/// The name of the tasks extension among a spec's client needs.
const TASKS: &str = "tasks";

/// Whether `capabilities` declare `need` (a capability's name, or `tasks`).
fn declared(capabilities: &ClientCapabilities, need: &str) -> bool {
    if need == TASKS {
        return capabilities.supports_tasks();
    }
    serde_json::to_value(capabilities)
        .ok()
        .and_then(|declared| declared.get(need).cloned())
        .is_some_and(|value| !value.is_null())
}

/// MCP's error for a call that needs the client capability `need` (-32021, HTTP 400), with the
/// capabilities to declare in its data.
fn missing_capability(need: &str) -> ErrorData {
    let required = if need == TASKS {
        ClientCapabilities::builder().enable_tasks().build()
    } else {
        serde_json::from_value(serde_json::json!({ need: {} })).unwrap_or_default()
    };
    ErrorData::missing_required_client_capability(required)
}
