//! Running a handler: on a thread of its own (from the pool of idle call threads), under the
//! call's timeout, while the caller's thread asks the handler for the call's description; or,
//! for a handler in another process, on the caller's thread, the handler keeping the timeout.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::model::ToolContent;

use super::prepare::PreparedCall;
use super::services::{Cancellation, HostCallServices};
use super::workers::Workers;
use crate::plugins::handler::Bounded;
use crate::plugins::{CallData, RegisteredTool};

/// Runs `tool`'s handler for `call` with `services`; gives up on it after `timeout` (the
/// tool sees its cancellation). A panic disables the plugin.
pub fn on_worker(
    workers: &Workers,
    tool: &RegisteredTool,
    call: &mut PreparedCall,
    services: HostCallServices,
    cancellation: &Cancellation,
    timeout: Duration,
) -> Result<ToolContent, ToolError> {
    let data = CallData {
        tool_name: &services.tool,
        call_id: "",
        params_json: &call.params,
        context_json: &call.context,
    };
    // A handler in another process runs on this thread and stops its own work at the timeout.
    let result = match tool
        .handler
        .handler
        .execute_bounded(&data, &services, timeout)
    {
        Some(Bounded::Ended(result, description)) => {
            call.description = description;
            result
        }
        Some(Bounded::TimedOut) => {
            cancellation.cancel();
            Err(timed_out(timeout))
        }
        None => on_thread(workers, tool, call, services, cancellation, timeout),
    };
    if let Err(e) = &result {
        if e.kind == ToolErrorKind::PANIC {
            tool.handler.plugin.mark_failed(&e.message);
            tracing::error!(target: "toolhost::call", "plugin '{}' panicked in {}: {}", tool.handler.plugin.name, tool.spec.name, e.message);
        }
    }
    result
}

/// The error of a call past its timeout.
fn timed_out(timeout: Duration) -> ToolError {
    ToolError::new(
        ToolErrorKind::TIMEOUT,
        format!(
            "The tool did not finish within {} seconds and was cancelled.",
            timeout.as_secs()
        ),
    )
}

/// Runs the handler on a pooled thread and gives up on it after `timeout` (the thread is
/// abandoned; the tool sees its cancellation).
fn on_thread(
    workers: &Workers,
    tool: &RegisteredTool,
    call: &mut PreparedCall,
    services: HostCallServices,
    cancellation: &Cancellation,
    timeout: Duration,
) -> Result<ToolContent, ToolError> {
    let handler = tool.handler.clone();
    let name: Arc<str> = services.tool.as_str().into();
    let (params, context) = (call.params.clone(), call.context.clone());
    // One result, never waiting for room: a call abandoned by its timeout still finishes.
    let (sender, receiver) = mpsc::sync_channel(1);
    let job = move || {
        let data = CallData {
            tool_name: &name,
            call_id: "",
            params_json: &params,
            context_json: &context,
        };
        handler.handler.execute_described(&data, &services)
    };
    if let Err(e) = workers.run(job, sender) {
        return Err(ToolError::new(
            ToolErrorKind::INTERNAL,
            format!("cannot start a thread for the call: {e}"),
        ));
    }
    // `describe` is a pure function of the call (it gets no host services), so it may run
    // beside `execute`; this hides its cost behind the handler's. A handler in another
    // process answers it with the result instead.
    let described_with_result = tool.handler.handler.describes_with_result();
    if !described_with_result {
        call.description = Some(describe(tool, &tool.spec.name, call));
    }
    match workers.wait_for(&receiver, timeout) {
        Ok((result, description)) => {
            if described_with_result {
                call.description = description;
            }
            result
        }
        Err(RecvTimeoutError::Timeout) => {
            cancellation.cancel();
            Err(timed_out(timeout))
        }
        Err(RecvTimeoutError::Disconnected) => Err(ToolError::new(
            ToolErrorKind::INTERNAL,
            "The tool's thread ended without a result.",
        )),
    }
}

/// The handler's description of a call (`[read_file for 'a.txt']`).
pub fn describe(tool: &RegisteredTool, name: &str, call: &PreparedCall) -> String {
    tool.handler.handler.describe(&CallData {
        tool_name: name,
        call_id: "",
        params_json: &call.params,
        context_json: &call.context,
    })
}
