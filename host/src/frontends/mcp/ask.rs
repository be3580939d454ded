//! Questions a call asks through the request that waits for it, instead of as requests of
//! their own: a 2026-07-28 client is asked by an `InputRequiredResult` ([`super::input_required`])
//! or by its task's status ([`super::tasks`]). The call's thread sends the form and waits;
//! the protocol's side takes it out with the request and brings the answer back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{ElicitResult, ElicitationAction};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::plugins::handler::Cancellation;

/// What the user answered to a form: the action and the form's content.
pub type Answer = (ElicitationAction, Value);

/// The client's answers to a question's requests, by key.
pub type Answers = Map<String, Value>;

/// The key of the one form a call's question asks.
pub const QUESTION_KEY: &str = "toolhost_question";

/// How often a waiting question looks at its call's cancellation.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Requests for the client (forms, sampled messages, its roots) by key, and where their
/// answers go.
pub struct Question {
    /// The requests, as MCP writes a server's request to its client (`{"method", "params"}`).
    pub requests: Map<String, Value>,
    answer: std::sync::mpsc::SyncSender<Option<Answers>>,
}

impl Question {
    /// Gives the asking call the answers (`None`: nobody answered).
    pub fn answer(self, answers: Option<Answers>) {
        let _ = self.answer.send(answers);
    }
}

/// The asking end, held by a call's UI.
#[derive(Clone)]
pub struct Questions {
    sender: UnboundedSender<Question>,
}

impl Questions {
    /// A pair: the asking end, and the receiving end the request waiting for the call holds.
    pub fn channel() -> (Self, UnboundedReceiver<Question>) {
        let (sender, receiver) = unbounded_channel();
        (Self { sender }, receiver)
    }

    /// Asks the form `message` with `schema` from a call's thread and waits for the answer.
    pub fn elicit(
        &self,
        message: &str,
        schema: Value,
        cancellation: &Arc<Cancellation>,
        limit: Duration,
    ) -> Option<Answer> {
        let form = json!({"method": "elicitation/create",
            "params": {"message": message, "requestedSchema": schema}});
        let requests = Map::from_iter([(QUESTION_KEY.to_string(), form)]);
        let answers = self.ask(requests, cancellation, limit)?;
        let result: ElicitResult =
            serde_json::from_value(answers.get(QUESTION_KEY)?.clone()).ok()?;
        Some((result.action, result.content.unwrap_or(Value::Null)))
    }

    /// Asks `requests` from a call's thread and waits for the answers: `None` when nobody
    /// takes the question, `cancellation` comes first, or `limit` passes.
    pub fn ask(
        &self,
        requests: Map<String, Value>,
        cancellation: &Arc<Cancellation>,
        limit: Duration,
    ) -> Option<Answers> {
        let (answer, answered) = std::sync::mpsc::sync_channel(1);
        self.sender.send(Question { requests, answer }).ok()?;
        let deadline = Instant::now() + limit;
        loop {
            if cancellation.is_cancelled() {
                return None;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::warn!(target: "toolhost::elicitation", "no answer within {} s ([limits] ask_timeout_secs)", limit.as_secs());
                return None;
            }
            match answered.recv_timeout(left.min(CANCEL_POLL)) {
                Ok(answer) => return answer,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    }
}
