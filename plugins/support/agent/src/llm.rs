//! `[llm]`: where the model an agent loop talks to is, and how to talk to it.
//!
//! The section is read by web_support's [`LlmSection`] (shared with generate_explanation); this
//! module says which keys an agent loop needs.

use std::time::Duration;

pub use web_support::llm::Protocol;
use web_support::llm::{self, LlmSection};
use web_support::settings::positive_int;
use web_support::{ConfigError, NetSettings, SettingSource};

/// Output tokens asked for when `llm.max_tokens` is not set (Anthropic's API requires a value).
pub const DEFAULT_MAX_TOKENS: u64 = 8_192;

/// The error when no endpoint is configured for `tool`; it names every key the user has to set.
pub fn no_endpoint(tool: &str) -> String {
    format!(
        "{tool} has no LLM endpoint to run subagents against. Set llm.base_url (the API's base \
         URL), llm.model (the model id), llm.protocol (\"openai\" for OpenAI-compatible chat \
         completions or \"anthropic\" for Anthropic messages) and llm.api_key_env (the \
         environment variable holding the API key; leave it out for an endpoint without a key) \
         in the [llm] section of the settings file."
    )
}

/// The model endpoint (`[llm]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmSettings {
    /// The API's base URL without a trailing slash.
    pub base_url: String,
    /// The model id sent with every request.
    pub model: String,
    /// The wire protocol.
    pub protocol: Protocol,
    /// The environment variable holding the API key, if the endpoint needs one.
    pub api_key_env: Option<String>,
    /// Output tokens per request (always sent to Anthropic, to OpenAI only when set).
    pub max_tokens: Option<u64>,
    /// The model's context window, when known (`llm.context_window`): shown as peak usage.
    pub context_window: Option<u64>,
    /// Attempts per request for failures worth retrying (5xx, 429, timeouts, connections).
    pub retry_attempts: u64,
    /// The delay before the first retry; doubled for each later one.
    pub retry_delay: Duration,
    /// Timeout, proxy and extra roots for the HTTP client.
    pub net: NetSettings,
}

impl LlmSettings {
    /// Reads `[llm]` (through [`LlmSection`]) for `tool`; [`no_endpoint`] when neither
    /// `llm.base_url` nor `llm.model` is set.
    pub fn read(source: &dyn SettingSource, tool: &str) -> Result<Self, ConfigError> {
        let section = LlmSection::read(source)?;
        let base_url = llm::nonblank("llm.base_url", &section.base_url)?;
        let model = llm::nonblank("llm.model", &section.model)?;
        let api_key_env = llm::nonblank("llm.api_key_env", &section.api_key_env)?;
        let (base_url, model) = match (base_url, model) {
            (Some(base_url), Some(model)) => (base_url, model),
            (None, None) => return Err(ConfigError(no_endpoint(tool))),
            (None, Some(_)) => return Err(missing_key("llm.base_url", tool)),
            (Some(_), None) => return Err(missing_key("llm.model", tool)),
        };
        Ok(Self {
            base_url,
            model,
            protocol: section.protocol,
            api_key_env,
            max_tokens: section.max_tokens,
            context_window: section.context_window,
            retry_attempts: section.retry_attempts,
            retry_delay: section.retry_delay,
            net: section.net,
        })
    }

    /// The API key from the environment; an error when the named variable is unset or empty.
    pub fn api_key(&self) -> Result<Option<String>, ConfigError> {
        web_support::llm::api_key(self.api_key_env.as_deref())
    }
}

/// Whether sub-agents may run (`subagents.enabled`, default false as in Cline): the gate of
/// use_subagents and spawn_agent.
pub fn subagents_enabled(source: &dyn SettingSource) -> Result<bool, ConfigError> {
    match source.value("subagents.enabled") {
        None | Some(serde_json::Value::Null) => Ok(false),
        Some(serde_json::Value::Bool(enabled)) => Ok(enabled),
        Some(other) => Err(ConfigError(format!(
            "The setting subagents.enabled must be true or false (found {other})."
        ))),
    }
}

/// Requests one agent loop may make when `subagents.max_turns` is not set.
pub const DEFAULT_MAX_TURNS: u64 = 25;

/// Requests one agent loop may make (`subagents.max_turns`).
pub fn max_turns(source: &dyn SettingSource) -> Result<u64, ConfigError> {
    Ok(positive_int(source, "subagents.max_turns")?.unwrap_or(DEFAULT_MAX_TURNS))
}

fn missing_key(key: &str, tool: &str) -> ConfigError {
    ConfigError(format!(
        "The setting {key} is missing. {}",
        no_endpoint(tool)
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use web_support::ProxySetting;

    #[test]
    fn no_endpoint_names_the_keys() {
        assert_eq!(
            LlmSettings::read(&json!({}), "a_tool"),
            Err(ConfigError(no_endpoint("a_tool")))
        );
        assert_eq!(
            LlmSettings::read(&json!({"llm": {"model": "m"}}), "a_tool").map_err(|e| e.0),
            Err(format!(
                "The setting llm.base_url is missing. {}",
                no_endpoint("a_tool")
            ))
        );
    }

    #[test]
    fn a_full_section_is_read() {
        let settings = json!({"llm": {
            "base_url": "http://127.0.0.1:9/v1/",
            "model": "small",
            "protocol": "anthropic",
            "api_key_env": "KEY",
            "max_tokens": 100,
            "context_window": 200000,
            "retry_attempts": 1,
            "retry_delay_ms": 5,
            "timeout_ms": 250,
            "proxy": "none",
        }});
        assert_eq!(
            LlmSettings::read(&settings, "a_tool"),
            Ok(LlmSettings {
                base_url: "http://127.0.0.1:9/v1".to_string(),
                model: "small".to_string(),
                protocol: Protocol::Anthropic,
                api_key_env: Some("KEY".to_string()),
                max_tokens: Some(100),
                context_window: Some(200_000),
                retry_attempts: 1,
                retry_delay: Duration::from_millis(5),
                net: NetSettings {
                    timeout: Duration::from_millis(250),
                    proxy: ProxySetting::Off,
                    ca_file: None,
                    egress: true,
                },
            })
        );
    }

    #[test]
    fn an_unknown_protocol_is_refused() {
        let settings = json!({"llm": {"base_url": "http://x", "model": "m", "protocol": "grpc"}});
        assert_eq!(
            LlmSettings::read(&settings, "a_tool"),
            Err(ConfigError(
                "The setting llm.protocol must be \"openai\" or \"anthropic\" (found \"grpc\")."
                    .to_string()
            ))
        );
    }

    #[test]
    fn the_gate_is_off_by_default() {
        assert_eq!(subagents_enabled(&json!({})), Ok(false));
        assert_eq!(
            subagents_enabled(&json!({"subagents": {"enabled": true}})),
            Ok(true)
        );
        assert!(subagents_enabled(&json!({"subagents": {"enabled": "yes"}})).is_err());
    }

    #[test]
    fn the_turn_limit_has_a_default() {
        assert_eq!(max_turns(&json!({})), Ok(25));
        assert_eq!(max_turns(&json!({"subagents": {"max_turns": 3}})), Ok(3));
    }
}
