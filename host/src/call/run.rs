//! Running a handler: in this process on the call's own thread, its start and return marked on
//! the call's [`HandlerClock`] (the caller keeps the timeout: [`super::pending`]); or, for a
//! handler in another process, on the same thread, the handler keeping the timeout.

use std::time::Duration;

use crate::error::{CallError, ErrorKind};
use tool_api::model::ToolContent;

use super::clock::HandlerClock;
use super::prepare::PreparedCall;
use super::services::HostCallServices;
use crate::plugins::{Ran, RegisteredTool};

/// Runs `tool`'s handler for `call` with `services`. A handler in another process gives up
/// after `timeout` itself (the tool sees its cancellation); one in this process runs until it
/// returns, and `clock` tells the caller how long it has been running. A panic disables the
/// plugin.
pub fn handler(
    tool: &RegisteredTool,
    call: &mut PreparedCall,
    services: &HostCallServices,
    timeout: Duration,
    clock: &HandlerClock,
) -> Result<ToolContent, CallError> {
    let handler_call = call.handler_call(&services.tool);
    let ran = tool
        .handler
        .handler
        .run(&handler_call, services, timeout, clock);
    let result = match ran {
        Ran::Ended(result, description) => {
            call.description = description;
            result
        }
        Ran::TimedOut => {
            services.cancellation.cancel();
            Err(timed_out(timeout))
        }
        // Given up by the caller, who has answered already; nothing more is done.
        Ran::GivenUp => return Err(timed_out(timeout)),
    };
    if let Err(e) = &result {
        if e.kind == ErrorKind::Panic {
            tool.handler.plugin.mark_failed(&e.message);
            tracing::error!(target: "toolhost::call", "plugin '{}' panicked in {}: {}", tool.handler.plugin.name, tool.spec.name, e.message);
        }
    }
    result
}

/// The error of a call past its timeout.
pub fn timed_out(timeout: Duration) -> CallError {
    CallError::new(
        ErrorKind::Timeout,
        format!(
            "The tool did not finish within {} seconds and was cancelled.",
            timeout.as_secs()
        ),
    )
}

/// The handler's description of a call (`[read_file for 'a.txt']`).
pub fn describe(tool: &RegisteredTool, name: &str, call: &PreparedCall) -> String {
    tool.handler.handler.describe(&call.handler_call(name))
}
