//! Spawning teammates and their runs: work routed to a teammate synchronously (the call waits
//! for its answer, [`crate::teammate`]) or as an async run kept on the board, which a
//! `team_await_runs` call runs (two at a time) and waits for.

use std::time::{Duration, Instant};

use agent_support::agent_loop::Outcome;
use agent_support::llm::subagents_enabled;
use serde_json::{json, Map, Value};

use crate::board::{is_active, preview, Member, Run, LEAD};
use crate::session::{required, text, Session};
use crate::specs;
use crate::store::{now, EPOCH, RECOVERED};
use crate::teammate::{route, Unanswered, Work, ABORTED};

/// How many async runs a team runs at once (Cline's default).
const MAX_CONCURRENT_RUNS: usize = 2;

/// How often an await looks at a run another process runs.
const POLL: Duration = Duration::from_millis(250);

/// How long an await waits at most (Cline's `TEAM_AWAIT_TIMEOUT_MS`).
const AWAIT_LIMIT: Duration = Duration::from_secs(60 * 60);

/// What a run recovered from a process that is gone starts with.
fn recovery_preamble(run_id: &str) -> String {
    format!(
        "This is an automatic recovery of interrupted team run {run_id}. The previous process stopped before completion. Continue the task safely, inspect the current workspace state before making changes, and avoid duplicating completed work."
    )
}

/// Teammates run on the sub-agent gate: `subagents.enabled`.
fn gate(session: &Session<'_, '_>, tool: &str) -> Result<(), String> {
    match subagents_enabled(session.ctx) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!(
            "Teammates are sub-agents, and sub-agents are disabled. Set subagents.enabled = true in the settings to use {tool}."
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// `team_spawn_teammate`.
pub fn spawn(session: &Session<'_, '_>, input: &Map<String, Value>) -> Result<Value, String> {
    let agent_id = required(input, "agentId");
    let role = required(input, "rolePrompt");
    session.store.update(|e| {
        if !e.team_state.is_lead(session.requester) {
            return Err("Only the lead agent can manage teammates.".to_string());
        }
        gate(session, specs::SPAWN)?;
        let board = &mut e.team_state;
        match board.member(agent_id) {
            Some(m) if m.role != "teammate" => {
                return Err(format!(
                    "Team member \"{agent_id}\" already exists and is not a teammate"
                ))
            }
            Some(m) if m.running_in.is_some() => {
                return Err(format!(
                    "Teammate \"{agent_id}\" is currently running and cannot be respawned"
                ))
            }
            _ => {}
        }
        let member = Member {
            agent_id: agent_id.to_string(),
            role: "teammate".to_string(),
            description: Some(role.to_string()),
            status: "idle".to_string(),
            running_in: None,
        };
        match board.member_mut(agent_id) {
            Some(existing) => *existing = member,
            None => board.members.push(member),
        }
        e.conversations.remove(agent_id);
        Ok(json!({"agentId": agent_id, "status": "spawned"}))
    })
}

/// `team_run_task`.
pub fn run_task(session: &Session<'_, '_>, input: &Map<String, Value>) -> Result<Value, String> {
    gate(session, "team_run_task")?;
    let agent_id = required(input, "agentId");
    let message = required(input, "task");
    let task_id = text(input, "taskId").filter(|id| !id.is_empty());
    let continued = input.get("continueConversation").and_then(Value::as_bool) == Some(true);
    if text(input, "runMode") == Some("async") {
        let run_id = session.store.update(|e| {
            let now = now();
            let run = Run {
                id: e.next_id("run", 5),
                agent_id: agent_id.to_string(),
                task_id: task_id.map(str::to_string),
                status: "queued".to_string(),
                message: message.to_string(),
                priority: 0,
                retry_count: 0,
                max_retries: 0,
                continue_conversation: continued.then_some(true),
                started_at: EPOCH.to_string(),
                ended_at: None,
                lease_owner: None,
                heartbeat_at: None,
                last_progress_at: Some(now),
                last_progress_message: Some("queued".to_string()),
                current_activity: Some("queued".to_string()),
                error: None,
                result: None,
            };
            let id = run.id.clone();
            e.team_state.runs.push(run);
            Ok(id)
        })?;
        return Ok(json!({
            "agentId": agent_id, "mode": "async", "status": "queued", "dispatched": true,
            "message": format!("Task dispatched to {agent_id} and queued as {run_id}."),
            "runId": run_id,
        }));
    }
    let work = Work {
        agent_id,
        message,
        task_id,
        continued,
        run_id: None,
    };
    let outcome = route(session, work).map_err(|ended| match ended {
        Unanswered::Failed(error) => error,
        Unanswered::Stopped => ABORTED.to_string(),
        Unanswered::Cancelled => "The teammate's run was cancelled.".to_string(),
    })?;
    Ok(json!({
        "agentId": agent_id, "mode": "sync", "status": "running", "dispatched": true,
        "message": format!("Task dispatched to {agent_id} and completed in sync mode."),
        "text": outcome.text, "iterations": outcome.iterations,
    }))
}

/// `team_cancel_run`: a run that has not ended ends cancelled (one running stops before its
/// teammate's next step, and stays cancelled).
pub fn cancel(session: &Session<'_, '_>, input: &Map<String, Value>) -> Result<Value, String> {
    session.store.update(|e| {
        let run = e.team_state.run_mut(required(input, "runId"))?;
        if run.status != "completed" && run.status != "failed" {
            run.status = "cancelled".to_string();
            run.error = text(input, "reason").map(str::to_string);
            run.ended_at = Some(now());
            run.current_activity = Some("cancelled".to_string());
        }
        Ok(json!({"runId": run.id, "status": run.status}))
    })
}

/// `team_list_runs`.
pub fn list(session: &Session<'_, '_>, input: &Map<String, Value>) -> Result<Value, String> {
    let completed = input.get("includeCompleted").and_then(Value::as_bool) != Some(false);
    session.store.read(|e| {
        Value::Array(
            e.team_state
                .runs
                .iter()
                .filter(|r| text(input, "status").is_none_or(|s| r.status == s))
                .filter(|r| text(input, "agentId").is_none_or(|a| r.agent_id == a))
                .filter(|r| completed || is_active(&r.status))
                .map(summary)
                .collect(),
        )
    })
}

/// `team_await_runs`: runs what is queued, waits for what another process runs, then answers
/// as Cline does (a run that did not complete is an error).
pub fn await_runs(session: &Session<'_, '_>, input: &Map<String, Value>) -> Result<Value, String> {
    let Some(run_id) = text(input, "runId") else {
        let runs = settle(session, None)?;
        let failed: Vec<String> = runs
            .iter()
            .filter(|r| ["failed", "cancelled", "interrupted"].contains(&r.status.as_str()))
            .map(|r| match &r.error {
                Some(error) => format!("{}:{}({error})", r.id, r.status),
                None => format!("{}:{}", r.id, r.status),
            })
            .collect();
        if !failed.is_empty() {
            return Err(format!(
                "One or more runs did not complete successfully: {}",
                failed.join(", ")
            ));
        }
        return Ok(Value::Array(runs.iter().map(summary).collect()));
    };
    // An unknown run is neither queued nor running: settling returns at once.
    let runs = settle(session, Some(run_id))?;
    let run = runs
        .into_iter()
        .find(|r| r.id == run_id)
        .ok_or_else(|| format!("Run \"{run_id}\" was not found"))?;
    let ended = |how: &str| match &run.error {
        Some(error) => format!("Run \"{run_id}\" {how}: {error}"),
        None => format!("Run \"{run_id}\" {how}"),
    };
    match run.status.as_str() {
        "failed" => Err(ended("failed")),
        "cancelled" => Err(ended("was cancelled")),
        "interrupted" => Err(ended("was interrupted")),
        _ => Ok(summary(&run)),
    }
}

/// Runs the queued runs (`only` the one, or all), two at a time, and waits for those another
/// process runs, until none of them is active; answers every run then. A teammate's await
/// waits for no run that is already running: such a run is in a call above it (its own, or
/// the one that routed work to it) or in another host, and waiting could close a circle.
/// Cancelled, it leaves what is still queued queued; it gives up after Cline's hour.
fn settle(session: &Session<'_, '_>, only: Option<&str>) -> Result<Vec<Run>, String> {
    let waits_for_running = session.requester == LEAD;
    let awaited = |run: &Run| only.is_none_or(|id| run.id == id);
    let started = Instant::now();
    loop {
        if session.ctx.is_cancelled() {
            return Err("The wait for the team's runs was cancelled.".to_string());
        }
        let runs = session.store.read(|e| e.team_state.runs.clone())?;
        let queued: Vec<String> = runs
            .iter()
            .filter(|r| awaited(r) && r.status == "queued")
            .map(|r| r.id.clone())
            .collect();
        if queued.is_empty() {
            let running = runs.iter().any(|r| awaited(r) && r.status == "running");
            if !running || !waits_for_running {
                return Ok(runs);
            }
            if started.elapsed() > AWAIT_LIMIT {
                return Err("The team's runs did not end within an hour.".to_string());
            }
            session.ctx.wait_cancelled(POLL);
            continue;
        }
        for batch in queued.chunks(MAX_CONCURRENT_RUNS) {
            std::thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|id| scope.spawn(move || execute(session, id)))
                    .collect();
                handles.into_iter().try_for_each(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("A teammate's run stopped.".to_string()))
                })
            })?;
        }
    }
}

/// Runs the queued run `run_id` to its end; one not queued is left as it is, and so is every
/// run once the call is cancelled.
fn execute(session: &Session<'_, '_>, run_id: &str) -> Result<(), String> {
    if session.ctx.is_cancelled() {
        return Ok(());
    }
    let lease = session.store.lease()?;
    let claimed = session.store.update(|e| {
        let run = e.team_state.run_mut(run_id)?;
        if run.status != "queued" {
            return Ok(None);
        }
        let now = now();
        let message = if run.current_activity.as_deref() == Some(RECOVERED) {
            format!("{}\n\n{}", recovery_preamble(run_id), run.message)
        } else {
            run.message.clone()
        };
        run.status = "running".to_string();
        run.started_at = now.clone();
        run.heartbeat_at = Some(now);
        run.current_activity = Some("run_started".to_string());
        run.lease_owner = Some(lease.clone());
        let continued = run.continue_conversation == Some(true);
        Ok(Some((
            run.agent_id.clone(),
            message,
            run.task_id.clone(),
            continued,
        )))
    })?;
    let Some((agent_id, message, task_id, continued)) = claimed else {
        return Ok(());
    };
    let started = Instant::now();
    let work = Work {
        agent_id: &agent_id,
        message: &message,
        task_id: task_id.as_deref(),
        continued,
        run_id: Some(run_id),
    };
    let result = route(session, work);
    let elapsed = started.elapsed().as_millis() as u64;
    let record = |e: &mut crate::store::Envelope| {
        let run = e.team_state.run_mut(run_id)?;
        run.lease_owner = None;
        if run.status == "cancelled" {
            return Ok(());
        }
        let (status, error) = match &result {
            Ok(outcome) => {
                run.result = Some(result_json(outcome, elapsed));
                ("completed", None)
            }
            Err(Unanswered::Failed(error)) => ("failed", Some(error.clone())),
            Err(Unanswered::Stopped) => ("cancelled", Some(ABORTED.to_string())),
            Err(Unanswered::Cancelled) => {
                // Cut short: queued again for the next await, which starts it with the
                // recovery preamble (it may have done part of its work).
                run.status = "queued".to_string();
                run.started_at = EPOCH.to_string();
                run.current_activity = Some(RECOVERED.to_string());
                return Ok(());
            }
        };
        run.status = status.to_string();
        run.current_activity = Some(status.to_string());
        run.error = error;
        run.ended_at = Some(now());
        Ok(())
    };
    // A record that fails once (a full disk, a lock) is tried again before the run is left.
    session
        .store
        .update(record)
        .or_else(|_| session.store.update(record))
}

/// A run's result as Cline keeps it (`AgentResult`, without the transcript).
fn result_json(outcome: &Outcome, duration_ms: u64) -> Value {
    let mut usage =
        json!({"inputTokens": outcome.usage.input, "outputTokens": outcome.usage.output});
    if outcome.usage.cache_read > 0 {
        usage["cacheReadTokens"] = json!(outcome.usage.cache_read);
    }
    if outcome.usage.cache_write > 0 {
        usage["cacheWriteTokens"] = json!(outcome.usage.cache_write);
    }
    json!({
        "text": outcome.text,
        "iterations": outcome.iterations,
        "finishReason": outcome.finish.name(),
        "durationMs": duration_ms,
        "usage": usage,
    })
}

/// Cline's run summary: the record as it is kept (Cline's fields, in its order), with a
/// preview in place of the message and a summary in place of the result.
fn summary(run: &Run) -> Value {
    let mut out = Map::new();
    let kept = json!(run);
    for (key, value) in kept.as_object().into_iter().flatten() {
        match key.as_str() {
            "message" => out.insert(
                "messagePreview".to_string(),
                json!(preview(&run.message, 240)),
            ),
            "result" => out.insert(
                "resultSummary".to_string(),
                json!({
                    "textPreview": preview(value["text"].as_str().unwrap_or_default(), 400),
                    "iterations": value["iterations"],
                    "finishReason": value["finishReason"],
                    "durationMs": value["durationMs"],
                    "usage": value["usage"],
                }),
            ),
            _ => out.insert(key.clone(), value.clone()),
        };
    }
    Value::Object(out)
}
