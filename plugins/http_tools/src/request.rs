//! The POST of one call and the text the model reads.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::Client;
use serde_json::Value;
use web_support::describe_error;
use web_support::limits::{byte_cap_note, cap_chars, read_capped, SizeLimits};

use crate::declared::Target;

/// The `User-Agent` of the requests.
pub const USER_AGENT: &str = concat!("toolhost-http_tools/", env!("CARGO_PKG_VERSION"));

/// What a tool with an empty answer returns.
pub const EMPTY_RESPONSE: &str = "(The response was empty.)";

/// A successful answer: its text, and whether the download was cut at the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    text: String,
    cut: bool,
    max_bytes: u64,
}

/// POSTs `body` to the target; the error is one line (`Request failed with status code 500`,
/// `timeout of 5000ms exceeded`, ...).
pub async fn post(
    client: &Client,
    target: &Target,
    body: &Value,
    max_bytes: u64,
    timeout: Duration,
) -> Result<Answer, String> {
    let mut request = client
        .post(target.url.clone())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/*;q=0.9, */*;q=0.1")
        .body(body.to_string());
    for (name, value) in &target.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let response = request
        .send()
        .await
        .map_err(|e| describe_error(&e, timeout))?;
    let (bytes, cut) = read_capped(response, max_bytes, timeout).await?;
    Ok(Answer {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        cut,
        max_bytes,
    })
}

/// The text the model reads: the body, cut to the character cap, with the notes of both cuts.
pub fn render(answer: Answer, limits: SizeLimits) -> String {
    let body = answer.text.trim();
    let mut text = if body.is_empty() {
        EMPTY_RESPONSE.to_string()
    } else {
        cap_chars(body, limits.max_chars)
    };
    if answer.cut {
        text.push_str("\n\n");
        text.push_str(&byte_cap_note(answer.max_bytes));
    }
    text
}
