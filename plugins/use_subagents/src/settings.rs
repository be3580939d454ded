//! The setting the tool reads besides `[llm]` and the turn limit ([`agent_support::llm`]):
//! the gate, `subagents.enabled`.

use serde_json::Value;
use web_support::{ConfigError, SettingSource};

/// Whether subagents are enabled (`subagents.enabled`, default false as in Cline).
pub fn enabled(source: &dyn SettingSource) -> Result<bool, ConfigError> {
    match source.value("subagents.enabled") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(other) => Err(ConfigError(format!(
            "The setting subagents.enabled must be true or false (found {other})."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_gate_is_off_by_default() {
        assert_eq!(enabled(&json!({})), Ok(false));
        assert_eq!(enabled(&json!({"subagents": {"enabled": true}})), Ok(true));
    }
}
