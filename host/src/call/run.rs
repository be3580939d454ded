//! Running a handler: in this process on the call's own thread, its start and return marked on
//! the call's [`HandlerClock`] (the caller keeps the timeout: [`super::pending`]); or, for a
//! handler in another process, on the same thread, the handler keeping the timeout.

use std::time::Duration;

use crate::error::{CallError, ErrorKind};
use tool_api::model::ToolContent;

use super::clock::HandlerClock;
use super::prepare::PreparedCall;
use super::services::HostCallServices;
use crate::plugins::handler::Bounded;
use crate::plugins::{CallData, RegisteredTool};

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
    let data = CallData {
        tool_name: &services.tool,
        call_id: "",
        params_json: &call.params,
        context_json: &call.context,
    };
    let handler = &tool.handler.handler;
    let result = match handler.execute_bounded(&data, services, timeout) {
        Some(Bounded::Ended(result, description)) => {
            call.description = description;
            result
        }
        Some(Bounded::TimedOut) => {
            services.cancellation.cancel();
            Err(timed_out(timeout))
        }
        None => {
            // Asked first, so that a caller giving the call up has it without the plugin.
            let asked = describe(tool, &services.tool, call);
            clock.started(asked.clone());
            let (result, description) = handler.execute_described(&data, services);
            if !clock.returned() {
                // Given up by the caller, who has answered already; nothing more is done.
                return Err(timed_out(timeout));
            }
            call.description = Some(description.unwrap_or(asked));
            result
        }
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
    tool.handler.handler.describe(&CallData {
        tool_name: name,
        call_id: "",
        params_json: &call.params,
        context_json: &call.context,
    })
}
