//! Tools found at run time: the handlers of plugins declaring
//! [`DYNAMIC_TOOLS_CAPABILITY`] name them when asked (an MCP server's tools, HTTP tools declared
//! in the settings), and the host dispatches them like any registered name.
//!
//! Names registered at load time win over run-time ones, and among run-time tools the first
//! handler (in load order) to offer a name wins, so a server cannot shadow a plugin tool.

use std::collections::BTreeMap;

use serde_json::Value;
use tool_api::model::{
    DynamicToolsQuery, ToolSpec, DYNAMIC_TOOLS_CAPABILITY, DYNAMIC_TOOLS_METHOD,
};

use super::registry::{RegisteredTool, Registry};

/// The run-time tools of every handler that serves them, as `query` asks; with its `name`,
/// only that one (the handlers may then skip the work other names would cost). Names the
/// registry already has are left out.
pub fn find(registry: &Registry, query: DynamicToolsQuery) -> Vec<RegisteredTool> {
    let payload = serde_json::to_value(&query).unwrap_or_default();
    let mut found: BTreeMap<String, RegisteredTool> = BTreeMap::new();
    for handler in registry.dynamic_handlers() {
        if handler.plugin.failure().is_some() {
            continue;
        }
        let specs = match handler.handler.request(DYNAMIC_TOOLS_METHOD, &payload) {
            Ok(answer) => parse(answer),
            Err(e) => {
                tracing::warn!(
                    target: "toolhost::plugins",
                    "plugin '{}' could not list its {DYNAMIC_TOOLS_CAPABILITY}: {e}",
                    handler.plugin.name
                );
                continue;
            }
        };
        for spec in specs {
            let usable = !spec.name.is_empty()
                && spec.input_schema.is_object()
                && query.wants(&spec.name)
                && registry.get(&spec.name).is_none();
            if usable && !found.contains_key(&spec.name) {
                found.insert(
                    spec.name.clone(),
                    RegisteredTool {
                        spec,
                        handler: handler.clone(),
                    },
                );
            }
        }
    }
    found.into_values().collect()
}

/// The specs of an answer `{"tools": [...]}`; a spec that does not parse is skipped.
fn parse(mut answer: Value) -> Vec<ToolSpec> {
    match answer.get_mut("tools").map(Value::take) {
        Some(Value::Array(items)) => items
            .into_iter()
            .filter_map(|item| serde_json::from_value(item).ok())
            .collect(),
        _ => Vec::new(),
    }
}
