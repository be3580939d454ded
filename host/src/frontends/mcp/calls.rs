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
use super::running::{RunningCall, Waited};
use super::server::McpServer;
use super::ui::ClientLink;
use crate::call::{CallOptions, CallScope};
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
        let as_task = modern
            && (tool.spec.handling.runs_long || needs.iter().any(|need| need == TASKS))
            && capabilities.supports_tasks();
        let call = match self.start(tool, arguments, context, input, as_task).await {
            Ok(call) => call,
            Err(result) => return Ok(Started::Answered(result.into())),
        };
        if as_task {
            return Ok(Started::Answered(
                super::tasks::start(&self.shared.tasks, call).into(),
            ));
        }
        Ok(Started::Running(call))
    }

    /// Starts a call of `tool` with `arguments` for the request of `context` (a task's, when
    /// `as_task`: it sends no progress or log message): the running call, or the result of one
    /// that cannot start (a workspace refused, a call refused before its thread).
    async fn start(
        &self,
        tool: Arc<RegisteredTool>,
        arguments: Option<Value>,
        context: &RequestContext<RoleServer>,
        input: McpInput,
        as_task: bool,
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
                context.meta.log_level().filter(|_| !as_task),
                self.client.ask_timeout(),
            );
            let asking = if can_elicit(context) {
                Asking::Forwarded(questions)
            } else {
                Asking::Nobody
            };
            (link, asking)
        } else {
            (self.client.clone(), Asking::Elicitation)
        };
        let params = arguments.unwrap_or_else(|| Value::Object(Default::default()));
        let cancellation = self.session.child();
        let progress = context
            .meta
            .get_progress_token()
            .filter(|_| !as_task)
            .map(|token| {
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
        let options = CallOptions {
            cancellation: Some(cancellation.clone()),
            ui: Some(ui),
            scope: CallScope::new(move |call| super::log::in_session(&link, call)),
            mcp: Some(input),
            // A task's client answers through `tasks/update`, not by calling again.
            relays_input_required: modern && !as_task,
        };
        let (sender, delivered) = tokio::sync::oneshot::channel();
        let deliver = move |outcome| {
            let _ = sender.send(outcome);
        };
        match host.start_call(&tool, params, &options, deliver) {
            Ok(pending) => Ok(
                RunningCall::new(pending, delivered, cancellation, asked, host)
                    .keeping_alive(progress),
            ),
            Err(outcome) => Err(result::call_result(&outcome)),
        }
    }
}

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
