//! One call of a team tool: who calls, on which team, within which call's services, and what
//! the tools share to read their checked input and to log.

use serde_json::{Map, Value};
use tool_api::sdk::Ctx;

use crate::board::LogEntry;
use crate::store::{now, Envelope, Store};

/// Who calls, on which team, within which call.
pub struct Session<'a, 'c> {
    /// The call's services (a teammate's run uses them for the model and the host's tools).
    pub ctx: &'a Ctx<'c>,
    /// The team.
    pub store: &'a Store,
    /// The calling member.
    pub requester: &'a str,
    /// Calls a team tool in a session (the tool table, for a teammate's calls).
    pub dispatch: Dispatch,
}

/// The team's tool table: [`crate::tools::call`].
pub type Dispatch = fn(&Session<'_, '_>, &str, &Value) -> Result<String, String>;

impl<'a, 'c> Session<'a, 'c> {
    /// The same team and call, with `requester` calling.
    pub fn as_member(&self, requester: &'a str) -> Self {
        Self {
            ctx: self.ctx,
            store: self.store,
            requester,
            dispatch: self.dispatch,
        }
    }

    /// Calls team tool `name` with `params` in this session.
    pub fn call(&self, name: &str, params: &Value) -> Result<String, String> {
        (self.dispatch)(self, name, params)
    }
}

/// A string field of checked input.
pub fn text<'a>(input: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    input.get(field).and_then(Value::as_str)
}

/// A string field of checked input that the schema requires.
pub fn required<'a>(input: &'a Map<String, Value>, field: &str) -> &'a str {
    text(input, field).unwrap_or_default()
}

/// A mission log entry by `agent_id`, with the next id.
pub fn entry(e: &mut Envelope, agent_id: &str, kind: &str, summary: &str) -> LogEntry {
    LogEntry {
        id: e.next_id("log", 6),
        ts: now(),
        team_id: e.team_state.team_id.clone(),
        agent_id: agent_id.to_string(),
        task_id: None,
        kind: kind.to_string(),
        summary: summary.to_string(),
        evidence: None,
        next_action: None,
    }
}
