//! What a command's connections are decided under ([`Grant`]), and who answers the
//! proxy's questions ([`Asker`]).

use std::sync::Arc;

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

/// What a command's connections are decided under: its task and tool, the policy, who is
/// asked.
pub struct Grant {
    /// The task.
    pub task: String,
    /// The tool that runs the command.
    pub tool: String,
    /// The policy of the host's settings.
    pub policy: Policy,
    /// Who answers.
    pub asker: Arc<dyn Asker>,
}
