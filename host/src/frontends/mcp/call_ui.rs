//! The UI of one `tools/call` ([`CallUi`]): the session's, plus its events as progress
//! messages when the client gave a `progressToken`, the tool's own progress, log messages,
//! forms and sampling requests, and questions asked as [`Asking`] says, which give up when
//! the call is cancelled.
//!
//! rmcp marks MCP sampling and logging deprecated (SEP-2577); they are still what a 2025-11-25
//! client offers for a tool's own requests and messages.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{CreateMessageRequestParams, ElicitRequestParams, LoggingLevel};
use serde_json::{json, Map, Value};
use tool_api::model::AskReply;

use super::ask::{Questions, QUESTION_KEY};
use super::progress::CallProgress;
use super::questions;
use super::ui::{ask, log_event, ClientLink};
use crate::plugins::handler::Cancellation;
use crate::ui::Ui;

/// How a call's questions reach the client's user.
#[derive(Clone)]
pub enum Asking {
    /// As requests of the session (a 2025-11-25 client: `elicitation/create`, sampling),
    /// when it declared them.
    Elicitation,
    /// Through the request that waits for the call (a 2026-07-28 client: an
    /// `InputRequiredResult`, or its task's status): questions and the tool's own forms when
    /// the client declared form elicitation, its sampling requests when it declared sampling,
    /// and the requests of a result that needs input.
    Forwarded {
        /// Where the questions go.
        questions: Questions,
        /// The client declared form elicitation.
        forms: bool,
        /// The client declared sampling.
        sampling: bool,
    },
}

/// The UI of one `tools/call`: the session's, plus its events as progress messages when the
/// client gave a `progressToken`, and questions, asked as [`Asking`] says, that give up when
/// the call is cancelled.
pub struct CallUi {
    link: ClientLink,
    progress: Option<Arc<CallProgress>>,
    cancellation: Arc<Cancellation>,
    asking: Asking,
}

impl CallUi {
    /// The UI of a call with `progress` (when the request has a token) under `cancellation`,
    /// asking as `asking` says.
    pub fn new(
        link: ClientLink,
        progress: Option<Arc<CallProgress>>,
        cancellation: Arc<Cancellation>,
        asking: Asking,
    ) -> Self {
        Self {
            link,
            progress,
            cancellation,
            asking,
        }
    }
}

impl CallUi {
    /// One request `method` with `params` through the request that waits for the call: the
    /// client's answer.
    fn forward(&self, method: &str, params: &Value) -> Option<Value> {
        let Asking::Forwarded { questions, .. } = &self.asking else {
            return None;
        };
        let request = json!({"method": method, "params": params});
        let requests = Map::from_iter([(QUESTION_KEY.to_string(), request)]);
        let mut answers = questions.ask(requests, &self.cancellation, self.link.ask_timeout())?;
        answers.remove(QUESTION_KEY)
    }
}

impl Ui for CallUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        log_event(&self.link, kind, text, partial);
        if partial || text.is_empty() {
            return;
        }
        if let Some(progress) = &self.progress {
            let message = if kind == "command_output" {
                text.to_string()
            } else {
                format!("{kind}: {text}")
            };
            progress.event(message);
        }
    }

    fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        match &self.asking {
            Asking::Elicitation => ask(&self.link, kind, text, Some(&self.cancellation)),
            Asking::Forwarded {
                questions,
                forms: true,
                ..
            } => {
                let limit = self.link.ask_timeout();
                let elicit = |message: &str, schema: Value| {
                    questions.elicit(message, schema, &self.cancellation, limit)
                };
                questions::ask(&elicit, kind, text)
            }
            Asking::Forwarded { .. } => None,
        }
    }

    fn elicit(&self, request: &Value) -> Option<Value> {
        let params: ElicitRequestParams = serde_json::from_value(request.clone())
            .map_err(
                |e| tracing::warn!(target: "toolhost::mcp", "a tool's elicitation is not one: {e}"),
            )
            .ok()?;
        match &self.asking {
            Asking::Elicitation => {
                let (action, content) = self.link.elicit_with(params, Some(&self.cancellation))?;
                Some(json!({"action": action, "content": content}))
            }
            Asking::Forwarded { forms: true, .. } => self.forward("elicitation/create", request),
            Asking::Forwarded { .. } => None,
        }
    }

    fn sample(&self, request: &Value) -> Option<Value> {
        let params: CreateMessageRequestParams = serde_json::from_value(request.clone())
            .map_err(|e| tracing::warn!(target: "toolhost::mcp", "a tool's sampling request is not one: {e}"))
            .ok()?;
        match &self.asking {
            Asking::Elicitation => self.link.sample(params, Some(&self.cancellation)),
            Asking::Forwarded { sampling: true, .. } => {
                self.forward("sampling/createMessage", request)
            }
            Asking::Forwarded { .. } => None,
        }
    }

    fn answers_together(&self) -> bool {
        matches!(self.asking, Asking::Forwarded { .. })
    }

    fn input(&self, requests: &Map<String, Value>) -> Option<Map<String, Value>> {
        let Asking::Forwarded { questions, .. } = &self.asking else {
            return None;
        };
        questions.ask(
            requests.clone(),
            &self.cancellation,
            self.link.ask_timeout(),
        )
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: &str) {
        if let Some(reporter) = &self.progress {
            reporter.report(progress, total, message.to_string());
        }
    }

    fn log(&self, level: &str, logger: &str, data: &Value) {
        if let Ok(level) = serde_json::from_value::<LoggingLevel>(Value::from(level)) {
            self.link.log_data(level, logger, data);
        }
    }
}
