//! The ways a call enters the host: by name or of a tool already looked up, from the model or
//! nested in another call (`invoke_tool`), and a still-streaming call's partial handler.

use std::sync::Arc;

use crate::error::ErrorKind;
use serde_json::{Map, Value};

use super::host::Host;
use super::options::CallOptions;
use super::outcome::CallOutcome;
use super::prepare::PreparedCall;
use super::run;
use crate::plugins::{CallData, RegisteredTool};

impl Host {
    /// Runs one tool call from the model.
    pub fn call(&self, name: &str, params_json: &str) -> CallOutcome {
        self.call_with(name, params_json, &CallOptions::default())
    }

    /// Runs one tool call from the model with what its frontend gives it: a cancellation and
    /// a UI of its own.
    pub fn call_with(&self, name: &str, params_json: &str, options: &CallOptions) -> CallOutcome {
        self.call_nested_with(name, params_json, 0, false, options)
    }

    /// Runs one tool call from the model of a tool already looked up ([`Host::lookup`]).
    pub fn call_tool(&self, tool: &Arc<RegisteredTool>, params_json: &str) -> CallOutcome {
        self.call_and_wait(tool, params_json, 0, false, &CallOptions::default())
    }

    /// Runs a tool call at a nesting depth (0 for calls from the model). `subagent` marks
    /// calls a subagent makes: they carry the subagent flag in their context and never ask the
    /// user (what is not auto-approved is denied).
    pub fn call_nested(
        &self,
        name: &str,
        params_json: &str,
        depth: u32,
        subagent: bool,
    ) -> CallOutcome {
        self.call_nested_with(name, params_json, depth, subagent, &CallOptions::default())
    }

    /// [`Host::call_nested`] under the options of the calling call.
    pub(crate) fn call_nested_with(
        &self,
        name: &str,
        params_json: &str,
        depth: u32,
        subagent: bool,
        options: &CallOptions,
    ) -> CallOutcome {
        match self.lookup(name) {
            Some(tool) => self.call_and_wait(&tool, params_json, depth, subagent, options),
            None => CallOutcome::unknown_tool(name),
        }
    }

    /// The short description of a call that prefixes its result (`[read_file for 'a.txt']`).
    pub fn describe(&self, name: &str, params: &Map<String, Value>) -> String {
        match self.lookup(name) {
            Some(tool) => run::describe(
                &tool,
                name,
                &PreparedCall::new(params, self.context_json(false)),
            ),
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
        let params_json = serde_json::to_string(params).unwrap_or_default();
        let context_json = self.context_json(false);
        let data = CallData {
            tool_name: name,
            call_id: "",
            params_json: &params_json,
            context_json: &context_json,
        };
        if let Err(e) = tool.handler.handler.partial(&data, &services) {
            if e.kind == ErrorKind::Panic {
                tool.handler.plugin.mark_failed(&e.message);
            }
            tracing::debug!(target: "toolhost::call", "partial handler of {name}: {e}");
        }
    }
}
