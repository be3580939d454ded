//! The `[llm]` section of the settings: where a model is and how to talk to it, read once, by
//! this code, for every plugin that calls a model (use_subagents, generate_explanation). Each
//! plugin decides which keys it needs and how to say that they are missing.

use std::time::Duration;

use crate::settings::{positive_int, string};
use crate::{ConfigError, NetSettings, ProxySetting, SettingSource};

/// The time one model request may take when `llm.timeout_ms` is not set (a non-streamed answer
/// of a slow model can take minutes).
pub const DEFAULT_TIMEOUT_MS: u64 = 300_000;

/// Attempts per request when `llm.retry_attempts` is not set (Cline's 3).
pub const DEFAULT_RETRY_ATTEMPTS: u64 = 3;

/// The first retry delay when `llm.retry_delay_ms` is not set (Cline's 2000 ms, doubled per try).
pub const DEFAULT_RETRY_DELAY_MS: u64 = 2_000;

/// Which API the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OpenAI-compatible chat completions: `POST {base_url}/chat/completions`.
    OpenAi,
    /// Anthropic messages: `POST {base_url}/v1/messages`.
    Anthropic,
}

/// The `[llm]` section as written: every key checked for its type, none required here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmSection {
    /// Whether the settings have an `[llm]` section at all.
    pub present: bool,
    /// The API's base URL, trimmed, without a trailing slash (blank when written blank: see
    /// [`nonblank`]).
    pub base_url: Option<String>,
    /// The model id, trimmed (blank when written blank).
    pub model: Option<String>,
    /// The wire protocol (`llm.protocol`, default OpenAI).
    pub protocol: Protocol,
    /// The environment variable holding the API key, trimmed (blank when written blank).
    pub api_key_env: Option<String>,
    /// Output tokens per request.
    pub max_tokens: Option<u64>,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
    /// Attempts per request for failures worth retrying.
    pub retry_attempts: u64,
    /// The delay before the first retry; doubled for each later one.
    pub retry_delay: Duration,
    /// Timeout, proxy and extra roots for the HTTP client.
    pub net: NetSettings,
}

impl LlmSection {
    /// Reads `[llm]`; a key of the wrong type or value is an error naming it.
    pub fn read(source: &dyn SettingSource) -> Result<Self, ConfigError> {
        let protocol = match string(source, "llm.protocol")?.as_deref().map(str::trim) {
            None | Some("openai") => Protocol::OpenAi,
            Some("anthropic") => Protocol::Anthropic,
            Some(other) => {
                return Err(ConfigError(format!(
                "The setting llm.protocol must be \"openai\" or \"anthropic\" (found \"{other}\")."
            )))
            }
        };
        let timeout_ms = positive_int(source, "llm.timeout_ms")?.unwrap_or(DEFAULT_TIMEOUT_MS);
        let proxy = match string(source, "llm.proxy")?.as_deref().map(str::trim) {
            None => ProxySetting::FromEnvironment,
            Some(p) if p.eq_ignore_ascii_case("none") => ProxySetting::Off,
            Some("") => return Err(ConfigError(
                "The setting llm.proxy is empty: give a proxy URL, or \"none\" to use no proxy."
                    .to_string(),
            )),
            Some(url) => ProxySetting::Url {
                url: url.to_string(),
                no_proxy: string(source, "llm.no_proxy")?,
            },
        };
        Ok(Self {
            present: source.value("llm").is_some_and(|v| !v.is_null()),
            base_url: string(source, "llm.base_url")?
                .map(|s| s.trim().trim_end_matches('/').to_string()),
            model: string(source, "llm.model")?.map(|s| s.trim().to_string()),
            protocol,
            api_key_env: string(source, "llm.api_key_env")?.map(|s| s.trim().to_string()),
            max_tokens: positive_int(source, "llm.max_tokens")?,
            context_window: positive_int(source, "llm.context_window")?,
            retry_attempts: positive_int(source, "llm.retry_attempts")?
                .unwrap_or(DEFAULT_RETRY_ATTEMPTS),
            retry_delay: Duration::from_millis(
                positive_int(source, "llm.retry_delay_ms")?.unwrap_or(DEFAULT_RETRY_DELAY_MS),
            ),
            net: NetSettings {
                timeout: Duration::from_millis(timeout_ms),
                proxy,
                ca_file: crate::settings::path(source, "llm.ca_file")?,
                // The model's endpoint is configured, so the egress policy allows it; the
                // proxy only logs its connections.
                egress: true,
            },
        })
    }
}

/// A key of the section that must not be blank when it is written: the value, or an error
/// naming the key.
pub fn nonblank(key: &str, value: &Option<String>) -> Result<Option<String>, ConfigError> {
    match value {
        Some(s) if s.is_empty() => Err(ConfigError(format!(
            "The setting {key} is empty; remove it or give it a value."
        ))),
        other => Ok(other.clone()),
    }
}

/// The API key in the environment variable `name` (what `llm.api_key_env` names); an error
/// when the variable is unset or empty, `None` when no variable is named.
pub fn api_key(name: Option<&str>) -> Result<Option<String>, ConfigError> {
    let Some(name) = name else {
        return Ok(None);
    };
    match std::env::var(name) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_string())),
        _ => Err(ConfigError(format!(
            "The environment variable {name} (named by llm.api_key_env) holds no API key."
        ))),
    }
}
