//! The team's shared state, as Cline's SDK keeps it (`TeamRuntimeState`): the members, the
//! task board, the async runs, the mailbox, the mission log, and the outcomes with their
//! fragments. Field names and order are Cline's, so the state file and the tools' answers read
//! as Cline's do. Times are RFC 3339 with milliseconds, as JavaScript writes them.
//!
//! The operations here are the board's rules, with Cline's error texts; who may call them and
//! how the state is kept are [`crate::tools`]' and [`crate::store`]'s.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The lead's member id (Cline's default; its CLI uses the session's id).
pub const LEAD: &str = "lead";

/// The state of one team.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Board {
    /// The team's id (`t_` and ten characters), made once and kept.
    pub team_id: String,
    /// The team's name.
    pub team_name: String,
    /// The lead first, then the teammates in the order they joined.
    pub members: Vec<Member>,
    /// The task board.
    pub tasks: Vec<Task>,
    /// Every message sent.
    pub mailbox: Vec<Mail>,
    /// The mission log, oldest first.
    pub mission_log: Vec<LogEntry>,
    /// The async runs.
    pub runs: Vec<Run>,
    /// The outcomes.
    pub outcomes: Vec<Outcome>,
    /// Their fragments.
    pub outcome_fragments: Vec<Fragment>,
}

/// A member of the team.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    /// Its id.
    pub agent_id: String,
    /// `lead` or `teammate`.
    pub role: String,
    /// A teammate's role prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `idle`, `running` or `stopped`.
    pub status: String,
    /// The lease of the process running it, while it runs ([`crate::lease`]); not part of
    /// Cline's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_in: Option<String>,
}

/// A task of the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// `task_0001`, ...
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its details.
    pub description: String,
    /// `pending`, `in_progress`, `blocked` or `completed`.
    pub status: String,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// Who created it.
    pub created_by: String,
    /// Who has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    /// The tasks it waits for.
    pub depends_on: Vec<String>,
    /// Why it is blocked, or what its completion said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// A mailbox message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mail {
    /// `msg_00001`, ...
    pub id: String,
    /// The team's id.
    pub team_id: String,
    /// The sender.
    pub from_agent_id: String,
    /// The recipient.
    pub to_agent_id: String,
    /// Its subject.
    pub subject: String,
    /// Its body.
    pub body: String,
    /// The task it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// When it was sent.
    pub sent_at: String,
    /// When its recipient read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_at: Option<String>,
}

/// A mission log entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    /// `log_000001`, ...
    pub id: String,
    /// When.
    pub ts: String,
    /// The team's id.
    pub team_id: String,
    /// Who wrote it.
    pub agent_id: String,
    /// The task it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// `progress`, `handoff`, `blocked`, `decision`, `done` or `error`.
    pub kind: String,
    /// What happened.
    pub summary: String,
    /// Links or snippets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<String>>,
    /// What comes next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_action: Option<String>,
}

/// An async teammate run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// `run_00001`, ...
    pub id: String,
    /// The teammate.
    pub agent_id: String,
    /// The task it is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// `queued`, `running`, `completed`, `failed`, `cancelled` or `interrupted`.
    pub status: String,
    /// What the teammate is asked.
    pub message: String,
    /// Higher runs first (always 0 from the tools).
    pub priority: i64,
    /// Retries made (none from the tools).
    pub retry_count: u64,
    /// Retries allowed.
    pub max_retries: u64,
    /// Whether the teammate continues its last conversation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_conversation: Option<bool>,
    /// When it started (the epoch while queued).
    pub started_at: String,
    /// When it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// The lease of the process running it ([`crate::lease`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_owner: Option<String>,
    /// When it last showed life.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heartbeat_at: Option<String>,
    /// When it last made progress.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_progress_at: Option<String>,
    /// Its last progress note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_progress_message: Option<String>,
    /// What it is doing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_activity: Option<String>,
    /// Why it failed or was cancelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The teammate's result (Cline's `AgentResult`, without its transcript).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// An outcome the team converges on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// `out_0001`, ...
    pub id: String,
    /// The team's id.
    pub team_id: String,
    /// Its title.
    pub title: String,
    /// `draft`, `in_review` or `finalized`.
    pub status: String,
    /// The sections a reviewed fragment must cover before it is final.
    pub required_sections: Vec<String>,
    /// Who created it.
    pub created_by: String,
    /// When.
    pub created_at: String,
    /// When it was finalized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finalized_at: Option<String>,
}

/// A fragment of an outcome's section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fragment {
    /// `frag_00001`, ...
    pub id: String,
    /// The team's id.
    pub team_id: String,
    /// Its outcome.
    pub outcome_id: String,
    /// Its section.
    pub section: String,
    /// Who wrote it.
    pub source_agent_id: String,
    /// The run it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_run_id: Option<String>,
    /// Its text.
    pub content: String,
    /// `draft`, `reviewed` or `rejected`.
    pub status: String,
    /// Who reviewed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewed_by: Option<String>,
    /// When.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewed_at: Option<String>,
    /// When it was attached.
    pub created_at: String,
}

impl Board {
    /// A new team named `team_name` with id `team_id`: the lead alone.
    pub fn new(team_id: String, team_name: String) -> Self {
        Self {
            team_id,
            team_name,
            members: vec![Member {
                agent_id: LEAD.to_string(),
                role: "lead".to_string(),
                description: None,
                status: "idle".to_string(),
                running_in: None,
            }],
            ..Self::default()
        }
    }

    /// The member `agent_id`.
    pub fn member(&self, agent_id: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.agent_id == agent_id)
    }

    /// The member `agent_id`, to change.
    pub fn member_mut(&mut self, agent_id: &str) -> Option<&mut Member> {
        self.members.iter_mut().find(|m| m.agent_id == agent_id)
    }

    /// Whether `agent_id` is the lead.
    pub fn is_lead(&self, agent_id: &str) -> bool {
        self.member(agent_id).is_some_and(|m| m.role == "lead")
    }

    /// The teammate `agent_id`, or Cline's error.
    pub fn teammate_mut(&mut self, agent_id: &str) -> Result<&mut Member, String> {
        self.members
            .iter_mut()
            .find(|m| m.agent_id == agent_id && m.role == "teammate")
            .ok_or_else(|| format!("Teammate \"{agent_id}\" was not found"))
    }

    /// The task `task_id`, to change, or Cline's error.
    pub fn task_mut(&mut self, task_id: &str) -> Result<&mut Task, String> {
        self.tasks
            .iter_mut()
            .find(|t| t.id == task_id)
            .ok_or_else(|| format!("Task \"{task_id}\" was not found"))
    }

    /// The dependencies of `task` that are not completed (missing ones included).
    pub fn blocked_by(&self, task: &Task) -> Vec<String> {
        task.depends_on
            .iter()
            .filter(|id| {
                !self
                    .tasks
                    .iter()
                    .any(|t| &t.id == *id && t.status == "completed")
            })
            .cloned()
            .collect()
    }

    /// The run `run_id`, to change, or Cline's error.
    pub fn run_mut(&mut self, run_id: &str) -> Result<&mut Run, String> {
        self.runs
            .iter_mut()
            .find(|r| r.id == run_id)
            .ok_or_else(|| format!("Run \"{run_id}\" was not found"))
    }

    /// Appends a mission log entry by a member, or Cline's error for someone else.
    pub fn log(&mut self, entry: LogEntry) -> Result<String, String> {
        if self.member(&entry.agent_id).is_none() {
            return Err(format!("Unknown team member \"{}\"", entry.agent_id));
        }
        let id = entry.id.clone();
        self.mission_log.push(entry);
        Ok(id)
    }

    /// The unread messages to `agent_id`, marked read at `now`.
    pub fn take_unread(&mut self, agent_id: &str, now: &str) -> Vec<Mail> {
        let mut taken = Vec::new();
        for mail in &mut self.mailbox {
            if mail.to_agent_id == agent_id && mail.read_at.is_none() {
                mail.read_at = Some(now.to_string());
                taken.push(mail.clone());
            }
        }
        taken
    }

    /// Removes everything but the lead (Cline's `cleanup`), or says what still runs.
    pub fn clean_up(&mut self) -> Result<(), String> {
        if let Some(busy) = self
            .members
            .iter()
            .find(|m| m.role == "teammate" && m.running_in.is_some())
        {
            return Err(format!(
                "Cannot cleanup team while teammate \"{}\" is still running",
                busy.agent_id
            ));
        }
        if self.runs.iter().any(|r| is_active(&r.status)) {
            return Err("Cannot cleanup team while async teammate runs are still active".into());
        }
        self.members.retain(|m| m.role == "lead");
        self.tasks.clear();
        self.mailbox.clear();
        self.mission_log.clear();
        self.runs.clear();
        self.outcomes.clear();
        self.outcome_fragments.clear();
        Ok(())
    }
}

/// Whether a run's `status` is queued or running.
pub fn is_active(status: &str) -> bool {
    status == "queued" || status == "running"
}

/// The text a teammate's run starts with when mail waits for it: the messages, then its task.
pub fn with_mail(mail: &[Mail], message: &str) -> String {
    if mail.is_empty() {
        return message.to_string();
    }
    let mut text = format!("[MAILBOX] You have {} unread message(s):\n", mail.len());
    for m in mail {
        text.push_str(&format!(
            "--- Message from {} | subject: {} ---\n{}\n",
            m.from_agent_id, m.subject, m.body
        ));
    }
    text.push_str("---\n\n");
    text.push_str(message);
    text
}

/// `value` with its whitespace runs made single spaces, cut to `max` characters with "..."
/// (Cline's previews).
pub fn preview(value: &str, max: usize) -> String {
    let normalized = value.split_whitespace().collect::<Vec<_>>().join(" ");
    if normalized.chars().count() <= max {
        return normalized;
    }
    let kept: String = normalized.chars().take(max.saturating_sub(3)).collect();
    format!("{}...", kept.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mail_comes_before_the_task() {
        let mail = Mail {
            id: "msg_00001".into(),
            team_id: "t".into(),
            from_agent_id: "lead".into(),
            to_agent_id: "ana".into(),
            subject: "Fixtures".into(),
            body: "Use tests/".into(),
            task_id: None,
            sent_at: "now".into(),
            read_at: None,
        };
        assert_eq!(with_mail(&[], "Go"), "Go");
        assert_eq!(
            with_mail(&[mail], "Go"),
            "[MAILBOX] You have 1 unread message(s):\n--- Message from lead | subject: Fixtures ---\nUse tests/\n---\n\nGo"
        );
    }

    #[test]
    fn previews_collapse_and_cut() {
        assert_eq!(preview("a\n\n b  c", 10), "a b c");
        assert_eq!(preview("abcdefghijk", 8), "abcde...");
    }
}
