//! One teammate at work (Cline's `routeToTeammate`): it is marked running under this
//! process's lease, its unread mail comes before its task, it converses with the model until
//! it answers, and then it is idle again, with its conversation kept and the run logged.
//!
//! A teammate is a sub-agent on the `[llm]` endpoint with its role prompt as system prompt. It
//! is offered the host's tools (but those that start agents) and the team tools (but
//! spawning), which it calls as itself: the host's through the host's full dispatch as a
//! subagent's calls, the team's here with the teammate as the caller. Between two steps it
//! stops when it was shut down or its run was cancelled.

use agent_support::agent_loop::{self, Agent, Outcome, RunError};
use agent_support::conversation::{parse_arguments, Message, ToolDef, ToolRequest};
use agent_support::llm::{max_turns, LlmSettings};
use serde_json::Value;

use crate::board::with_mail;
use crate::session::{entry, Session};
use crate::specs;
use crate::store::{now, Envelope};

/// The tools that start agents of their own, which a teammate is not offered (Cline gives
/// teammates neither spawn_agent nor the team's spawning).
const NOT_FOR_TEAMMATES: &[&str] = &["spawn_agent", specs::SPAWN];

/// Cline's words for a run that ended because its teammate was shut down.
pub const ABORTED: &str = "This operation was aborted";

/// How a teammate's work ended without an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unanswered {
    /// It failed: Cline's error text.
    Failed(String),
    /// It was shut down, or its run cancelled, between two steps.
    Stopped,
    /// The call it ran in was cancelled: its mail is unread again.
    Cancelled,
}

/// A piece of work for a teammate.
#[derive(Debug, Clone, Copy)]
pub struct Work<'a> {
    /// The teammate.
    pub agent_id: &'a str,
    /// What it is asked.
    pub message: &'a str,
    /// The board task it is for.
    pub task_id: Option<&'a str>,
    /// Whether it continues its last conversation.
    pub continued: bool,
    /// The async run it is, if it is one.
    pub run_id: Option<&'a str>,
}

/// Runs `work` to the teammate's answer.
pub fn route(session: &Session<'_, '_>, work: Work<'_>) -> Result<Outcome, Unanswered> {
    if session.ctx.is_cancelled() {
        return Err(Unanswered::Cancelled);
    }
    let lease = session.store.lease().map_err(Unanswered::Failed)?;
    let agent_id = work.agent_id;
    let (role, mut messages, read) = session
        .store
        .update(|e| {
            let member = e.team_state.teammate_mut(agent_id)?;
            if member.running_in.is_some() {
                return Err(
                    "Cannot start a new run while another run is already in progress".into(),
                );
            }
            if member.status == "stopped" {
                return Err(format!(
                    "Teammate \"{agent_id}\" was shut down; team_spawn_teammate starts it again."
                ));
            }
            member.status = "running".to_string();
            member.running_in = Some(lease.clone());
            let role = member.description.clone().unwrap_or_default();
            let mail = e.team_state.take_unread(agent_id, &now());
            let mut history = match work.continued {
                true => e.conversations.get(agent_id).cloned().unwrap_or_default(),
                false => Vec::new(),
            };
            history.push(Message::User(vec![with_mail(&mail, work.message)]));
            let read: Vec<String> = mail.into_iter().map(|m| m.id).collect();
            Ok((role, history, read))
        })
        .map_err(Unanswered::Failed)?;
    // A panic in the run is its failure: the teammate is let go all the same.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        converse(session, work, role.trim(), &mut messages)
    }))
    .unwrap_or_else(|panic| {
        Err(Unanswered::Failed(format!(
            "The teammate's run stopped: {}",
            tool_api::sdk::panic_message(panic.as_ref())
        )))
    });
    let record = |e: &mut Envelope| {
        if let Ok(member) = e.team_state.teammate_mut(agent_id) {
            member.running_in = None;
            if member.status == "running" {
                member.status = "idle".to_string();
            }
        }
        let summary = match &result {
            Ok(outcome) => {
                e.conversations
                    .insert(agent_id.to_string(), messages.clone());
                let text = format!(
                    "Completed a delegated run ({} iterations)",
                    outcome.iterations
                );
                Some(("progress", text))
            }
            Err(Unanswered::Failed(error)) => Some(("error", error.clone())),
            Err(Unanswered::Stopped) => None,
            Err(Unanswered::Cancelled) => {
                for mail in &mut e.team_state.mailbox {
                    if read.contains(&mail.id) {
                        mail.read_at = None;
                    }
                }
                None
            }
        };
        if let Some((kind, text)) = summary {
            let mut logged = entry(e, agent_id, kind, &text);
            logged.task_id = work.task_id.map(str::to_string);
            e.team_state.log(logged)?;
        }
        Ok(())
    };
    if let Err(error) = session.store.update(record) {
        // The answer is not lost for a failed record: the teammate is let go at least.
        session
            .ctx
            .log_warn(&format!("The team's run could not be recorded: {error}"));
        let _ = session.store.update(|e| {
            if let Ok(member) = e.team_state.teammate_mut(agent_id) {
                member.running_in = None;
                if member.status == "running" {
                    member.status = "idle".to_string();
                }
            }
            Ok(())
        });
    }
    result
}

/// Whether the teammate was shut down, or its run cancelled, since it started.
fn stopped(session: &Session<'_, '_>, work: Work<'_>) -> bool {
    session
        .store
        .read(|e| {
            let shut_down = e
                .team_state
                .member(work.agent_id)
                .is_none_or(|m| m.status == "stopped");
            let cancelled = work.run_id.is_some_and(|id| {
                e.team_state
                    .runs
                    .iter()
                    .any(|r| r.id == id && r.status == "cancelled")
            });
            shut_down || cancelled
        })
        .unwrap_or(false)
}

/// The teammate's conversation, from `messages` (which end with its task) to its answer.
fn converse(
    session: &Session<'_, '_>,
    work: Work<'_>,
    role: &str,
    messages: &mut Vec<Message>,
) -> Result<Outcome, Unanswered> {
    let ctx = session.ctx;
    let llm =
        LlmSettings::read(ctx, "team_run_task").map_err(|e| Unanswered::Failed(e.to_string()))?;
    let api_key = llm
        .api_key()
        .map_err(|e| Unanswered::Failed(e.to_string()))?;
    let mut offered = agent_support::host_tools(ctx, &llm)
        .map_err(|e| Unanswered::Failed(e.message.to_string()))?;
    offered.retain(|tool| {
        !NOT_FOR_TEAMMATES.contains(&tool.name.as_str()) && specs::find(&tool.name).is_none()
    });
    offered.extend(
        specs::all()
            .iter()
            .filter(|spec| !NOT_FOR_TEAMMATES.contains(&spec.name.as_str()))
            .map(|spec| ToolDef {
                name: spec.name.clone(),
                description: spec.description.clone(),
                schema: spec.input_schema.clone(),
            }),
    );
    let agent = Agent {
        system: role,
        tools: &offered,
        max_turns: max_turns(ctx).map_err(|e| Unanswered::Failed(e.to_string()))?,
    };
    let teammate = session.as_member(work.agent_id);
    let respond = |request: &ToolRequest| answer(&teammate, &offered, request);
    let stop = || stopped(session, work);
    agent_loop::run(
        ctx,
        &llm,
        api_key.as_deref(),
        agent,
        messages,
        &respond,
        &stop,
    )
    .map_err(|e| match e {
        RunError::Cancelled => Unanswered::Cancelled,
        RunError::Stopped => Unanswered::Stopped,
        RunError::Request(message) => Unanswered::Failed(message),
    })
}

/// What the teammate reads as the result of one of its tool calls.
fn answer(teammate: &Session<'_, '_>, offered: &[ToolDef], request: &ToolRequest) -> String {
    if !offered.iter().any(|tool| tool.name == request.name) {
        return tool_api::texts::tool_error(&format!("Tool '{}' is not available.", request.name));
    }
    let arguments = match parse_arguments(&request.raw_arguments) {
        Ok(arguments) => arguments,
        Err(message) => return tool_api::texts::tool_error(&message),
    };
    if specs::find(&request.name).is_some() {
        return match teammate.call(&request.name, &Value::Object(arguments)) {
            Ok(answer) => answer,
            Err(error) => tool_api::texts::tool_error(&error),
        };
    }
    agent_support::call_through_host(teammate.ctx, &request.name, arguments)
}
