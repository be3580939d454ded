//! MCP's tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) for calls that run
//! long: for a client that declares the extension, a call of a tool whose spec says it runs
//! long ([`tool_api::model::Handling::runs_long`]) or needs tasks becomes a task when it has
//! run a moment without ending or asking (`calls.rs`, `TASK_AFTER`), and the client follows it
//! with `tasks/get`. A question the task's call asks, or the requests of its result that needs
//! input, are the task's `input_required` status, all pending at once and answered with
//! `tasks/update`; `tasks/cancel` cancels the call (a command's whole process tree ends). A
//! tool's failure is a completed task whose result is an error; the host's or the plugin's
//! own failure (an internal error, a panic, a crashed worker) is a `failed` task. rmcp's
//! [`TaskManager`] keeps the tasks; their ids are random v4 UUIDs, and one server has one
//! client (its stdio, or its bearer token over HTTP).
//!
//! A task's call sends no progress or log message: its request is answered already.

use std::collections::HashSet;
use std::time::Duration;

use futures_util::future::join_all;
use rmcp::model::{CreateTaskResult, InputRequest};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::ErrorData;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::error::ErrorKind;

use super::result;
use super::running::{RunningCall, Waited};

/// How long a task stays to be read after it is made: a call's timeout (5 minutes by
/// default) and its questions' fit in it many times.
const TASK_TTL: Duration = Duration::from_secs(3600);

/// How often a client should look at a task.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Makes `call` a task of `tasks`: the result that hands it to the client.
pub fn start(tasks: &TaskManager, call: RunningCall) -> CreateTaskResult {
    let options = TaskOptions::new()
        .with_ttl_ms(u64::try_from(TASK_TTL.as_millis()).unwrap_or(u64::MAX))
        .with_poll_interval_ms(u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(1000));
    let task = tasks.spawn(options, move |context| {
        Box::pin(async move {
            let cancelled = CancellationToken::new();
            let watcher = {
                let (context, cancelled) = (context.clone(), cancelled.clone());
                tokio::spawn(async move {
                    context.cancelled().await;
                    cancelled.cancel();
                })
            };
            let mut call = call;
            let mut used = HashSet::new();
            let outcome = loop {
                match call.wait(&cancelled).await {
                    Waited::Done(outcome) => break outcome,
                    Waited::Asks(asking, question) => {
                        let answers = ask(&context, &question.requests, &mut used).await;
                        question.answer(answers);
                        call = asking;
                    }
                    // A task's call grows no further.
                    Waited::Grown(running) => call = running,
                }
            };
            watcher.abort();
            if cancelled.is_cancelled() {
                return Err(TaskExit::Cancelled);
            }
            match &outcome.result {
                // The host's or the plugin's own failure: the task failed, it has no result.
                Err(e)
                    if matches!(
                        e.kind,
                        ErrorKind::Internal | ErrorKind::Panic | ErrorKind::Crashed
                    ) =>
                {
                    Err(TaskExit::Error(ErrorData::internal_error(
                        e.message.clone(),
                        None,
                    )))
                }
                _ => Ok(result::call_result(&outcome)),
            }
        })
    });
    CreateTaskResult::new(task)
}

/// Asks `requests` as the task's input requests, all pending at once (each under its own
/// key, made unique within the task as the extension requires): the answers by the
/// requests' keys, or `None` when one cannot be asked or is not answered.
async fn ask(
    context: &TaskContext,
    requests: &Map<String, Value>,
    used: &mut HashSet<String>,
) -> Option<Map<String, Value>> {
    let mut asked = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let request: InputRequest = serde_json::from_value(request.clone()).ok()?;
        let mut unique = key.clone();
        let mut n = 1;
        while !used.insert(unique.clone()) {
            n += 1;
            unique = format!("{key}_{n}");
        }
        asked.push((key.clone(), unique, request));
    }
    let answers = join_all(asked.into_iter().map(|(key, unique, request)| async move {
        context
            .request_input(unique, request)
            .await
            .ok()
            .map(|answer| (key, answer))
    }))
    .await;
    answers.into_iter().collect()
}
