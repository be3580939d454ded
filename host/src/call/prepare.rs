//! Preparing a call: the parameters read leniently, coerced to the schema, aliases applied; the
//! call as its handler reads it, typed until the adapter writes its JSON once; the task
//! contexts of a host, made once.

use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{CallError, ErrorKind};
use serde_json::{Map, Value};
use tool_api::model::{McpInput, Mode, PathVerdict, TaskContext, ToolSpec};

use crate::plugins::{Context, HandlerCall, Params};

use super::arguments::{coerce_to_schema, Arguments};

/// Parses the parameters leniently, as models write them: strict JSON, else JSON5, else what
/// can be salvaged from a truncated object; then coerces them to the types `spec`'s schema
/// declares and applies its parameter aliases. A `null` parameter is an absent one (OpenAI's
/// strict mode sends `null` for each optional parameter left out). Nothing usable is an
/// invalid-parameters error.
pub fn parse_params(
    spec: &ToolSpec,
    arguments: Arguments,
) -> Result<Map<String, Value>, CallError> {
    let mut params = arguments.into_object().ok_or_else(|| {
        CallError::new(
            ErrorKind::InvalidParams,
            "The tool parameters are not a JSON object (nor anything that could be read as one).",
        )
    })?;
    params.retain(|_, value| !value.is_null());
    coerce_to_schema(&mut params, &spec.input_schema);
    for (alias, param) in &spec.handling.param_aliases {
        if !params.contains_key(param) {
            if let Some(value @ Value::String(_)) = params.get(alias).cloned() {
                params.insert(param.clone(), value);
            }
        }
    }
    Ok(params)
}

/// A parameter as Cline sees it: strings as they are, other JSON as text, null as absent.
pub fn value_as_string(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// One call as the handler reads it, and its description once the handler gave it.
pub struct PreparedCall {
    /// The parameters.
    pub params: Params,
    /// The task context (with the call's path verdicts, once they are made).
    pub context: Arc<Context>,
    /// The handler's description of the call, once asked.
    pub description: Option<String>,
    /// Set when a hook cancelled the task during the call.
    pub task_cancelled: Option<super::outcome::TaskCancelled>,
    /// The MCP structures of a result the tool reported as failed ([`ToolContent::is_error`]).
    ///
    /// [`ToolContent::is_error`]: tool_api::model::ToolContent::is_error
    pub failed_mcp_result: Option<Value>,
}

impl PreparedCall {
    /// The call of `params` in the task context `context`.
    pub fn new(params: &Map<String, Value>, context: Arc<Context>) -> Self {
        Self {
            params: Params::of(params.clone()),
            context,
            description: None,
            task_cancelled: None,
            failed_mcp_result: None,
        }
    }

    /// Adds the host's verdicts on the call's path parameters to its context, so that the
    /// handler's `check_path` of one of them needs no round trip.
    pub fn carry_verdicts(&mut self, verdicts: &[PathVerdict]) {
        if verdicts.is_empty() {
            return;
        }
        let Some(mut context) = self.context.value().cloned() else {
            return;
        };
        context.path_verdicts = verdicts.to_vec();
        self.context = Arc::new(Context::of(context));
    }

    /// Puts what the MCP client sent with the call into its context.
    pub fn carry_mcp(&mut self, input: McpInput) {
        let Some(mut context) = self.context.value().cloned() else {
            return;
        };
        context.mcp = Some(input);
        self.context = Arc::new(Context::of(context));
    }

    /// The call as handler reads it, called by `tool_name`.
    pub fn handler_call<'a>(&'a self, tool_name: &'a str) -> HandlerCall<'a> {
        HandlerCall {
            tool_name,
            params: &self.params,
            context: &self.context,
        }
    }
}

/// What may differ between the task contexts of two calls of one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextKey {
    /// Plan or act.
    pub mode: Mode,
    /// Non-interactive.
    pub yolo: bool,
    /// A subagent's call.
    pub is_subagent: bool,
}

/// The task contexts of a host as handlers read them, made once per [`ContextKey`] (and their
/// JSON written once, when a handler first reads one): the rest of a context stays as it was
/// for the host's life.
#[derive(Default)]
pub struct Contexts {
    made: Mutex<Vec<(ContextKey, Arc<Context>)>>,
}

impl Contexts {
    /// The context for `key`, made by `build` the first time.
    pub fn get(&self, key: ContextKey, build: impl FnOnce() -> TaskContext) -> Arc<Context> {
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, context)) = made.iter().find(|(k, _)| *k == key) {
            return context.clone();
        }
        let context = Arc::new(Context::of(build()));
        made.push((key, context.clone()));
        context
    }
}
