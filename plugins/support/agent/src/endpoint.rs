//! One request to the model endpoint, with Cline's retry rule.
//!
//! Requests are not streamed: the whole answer is read, then parsed. Each attempt runs on a
//! current-thread runtime of its own through web_support's `block_on_cancellable` (a shared
//! plugin runtime breaks when several hosts in one process load this library) with a fresh
//! client, so no pooled connection outlives the runtime that opened it.

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;
use tool_api::abi::ToolErrorKind;
use tool_api::sdk::Ctx;
use web_support::{build_client, describe_error, status_error};

use crate::conversation::{endpoint_path, parse_reply, Reply};
use crate::llm::{LlmSettings, Protocol};

/// The Anthropic API version the request format follows.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Characters of an error answer's body quoted in the failure.
const ERROR_BODY_CHARS: usize = 300;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// The call was cancelled.
    Cancelled,
    /// The request failed; `retryable` for server errors, rate limits, timeouts and connections.
    Failed {
        /// One line for the main agent.
        message: String,
        /// Whether another attempt may succeed.
        retryable: bool,
    },
}

/// Sends `body` with retries: up to `llm.retry_attempts` attempts, waiting
/// `retry_delay × 2^(attempt−1)` between them (Cline's 2000 ms doubling); authentication and other
/// client errors are not retried.
pub fn send(
    ctx: &Ctx<'_>,
    llm: &LlmSettings,
    api_key: Option<&str>,
    body: &Value,
) -> Result<Reply, RequestError> {
    let mut attempt: u32 = 1;
    loop {
        match send_once(ctx, llm, api_key, body) {
            Err(RequestError::Failed {
                retryable: true, ..
            }) if u64::from(attempt) < llm.retry_attempts => {
                let delay = llm.retry_delay.saturating_mul(1 << (attempt - 1).min(16));
                if ctx.wait_cancelled(delay) {
                    return Err(RequestError::Cancelled);
                }
                attempt += 1;
            }
            other => return other,
        }
    }
}

fn send_once(
    ctx: &Ctx<'_>,
    llm: &LlmSettings,
    api_key: Option<&str>,
    body: &Value,
) -> Result<Reply, RequestError> {
    // The model's endpoint is configured, so the egress policy allows it; through the proxy,
    // its connections are logged with the others.
    let mut net = llm.net.clone();
    net.route(ctx, &[llm.base_url.as_str()])
        .map_err(|e| RequestError::Failed {
            message: e.message.to_string(),
            retryable: false,
        })?;
    let client = build_client(
        &net,
        Some(concat!("toolhost-subagents/", env!("CARGO_PKG_VERSION"))),
    )
    .map_err(|e| RequestError::Failed {
        message: e.0,
        retryable: false,
    })?;
    let url = format!("{}{}", llm.base_url, endpoint_path(llm.protocol));
    let mut request = client
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string());
    request = match (llm.protocol, api_key) {
        (Protocol::OpenAi, Some(key)) => request.header(AUTHORIZATION, format!("Bearer {key}")),
        (Protocol::Anthropic, Some(key)) => request
            .header("x-api-key", key)
            .header("anthropic-version", ANTHROPIC_VERSION),
        (Protocol::Anthropic, None) => request.header("anthropic-version", ANTHROPIC_VERSION),
        (Protocol::OpenAi, None) => request,
    };
    let timeout = llm.net.timeout;
    let exchange = async {
        let response = request.send().await.map_err(|e| transport(&e, timeout))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| transport(&e, timeout))?;
        Ok::<_, RequestError>((status, text))
    };
    let (status, text) = match web_support::block_on_cancellable(ctx, exchange) {
        Ok(result) => result?,
        Err(e) if e.kind == ToolErrorKind::CANCELLED => return Err(RequestError::Cancelled),
        Err(e) => {
            return Err(RequestError::Failed {
                message: e.message.to_string(),
                retryable: false,
            })
        }
    };
    if !status.is_success() {
        let detail = text.trim();
        let message = if detail.is_empty() {
            status_error(status)
        } else {
            format!(
                "{}: {}",
                status_error(status),
                crate::cut(detail, ERROR_BODY_CHARS)
            )
        };
        return Err(RequestError::Failed {
            message,
            retryable: status.is_server_error() || status.as_u16() == 429,
        });
    }
    let json: Value = serde_json::from_str(&text).map_err(|e| RequestError::Failed {
        message: format!("the model endpoint answered with something that is not JSON ({e})"),
        retryable: false,
    })?;
    parse_reply(llm.protocol, &json).map_err(|message| RequestError::Failed {
        message: format!("the model endpoint's answer is not understood: {message}"),
        retryable: false,
    })
}

fn transport(error: &reqwest::Error, timeout: std::time::Duration) -> RequestError {
    RequestError::Failed {
        message: describe_error(error, timeout),
        retryable: true,
    }
}
