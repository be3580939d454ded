//! The 18 team tools, for the lead and for its teammates alike: each checks its input as
//! Cline's SDK does, acts on the board as the member who called it, and answers Cline's JSON.
//! The caller's identity never comes from the input: the lead is whoever calls through the
//! host, a teammate is the one whose run made the call.

use serde_json::{json, Map, Value};

use crate::board::{Mail, Outcome, Task};
use crate::session::{entry, required, text, Session};
use crate::store::{now, Envelope};
use crate::{input, runs, specs};

/// The sections an outcome needs when its creator names none (Cline's default).
const DEFAULT_SECTIONS: [&str; 3] = ["current_state", "boundary_analysis", "interface_proposal"];

/// The text `team_task` claim answers with.
const CLAIM_NEXT_STEP: &str = "Task is now in_progress. Execute the work using team_run_task or your own tools, then call team_task with action=complete when done.";

/// Calls team tool `name` with `params`: Cline's answer as JSON, or its error.
pub fn call(session: &Session<'_, '_>, name: &str, params: &Value) -> Result<String, String> {
    let spec = specs::find(name).ok_or_else(|| format!("Tool '{name}' is not available."))?;
    let input = input::check(name, &spec.input_schema, params)?;
    let answer = match name {
        "team_spawn_teammate" => runs::spawn(session, &input)?,
        "team_shutdown_teammate" => shutdown(session, &input)?,
        "team_status" => session.store.read(status)?,
        "team_task" if text(&input, "action") == Some("list") => {
            session.store.read(|e| list_tasks(e, &input))?
        }
        "team_task" => session
            .store
            .update(|e| task(e, session.requester, &input, params))?,
        "team_run_task" => runs::run_task(session, &input)?,
        "team_cancel_run" => runs::cancel(session, &input)?,
        "team_list_runs" => runs::list(session, &input)?,
        "team_await_runs" => runs::await_runs(session, &input)?,
        "team_send_message" => session
            .store
            .update(|e| send(e, session.requester, &input))?,
        "team_broadcast" => session
            .store
            .update(|e| broadcast(e, session.requester, &input))?,
        "team_read_mailbox" => session
            .store
            .update(|e| Ok(read(e, session.requester, &input)))?,
        "team_mission_log" => session
            .store
            .update(|e| log(e, session.requester, &input))?,
        "team_cleanup" => session.store.update(|e| cleanup(e, session.requester))?,
        "team_create_outcome" => session
            .store
            .update(|e| Ok(create(e, session.requester, &input)))?,
        "team_attach_outcome_fragment" => session
            .store
            .update(|e| attach(e, session.requester, &input))?,
        "team_review_outcome_fragment" => session
            .store
            .update(|e| review(e, session.requester, &input))?,
        "team_finalize_outcome" => session.store.update(|e| finalize(e, &input))?,
        "team_list_outcomes" => session.store.read(|e| json!(e.team_state.outcomes))?,
        other => return Err(format!("Tool '{other}' is not available.")),
    };
    Ok(answer.to_string())
}

fn owned(input: &Map<String, Value>, field: &str) -> Option<String> {
    text(input, field).map(str::to_string)
}

fn shutdown(session: &Session<'_, '_>, input: &Map<String, Value>) -> Result<Value, String> {
    session.store.update(|e| {
        let board = &mut e.team_state;
        if !board.is_lead(session.requester) {
            return Err("Only the lead agent can manage teammates.".to_string());
        }
        let agent_id = required(input, "agentId");
        board.teammate_mut(agent_id)?.status = "stopped".to_string();
        Ok(json!({"agentId": agent_id, "status": "stopped"}))
    })
}

/// Cline's `getSnapshot`.
fn status(e: &Envelope) -> Value {
    let board = &e.team_state;
    let count = |list: Vec<&str>, of: &[&str]| -> Map<String, Value> {
        of.iter()
            .map(|s| {
                (
                    s.to_string(),
                    json!(list.iter().filter(|x| **x == *s).count()),
                )
            })
            .collect()
    };
    let members: Vec<Value> = board
        .members
        .iter()
        .map(|m| {
            let mut member = json!({"agentId": m.agent_id, "role": m.role});
            if let Some(description) = &m.description {
                member["description"] = json!(description);
            }
            member["status"] = json!(m.status);
            member
        })
        .collect();
    let tasks = board.tasks.iter().map(|t| t.status.as_str()).collect();
    let outcomes = board.outcomes.iter().map(|o| o.status.as_str()).collect();
    json!({
        "teamId": board.team_id,
        "teamName": board.team_name,
        "members": members,
        "taskCounts": count(tasks, &["pending", "in_progress", "blocked", "completed"]),
        "unreadMessages": board.mailbox.iter().filter(|m| m.read_at.is_none()).count(),
        "missionLogEntries": board.mission_log.len(),
        "activeRuns": board.runs.iter().filter(|r| r.status == "running").count(),
        "queuedRuns": board.runs.iter().filter(|r| r.status == "queued").count(),
        "outcomeCounts": count(outcomes, &["draft", "in_review", "finalized"]),
    })
}

/// `team_task`'s list: the tasks (by status and assignee, when given), each with whether it
/// is ready and what blocks it.
fn list_tasks(e: &Envelope, input: &Map<String, Value>) -> Value {
    let board = &e.team_state;
    let tasks: Vec<Value> = board
        .tasks
        .iter()
        .filter(|t| text(input, "status").is_none_or(|s| t.status == s))
        .filter(|t| text(input, "assignee").is_none_or(|a| t.assignee.as_deref() == Some(a)))
        .map(|t| {
            let blocked_by = board.blocked_by(t);
            let mut item = json!(t);
            item["isReady"] =
                json!(t.status == "pending" && t.assignee.is_none() && blocked_by.is_empty());
            item["blockedBy"] = json!(blocked_by);
            item
        })
        .collect();
    json!({"action": "list", "tasks": tasks})
}

fn task(
    e: &mut Envelope,
    requester: &str,
    input: &Map<String, Value>,
    raw: &Value,
) -> Result<Value, String> {
    let action = required(input, "action");
    let now = now();
    match action {
        "create" => {
            let assignee = owned(input, "assignee");
            let task = Task {
                id: e.next_id("task", 4),
                title: required(input, "title").to_string(),
                description: required(input, "description").to_string(),
                status: if assignee.is_some() {
                    "in_progress"
                } else {
                    "pending"
                }
                .to_string(),
                created_at: now.clone(),
                updated_at: now,
                created_by: requester.to_string(),
                assignee,
                depends_on: input
                    .get("dependsOn")
                    .and_then(Value::as_array)
                    .map(|ids| {
                        ids.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
                summary: None,
            };
            let mut answer = json!({"action": "create", "taskId": task.id, "status": task.status});
            // The fields of other actions, which create ignores (as given, in their order).
            let ignored: Vec<&str> = raw
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| {
                    ["status", "taskId", "summary", "reason"].contains(&k.as_str()) && !v.is_null()
                })
                .map(|(k, _)| k.as_str())
                .collect();
            if !ignored.is_empty() {
                answer["ignoredFields"] = json!(ignored);
                answer["note"] = json!(format!(
                    "Ignored fields for action=create: {}",
                    ignored.join(", ")
                ));
            }
            e.team_state.tasks.push(task);
            Ok(answer)
        }
        "list" => Ok(list_tasks(e, input)),
        _ => {
            let task_id = required(input, "taskId");
            let found = e.team_state.task_mut(task_id)?.clone();
            let (status, kind, summary) = match action {
                "claim" => {
                    if let Some(first) = e.team_state.blocked_by(&found).first() {
                        return Err(format!("Task \"{task_id}\" is blocked by \"{first}\""));
                    }
                    (
                        "in_progress",
                        "progress",
                        format!("Claimed task \"{}\"", found.title),
                    )
                }
                "complete" => ("completed", "done", required(input, "summary").to_string()),
                _ => ("blocked", "blocked", required(input, "reason").to_string()),
            };
            let task = e.team_state.task_mut(task_id)?;
            task.status = status.to_string();
            task.updated_at = now;
            match action {
                "claim" => task.assignee = Some(requester.to_string()),
                "complete" => {
                    task.summary = Some(summary.clone());
                    task.assignee.get_or_insert_with(|| requester.to_string());
                }
                _ => task.summary = Some(summary.clone()),
            }
            let mut logged = entry(e, requester, kind, &summary);
            logged.task_id = Some(task_id.to_string());
            e.team_state.log(logged)?;
            let mut answer = json!({"action": action, "taskId": task_id, "status": status});
            if action == "claim" {
                answer["nextStep"] = json!(CLAIM_NEXT_STEP);
            }
            Ok(answer)
        }
    }
}

/// A message from `from` to `to`, or Cline's error for an unknown member.
fn mail(
    e: &mut Envelope,
    from: &str,
    to: &str,
    input: &Map<String, Value>,
) -> Result<Mail, String> {
    if e.team_state.member(from).is_none() {
        return Err(format!("Unknown sender \"{from}\""));
    }
    if e.team_state.member(to).is_none() {
        return Err(format!("Unknown recipient \"{to}\""));
    }
    let message = Mail {
        id: e.next_id("msg", 5),
        team_id: e.team_state.team_id.clone(),
        from_agent_id: from.to_string(),
        to_agent_id: to.to_string(),
        subject: required(input, "subject").to_string(),
        body: required(input, "body").to_string(),
        task_id: owned(input, "taskId"),
        sent_at: now(),
        read_at: None,
    };
    e.team_state.mailbox.push(message.clone());
    Ok(message)
}

fn send(e: &mut Envelope, requester: &str, input: &Map<String, Value>) -> Result<Value, String> {
    let sent = mail(e, requester, required(input, "toAgentId"), input)?;
    Ok(json!({"id": sent.id, "toAgentId": sent.to_agent_id}))
}

fn broadcast(
    e: &mut Envelope,
    requester: &str,
    input: &Map<String, Value>,
) -> Result<Value, String> {
    let recipients: Vec<String> = e
        .team_state
        .members
        .iter()
        .filter(|m| m.agent_id != requester && m.role != "lead")
        .map(|m| m.agent_id.clone())
        .collect();
    for to in &recipients {
        mail(e, requester, to, input)?;
    }
    Ok(json!({"delivered": recipients.len()}))
}

fn read(e: &mut Envelope, requester: &str, input: &Map<String, Value>) -> Value {
    let unread_only = input
        .get("unreadOnly")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let now = now();
    let mut read = Vec::new();
    for message in &mut e.team_state.mailbox {
        if message.to_agent_id == requester && (!unread_only || message.read_at.is_none()) {
            message.read_at.get_or_insert_with(|| now.clone());
            read.push(message.clone());
        }
    }
    json!(read)
}

fn log(e: &mut Envelope, requester: &str, input: &Map<String, Value>) -> Result<Value, String> {
    let mut logged = entry(
        e,
        requester,
        required(input, "kind"),
        required(input, "summary"),
    );
    logged.task_id = owned(input, "taskId");
    logged.next_action = owned(input, "nextAction");
    logged.evidence = input
        .get("evidence")
        .and_then(Value::as_array)
        .filter(|items| !items.is_empty())
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        });
    let id = e.team_state.log(logged)?;
    Ok(json!({"id": id}))
}

fn cleanup(e: &mut Envelope, requester: &str) -> Result<Value, String> {
    if !e.team_state.is_lead(requester) {
        return Err("Only the lead agent can run cleanup.".to_string());
    }
    e.team_state.clean_up()?;
    e.conversations.clear();
    Ok(json!({"status": "cleaned"}))
}

fn create(e: &mut Envelope, requester: &str, input: &Map<String, Value>) -> Value {
    let mut sections: Vec<String> = Vec::new();
    let given = input.get("requiredSections").and_then(Value::as_array);
    let named: Vec<String> = match given {
        Some(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        None => DEFAULT_SECTIONS.iter().map(|s| s.to_string()).collect(),
    };
    for section in named {
        if !sections.contains(&section) {
            sections.push(section);
        }
    }
    let outcome = Outcome {
        id: e.next_id("out", 4),
        team_id: e.team_state.team_id.clone(),
        title: required(input, "title").to_string(),
        status: "draft".to_string(),
        required_sections: sections,
        created_by: requester.to_string(),
        created_at: now(),
        finalized_at: None,
    };
    let answer = json!({"outcomeId": outcome.id, "status": outcome.status, "requiredSections": outcome.required_sections});
    e.team_state.outcomes.push(outcome);
    answer
}

fn outcome_mut<'a>(e: &'a mut Envelope, id: &str) -> Result<&'a mut Outcome, String> {
    e.team_state
        .outcomes
        .iter_mut()
        .find(|o| o.id == id)
        .ok_or_else(|| format!("Outcome \"{id}\" was not found"))
}

fn attach(e: &mut Envelope, requester: &str, input: &Map<String, Value>) -> Result<Value, String> {
    let outcome_id = required(input, "outcomeId");
    let section = required(input, "section");
    let outcome = outcome_mut(e, outcome_id)?;
    if !outcome.required_sections.iter().any(|s| s == section) {
        return Err(format!(
            "Section \"{section}\" is not part of outcome \"{outcome_id}\""
        ));
    }
    if outcome.status == "draft" {
        outcome.status = "in_review".to_string();
    }
    let fragment = crate::board::Fragment {
        id: e.next_id("frag", 5),
        team_id: e.team_state.team_id.clone(),
        outcome_id: outcome_id.to_string(),
        section: section.to_string(),
        source_agent_id: requester.to_string(),
        source_run_id: owned(input, "sourceRunId").filter(|s| !s.is_empty()),
        content: required(input, "content").to_string(),
        status: "draft".to_string(),
        reviewed_by: None,
        reviewed_at: None,
        created_at: now(),
    };
    let answer = json!({"fragmentId": fragment.id, "status": fragment.status});
    e.team_state.outcome_fragments.push(fragment);
    Ok(answer)
}

fn review(e: &mut Envelope, requester: &str, input: &Map<String, Value>) -> Result<Value, String> {
    let id = required(input, "fragmentId");
    let approved = input.get("approved").and_then(Value::as_bool) == Some(true);
    let fragment = e
        .team_state
        .outcome_fragments
        .iter_mut()
        .find(|f| f.id == id)
        .ok_or_else(|| format!("Fragment \"{id}\" was not found"))?;
    fragment.status = if approved { "reviewed" } else { "rejected" }.to_string();
    fragment.reviewed_by = Some(requester.to_string());
    fragment.reviewed_at = Some(now());
    Ok(json!({"fragmentId": id, "status": fragment.status}))
}

fn finalize(e: &mut Envelope, input: &Map<String, Value>) -> Result<Value, String> {
    let id = required(input, "outcomeId");
    let sections = outcome_mut(e, id)?.required_sections.clone();
    for section in &sections {
        let reviewed = e
            .team_state
            .outcome_fragments
            .iter()
            .any(|f| f.outcome_id == id && &f.section == section && f.status == "reviewed");
        if !reviewed {
            return Err(format!(
                "Outcome \"{id}\" cannot be finalized. Section \"{section}\" is missing a reviewed fragment."
            ));
        }
    }
    let outcome = outcome_mut(e, id)?;
    outcome.status = "finalized".to_string();
    outcome.finalized_at = Some(now());
    Ok(json!({"outcomeId": id, "status": "finalized"}))
}
