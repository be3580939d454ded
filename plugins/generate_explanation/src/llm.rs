//! The LLM endpoint this tool needs, from the `[llm]` settings section (read by web_support's
//! [`LlmSection`], shared with use_subagents).
//!
//! Only the configuration is read here; there is no client yet.

use web_support::llm::LlmSection;
use web_support::SettingSource;

/// The keys the `[llm]` section must have.
const KEYS: [&str; 3] = ["base_url", "model", "api_key_env"];

/// An LLM endpoint as configured (its key variable is checked to be named, not read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The API's base URL (an OpenAI-compatible endpoint).
    pub base_url: String,
    /// The model id.
    pub model: String,
}

/// Reads the endpoint from the `[llm]` section; the error is the message for the model and the
/// user, naming what to configure.
pub fn endpoint(source: &dyn SettingSource) -> Result<Endpoint, String> {
    let section = LlmSection::read(source).map_err(|e| e.0)?;
    if !section.present {
        return Err(NOT_CONFIGURED.to_string());
    }
    let given = [
        written(&section.base_url).is_some(),
        written(&section.model).is_some(),
        written(&section.api_key_env).is_some(),
    ];
    let missing: Vec<&str> = KEYS
        .into_iter()
        .zip(given)
        .filter(|(_, given)| !given)
        .map(|(key, _)| key)
        .collect();
    match (
        written(&section.base_url),
        written(&section.model),
        written(&section.api_key_env),
    ) {
        (Some(base_url), Some(model), Some(_)) => Ok(Endpoint {
            base_url: base_url.to_string(),
            model: model.to_string(),
        }),
        _ => Err(format!(
            "The [llm] section of the toolhost settings is incomplete: {} missing. generate_explanation needs an LLM endpoint: set base_url (the API endpoint), model (the model id) and api_key_env (the name of the environment variable that holds the API key).",
            missing.join(", ")
        )),
    }
}

/// A value that is written and not blank.
fn written(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

/// The message when no `[llm]` section exists.
pub const NOT_CONFIGURED: &str = "API configuration not available: no LLM endpoint is \
configured. generate_explanation needs a model to write the explanations. Add an [llm] section \
to the toolhost settings file with base_url (the API endpoint), model (the model id) and \
api_key_env (the name of the environment variable that holds the API key).";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_key_is_needed() {
        assert_eq!(endpoint(&json!({})), Err(NOT_CONFIGURED.to_string()));
        let partial = endpoint(&json!({"llm": {"model": "m", "base_url": " "}}));
        assert_eq!(
            partial,
            Err("The [llm] section of the toolhost settings is incomplete: base_url, api_key_env missing. generate_explanation needs an LLM endpoint: set base_url (the API endpoint), model (the model id) and api_key_env (the name of the environment variable that holds the API key).".to_string())
        );
        assert_eq!(
            endpoint(
                &json!({"llm": {"base_url": "http://127.0.0.1:1", "model": "m", "api_key_env": "K"}})
            ),
            Ok(Endpoint {
                base_url: "http://127.0.0.1:1".into(),
                model: "m".into(),
            })
        );
    }
}
