//! The payload of the handler extensions that serve resources, prompts and completions
//! ([`super::RESOURCES_CAPABILITY`], [`super::PROMPTS_CAPABILITY`],
//! [`super::COMPLETION_CAPABILITY`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::TaskContext;

/// What the host sends with `resources_list`, `resources_read`, `prompts_get` and the
/// others: the MCP request's own parameters (`uri`, `name`, `arguments`, …), the task's
/// workspace and the host's settings, since these requests come outside any call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OfferRequest {
    /// The task's workspace (its `cwd` is the primary root).
    #[serde(default)]
    pub workspace: TaskContext,
    /// The host's settings, as a JSON document (the TOML file's tables as objects).
    #[serde(default)]
    pub settings: Value,
    /// The MCP request's parameters.
    #[serde(flatten)]
    pub params: Map<String, Value>,
}

impl OfferRequest {
    /// The setting at a dotted key (`skills.disabled`).
    pub fn setting(&self, key: &str) -> Option<&Value> {
        super::setting_at(&self.settings, key)
    }

    /// The request's string parameter `key` (`uri`, `name`).
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params.get(key).and_then(Value::as_str)
    }
}
