//! The checks before a call runs: the plugin still enabled, the required parameters present,
//! and the verdicts on its path parameters.

use crate::error::{CallError, ErrorKind};
use serde_json::{Map, Value};
use tool_api::model::{PathVerdict, ToolSpec};
use tool_api::texts;
use tool_api::workspace::{FsError, Workspace};

use super::prepare::value_as_string;
use crate::plugins::RegisteredTool;

/// A plugin that panicked earlier is refused.
pub fn plugin_enabled(tool: &RegisteredTool, name: &str) -> Result<(), CallError> {
    match tool.handler.plugin.failure() {
        None => Ok(()),
        Some(reason) => Err(CallError::new(
            ErrorKind::Failed,
            format!(
                "The plugin '{}' that provides {name} was disabled after an earlier failure ({reason}). Use another tool.",
                tool.handler.plugin.name
            ),
        )),
    }
}

/// The first required parameter that is missing (`""` counts as missing unless the property
/// has `minLength: 0`); none for a tool that checks its own parameters.
pub fn missing_required<'s>(spec: &'s ToolSpec, params: &Map<String, Value>) -> Option<&'s str> {
    if spec.handling.checks_own_params {
        return None;
    }
    spec.required_params().into_iter().find(|required| {
        let allows_empty = spec.input_schema["properties"][*required]["minLength"] == 0;
        match params.get(*required).and_then(value_as_string) {
            None => true,
            Some(value) => value.is_empty() && !allows_empty,
        }
    })
}

/// The values of the spec's path parameters that are given.
pub fn path_values(spec: &ToolSpec, params: &Map<String, Value>) -> Vec<String> {
    spec.path_params
        .iter()
        .filter_map(|p| params.get(p).and_then(value_as_string))
        .filter(|p| !p.is_empty())
        .collect()
}

/// The parameters an approval shows besides the paths: every one given, as text, in the
/// spec's order.
pub fn shown_params<'a>(spec: &'a ToolSpec, params: &Map<String, Value>) -> Vec<(&'a str, String)> {
    let Some(properties) = spec.input_schema["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .keys()
        .filter(|name| !spec.path_params.contains(name))
        .filter_map(|name| {
            let value = params.get(name).and_then(value_as_string)?;
            (!value.is_empty()).then_some((name.as_str(), value))
        })
        .collect()
}

/// One verdict per path, each resolved once for the call.
pub fn verdicts(workspace: &Workspace, paths: &[String]) -> Vec<PathVerdict> {
    paths.iter().map(|p| workspace.verdict(p)).collect()
}

/// A path through a magic link is refused; a `.clineignore`d one is Cline's error.
pub fn paths_allowed(verdicts: &[PathVerdict]) -> Result<(), CallError> {
    if let Some(refused) = verdicts.iter().find(|v| v.refused) {
        let refusal = FsError::Refused {
            path: refused.path.clone(),
        };
        return Err(CallError::new(ErrorKind::Blocked, refusal.to_string()));
    }
    if let Some(blocked) = verdicts.iter().find(|v| v.ignored) {
        return Err(CallError::new(
            ErrorKind::Blocked,
            texts::clineignore_error(&blocked.path),
        ));
    }
    Ok(())
}
