//! Questions a call asks through the request that waits for it, instead of as requests of
//! their own: a 2026-07-28 client is asked by an `InputRequiredResult` ([`super::input_required`])
//! or by its task's status ([`super::tasks`]). The call's thread sends the form and waits;
//! the protocol's side takes it out with the request and brings the answer back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::ElicitationAction;
use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::plugins::handler::Cancellation;

/// What the user answered to a form: the action and the form's content.
pub type Answer = (ElicitationAction, Value);

/// How often a waiting question looks at its call's cancellation.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// A form for the client's user, and where its answer goes.
pub struct Question {
    /// What the form says.
    pub message: String,
    /// The form's JSON schema.
    pub schema: Value,
    answer: std::sync::mpsc::SyncSender<Option<Answer>>,
}

impl Question {
    /// Gives the asking call its answer (`None`: nobody answered).
    pub fn answer(self, answer: Option<Answer>) {
        let _ = self.answer.send(answer);
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

    /// Asks `message` with `schema` from a call's thread and waits for the answer: `None`
    /// when nobody takes the question, `cancellation` comes first, or `limit` passes.
    pub fn ask(
        &self,
        message: &str,
        schema: Value,
        cancellation: &Arc<Cancellation>,
        limit: Duration,
    ) -> Option<Answer> {
        let (answer, answered) = std::sync::mpsc::sync_channel(1);
        let question = Question {
            message: message.to_string(),
            schema,
            answer,
        };
        self.sender.send(question).ok()?;
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
