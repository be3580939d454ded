//! Cline's hosted web endpoints, or a proxy that speaks their protocol.
//!
//! `POST {base}/api/v1/search/webfetch` and `.../websearch` with a JSON body, Cline's headers and
//! a bearer token; the answer is an envelope `{"success":true,"data":{...}}`. The token comes from
//! the environment variable that `web.cline.token_env` names and is sent as it is
//! (`Authorization: Bearer <value>`; Cline's own API expects the `workos:` prefix in the value).

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use reqwest::Client;
use serde_json::Value;
use tool_api::model::TaskContext;

use crate::errors::{describe_error, status_error};
use crate::settings::{nonblank_string, ConfigError, SettingSource};

/// Cline's production API, the default of `web.cline.base_url`.
pub const DEFAULT_BASE_URL: &str = "https://api.cline.bot";

/// The path of the fetch endpoint.
pub const FETCH_PATH: &str = "/api/v1/search/webfetch";

/// The path of the search endpoint.
pub const SEARCH_PATH: &str = "/api/v1/search/websearch";

/// The Cline release whose protocol this follows; sent as `User-Agent: Cline/<version>` and
/// `X-CORE-VERSION`, which the hosted endpoints expect from a Cline client.
pub const CLINE_VERSION: &str = "3.89.2";

/// Cline's error when there is no token (it follows `Error fetching web content: `).
pub const UNAUTHORIZED: &str = "Unauthorized: Please sign in to Cline before trying again.";

/// Where the endpoints are and where the token comes from (`[web.cline]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClineEndpoint {
    /// The API's base URL, without a trailing slash (`web.cline.base_url`).
    pub base_url: String,
    /// The environment variable holding the bearer token (`web.cline.token_env`).
    pub token_env: String,
}

impl ClineEndpoint {
    /// Reads `web.cline.base_url` (default [`DEFAULT_BASE_URL`]) and `web.cline.token_env`
    /// (required: without a token the endpoints refuse every request).
    pub fn read(source: &dyn SettingSource, tool: &str) -> Result<Self, ConfigError> {
        let base_url = nonblank_string(source, "web.cline.base_url")?
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        let token_env = nonblank_string(source, "web.cline.token_env")?.ok_or_else(|| {
            ConfigError(format!(
                "{tool} is set to use the Cline-compatible backend, but web.cline.token_env does not name the environment variable that holds its token."
            ))
        })?;
        Ok(Self {
            base_url: base_url.trim().trim_end_matches('/').to_string(),
            token_env: token_env.trim().to_string(),
        })
    }

    /// The token, or `None` when the variable is unset or empty (Cline's signed-out case).
    pub fn token(&self) -> Option<String> {
        std::env::var(&self.token_env)
            .ok()
            .filter(|t| !t.trim().is_empty())
    }

    /// The full URL of an endpoint path.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }
}

/// The headers Cline sends with every web request, token excepted, in its order.
pub fn headers(task: &TaskContext) -> Vec<(&'static str, String)> {
    vec![
        (CONTENT_TYPE.as_str(), "application/json".to_string()),
        ("X-Task-ID", task.task_id.clone()),
        (USER_AGENT.as_str(), format!("Cline/{CLINE_VERSION}")),
        ("X-PLATFORM", std::env::consts::OS.to_string()),
        ("X-PLATFORM-VERSION", "unknown".to_string()),
        ("X-CLIENT-TYPE", "toolhost".to_string()),
        ("X-CLIENT-VERSION", env!("CARGO_PKG_VERSION").to_string()),
        ("X-CORE-VERSION", CLINE_VERSION.to_string()),
        (
            "X-IS-MULTIROOT",
            (task.workspace_roots.len() > 1).to_string(),
        ),
    ]
}

/// Posts `body` to `path` and returns the `data` object of the answer.
///
/// Errors are single lines for the model: a status outside 2xx, a timeout, a connection failure,
/// an answer that is not Cline's envelope.
pub async fn post(
    client: &Client,
    endpoint: &ClineEndpoint,
    token: &str,
    path: &str,
    task: &TaskContext,
    body: &Value,
    timeout: std::time::Duration,
) -> Result<Value, String> {
    let mut request = client
        .post(endpoint.url(path))
        .header(AUTHORIZATION, format!("Bearer {token}"));
    for (name, value) in headers(task) {
        request = request.header(name, value);
    }
    let response = request
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| describe_error(&e, timeout))?;
    let status = response.status();
    if !status.is_success() {
        return Err(status_error(status));
    }
    let text = response
        .text()
        .await
        .map_err(|e| describe_error(&e, timeout))?;
    let envelope: Value = serde_json::from_str(&text)
        .map_err(|e| format!("the answer from {path} is not JSON ({e})"))?;
    match envelope.get("data") {
        Some(data @ Value::Object(_)) => Ok(data.clone()),
        _ => Err(format!(
            "the answer from {path} has no \"data\" object: {}",
            shorten(&text, 200)
        )),
    }
}

/// The first `max` characters of a text, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tool_api::model::WorkspaceRoot;

    use super::*;

    #[test]
    fn the_endpoint_needs_a_token_variable() {
        assert_eq!(
            ClineEndpoint::read(&json!({"web": {"cline": {}}}), "web_fetch"),
            Err(ConfigError("web_fetch is set to use the Cline-compatible backend, but web.cline.token_env does not name the environment variable that holds its token.".to_string()))
        );
        assert_eq!(
            ClineEndpoint::read(
                &json!({"web": {"cline": {"token_env": "TOKEN", "base_url": "http://127.0.0.1:9/"}}}),
                "web_fetch"
            ),
            Ok(ClineEndpoint {
                base_url: "http://127.0.0.1:9".to_string(),
                token_env: "TOKEN".to_string(),
            })
        );
        assert_eq!(
            ClineEndpoint::read(&json!({"web": {"cline": {"token_env": "T"}}}), "web_search")
                .map(|e| e.url(SEARCH_PATH)),
            Ok("https://api.cline.bot/api/v1/search/websearch".to_string())
        );
    }

    #[test]
    fn headers_follow_cline() {
        let task = TaskContext {
            task_id: "t-1".to_string(),
            workspace_roots: vec![
                WorkspaceRoot {
                    name: "a".to_string(),
                    path: "/a".to_string(),
                    clineignore: None,
                },
                WorkspaceRoot {
                    name: "b".to_string(),
                    path: "/b".to_string(),
                    clineignore: None,
                },
            ],
            ..TaskContext::default()
        };
        let headers: Vec<(&str, String)> = headers(&task);
        assert_eq!(
            headers,
            vec![
                ("content-type", "application/json".to_string()),
                ("X-Task-ID", "t-1".to_string()),
                ("user-agent", "Cline/3.89.2".to_string()),
                ("X-PLATFORM", std::env::consts::OS.to_string()),
                ("X-PLATFORM-VERSION", "unknown".to_string()),
                ("X-CLIENT-TYPE", "toolhost".to_string()),
                ("X-CLIENT-VERSION", env!("CARGO_PKG_VERSION").to_string()),
                ("X-CORE-VERSION", "3.89.2".to_string()),
                ("X-IS-MULTIROOT", "true".to_string()),
            ]
        );
    }

    #[test]
    fn long_answers_are_shortened() {
        assert_eq!(shorten("abcdef", 3), "abc…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
