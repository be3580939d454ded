//! Preparing a call: the parameters read leniently, coerced to the schema, aliases applied, and
//! the call and task context written once as the JSON a handler reads.

use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{CallError, ErrorKind};
use serde_json::{Map, Value};
use tool_api::model::{Mode, PathVerdict, TaskContext, ToolSpec};

use super::arguments::{coerce_to_schema, parse_arguments};

/// Parses the parameters leniently, as models write them: strict JSON, else JSON5, else what
/// can be salvaged from a truncated object; then coerces them to the types `spec`'s schema
/// declares and applies its parameter aliases. A `null` parameter is an absent one (OpenAI's
/// strict mode sends `null` for each optional parameter left out). Nothing usable is an
/// invalid-parameters error.
pub fn parse_params(spec: &ToolSpec, json: &str) -> Result<Map<String, Value>, CallError> {
    let mut params = parse_arguments(json).ok_or_else(|| {
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

/// One call as the handler reads it, written once for `describe` and `execute`, and its
/// description once the handler gave it.
pub struct PreparedCall {
    /// The parameters, as JSON.
    pub params: Arc<str>,
    /// The task context, as JSON (with the call's path verdicts, once they are made).
    pub context: Arc<str>,
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
    pub fn new(params: &Map<String, Value>, context: Arc<str>) -> Self {
        Self {
            params: serde_json::to_string(params).unwrap_or_default().into(),
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
        let Ok(mut context) = serde_json::from_str::<TaskContext>(&self.context) else {
            return;
        };
        context.path_verdicts = verdicts.to_vec();
        if let Ok(json) = serde_json::to_string(&context) {
            self.context = json.into();
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

/// The task contexts of a host as handlers read them, written once per [`ContextKey`]: the
/// rest of a context stays as it was for the host's life.
#[derive(Default)]
pub struct Contexts {
    written: Mutex<Vec<(ContextKey, Arc<str>)>>,
}

impl Contexts {
    /// The context for `key`, written by `build` the first time.
    pub fn json(&self, key: ContextKey, build: impl FnOnce() -> TaskContext) -> Arc<str> {
        let mut written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, json)) = written.iter().find(|(k, _)| *k == key) {
            return json.clone();
        }
        let json: Arc<str> = serde_json::to_string(&build()).unwrap_or_default().into();
        written.push((key, json.clone()));
        json
    }
}
