//! The ways a call enters the host: by name or of a tool already looked up, from the model or
//! nested in another call (`invoke_tool`), and a still-streaming call's partial handler.

use std::sync::Arc;

use crate::error::ErrorKind;
use serde_json::{Map, Value};

use super::arguments::Arguments;
use super::host::Host;
use super::options::CallOptions;
use super::outcome::CallOutcome;
use super::prepare::PreparedCall;
use super::run;
use crate::plugins::RegisteredTool;

impl Host {
    /// Runs one tool call from the model.
    pub fn call(&self, name: &str, arguments: impl Into<Arguments>) -> CallOutcome {
        self.call_with(name, arguments, &CallOptions::default())
    }

    /// Runs one tool call from the model with what its frontend gives it: a cancellation and
    /// a UI of its own.
    pub fn call_with(
        &self,
        name: &str,
        arguments: impl Into<Arguments>,
        options: &CallOptions,
    ) -> CallOutcome {
        self.call_nested_with(name, arguments, 0, false, options)
    }

    /// Runs one tool call from the model of a tool already looked up ([`Host::lookup`]).
    pub fn call_tool(
        &self,
        tool: &Arc<RegisteredTool>,
        arguments: impl Into<Arguments>,
    ) -> CallOutcome {
        self.call_and_wait(tool, arguments.into(), 0, false, &CallOptions::default())
    }

    /// Runs a tool call at a nesting depth (0 for calls from the model). `subagent` marks
    /// calls a subagent makes: they carry the subagent flag in their context and never ask the
    /// user (what is not auto-approved is denied).
    pub fn call_nested(
        &self,
        name: &str,
        arguments: impl Into<Arguments>,
        depth: u32,
        subagent: bool,
    ) -> CallOutcome {
        self.call_nested_with(name, arguments, depth, subagent, &CallOptions::default())
    }

    /// [`Host::call_nested`] under the options of the calling call.
    pub(crate) fn call_nested_with(
        &self,
        name: &str,
        arguments: impl Into<Arguments>,
        depth: u32,
        subagent: bool,
        options: &CallOptions,
    ) -> CallOutcome {
        match self.lookup(name) {
            Some(tool) => self.call_and_wait(&tool, arguments.into(), depth, subagent, options),
            None => CallOutcome::unknown_tool(name),
        }
    }

    /// The short description of a call that prefixes its result (`[read_file for 'a.txt']`).
    pub fn describe(&self, name: &str, params: &Map<String, Value>) -> String {
        match self.lookup(name) {
            Some(tool) => {
                run::describe(&tool, name, &PreparedCall::new(params, self.context(false)))
            }
            None => format!("[{name}]"),
        }
    }

    /// Routes a still-streaming call to the tool's partial handler: UI updates only, never a
    /// result. Unknown tools, tools without a partial handler and failures are ignored (a
    /// partial block is a preview; the complete block reports errors).
    pub fn call_partial(&self, name: &str, params: &Map<String, Value>) {
        let registry = self.registry();
        let Some(tool) = registry.get(name) else {
            return;
        };
        if !tool.spec.partial || tool.handler.plugin.failure().is_some() {
            return;
        }
        let services = self.services(tool, Arc::default(), 0, false, &CallOptions::default());
        let call = PreparedCall::new(params, self.context(false));
        if let Err(e) = tool
            .handler
            .handler
            .partial(&call.handler_call(name), &services)
        {
            if e.kind == ErrorKind::Panic {
                tool.handler.plugin.mark_failed(&e.message);
            }
            tracing::debug!(target: "toolhost::call", "partial handler of {name}: {e}");
        }
    }
}
