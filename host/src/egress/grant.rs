//! What a command's connections are decided under ([`Grant`]), and who answers the
//! proxy's questions ([`Asker`]).

use std::sync::{Arc, Mutex, PoisonError};

use super::policy::Policy;

/// What the user answered to "may this connection be made?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Allowed for the rest of the task: by whom (the user, `--yes`).
    ThisTask(&'static str),
    /// Allowed from now on: written to the allowed file.
    Always,
    /// Refused: by whom (the user, nobody to ask, a subagent's rule).
    Refused(String),
}

/// Who answers the proxy's questions for one command: the frontend's user, under the
/// session's approval mode.
pub trait Asker: Send + Sync {
    /// Asks `question`.
    fn ask(&self, question: &str) -> Answer;
}

/// What a tool call's connections (its commands', or its own requests') are decided under:
/// its task and tool, the policy, who is asked; and the refusals it has not been told of.
pub struct Grant {
    /// The task.
    pub task: String,
    /// The tool.
    pub tool: String,
    /// The policy of the host's settings (with the tool's configured endpoints allowed).
    pub policy: Policy,
    /// Who answers.
    pub asker: Arc<dyn Asker>,
    refusals: Mutex<Vec<String>>,
}

/// Refusals kept for a tool to read, at most (the oldest go first).
const KEPT_REFUSALS: usize = 16;

impl Grant {
    /// A grant for `tool`'s calls in `task`.
    pub fn new(task: String, tool: String, policy: Policy, asker: Arc<dyn Asker>) -> Self {
        Self {
            task,
            tool,
            policy,
            asker,
            refusals: Mutex::new(Vec::new()),
        }
    }

    /// Keeps why a connection was refused, for [`Grant::take_refusals`].
    pub fn refused(&self, message: &str) {
        let mut refusals = self.refusals.lock().unwrap_or_else(PoisonError::into_inner);
        if refusals.len() == KEPT_REFUSALS {
            refusals.remove(0);
        }
        refusals.push(message.to_string());
    }

    /// The refusals since the last call (a tool explains a failed request with them).
    pub fn take_refusals(&self) -> Vec<String> {
        std::mem::take(&mut *self.refusals.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
