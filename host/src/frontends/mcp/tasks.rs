//! MCP's tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) for calls that run
//! long: a client that declares the extension gets a task for a call of a tool whose spec says
//! it runs long ([`tool_api::model::Handling::runs_long`]) at once, and follows it with
//! `tasks/get`. A question the call asks meanwhile is the task's `input_required` status,
//! answered with `tasks/update`; `tasks/cancel` cancels the call (a command's whole process
//! tree ends). rmcp's [`TaskManager`] keeps the tasks; their ids are random v4 UUIDs, and one
//! server has one client (its stdio, or its bearer token over HTTP).
//!
//! A task's call sends no progress or log message: its request is answered already.

use std::time::Duration;

use rmcp::model::{
    CreateTaskResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationSchema,
    InputRequest,
};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

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
            let mut asked = 0u32;
            let outcome = loop {
                match call.wait(&cancelled).await {
                    Waited::Done(outcome) => break outcome,
                    Waited::Asks(asking, question) => {
                        asked += 1;
                        let answer = match form(&question.message, &question.schema) {
                            Some(form) => context
                                .request_input(format!("toolhost_question_{asked}"), form)
                                .await
                                .ok()
                                .and_then(|value| {
                                    serde_json::from_value::<ElicitResult>(value).ok()
                                })
                                .map(|r| (r.action, r.content.unwrap_or(Value::Null))),
                            None => None,
                        };
                        question.answer(answer);
                        call = asking;
                    }
                }
            };
            watcher.abort();
            if cancelled.is_cancelled() {
                return Err(TaskExit::Cancelled);
            }
            Ok(result::call_result(&outcome))
        })
    });
    CreateTaskResult::new(task)
}

/// The form of a question, as a task's input request; `None` for a schema MCP cannot carry.
fn form(message: &str, schema: &Value) -> Option<InputRequest> {
    let schema: ElicitationSchema = serde_json::from_value(schema.clone()).ok()?;
    Some(InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_string(),
            requested_schema: schema,
        },
    )))
}
