//! The web tools' size rules: a download is capped in bytes (`web.fetch.max_bytes`), the text
//! the model reads in characters (`web.fetch.max_chars`), and each cut is noted in the text.

use std::time::Duration;

use tool_api::texts::format_size;

use crate::errors::{describe_error, status_error};
use crate::settings::{positive_int, ConfigError, SettingSource};

/// Download cap when `web.fetch.max_bytes` is not set: 5 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 5 * 1024 * 1024;

/// Result length cap when `web.fetch.max_chars` is not set.
pub const DEFAULT_MAX_CHARS: usize = 100_000;

/// The two caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimits {
    /// At most this many bytes of a body are downloaded.
    pub max_bytes: u64,
    /// At most this many characters of text are returned.
    pub max_chars: usize,
}

impl SizeLimits {
    /// Reads `web.fetch.max_bytes` and `web.fetch.max_chars`.
    pub fn read(source: &dyn SettingSource) -> Result<Self, ConfigError> {
        let max_bytes = positive_int(source, "web.fetch.max_bytes")?.unwrap_or(DEFAULT_MAX_BYTES);
        let max_chars = positive_int(source, "web.fetch.max_chars")?
            .map_or(DEFAULT_MAX_CHARS, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            });
        Ok(Self {
            max_bytes,
            max_chars,
        })
    }
}

/// The note for a download cut at the cap.
pub fn byte_cap_note(max_bytes: u64) -> String {
    format!(
        "[Content truncated: only the first {} of the page were downloaded.]",
        format_size(max_bytes)
    )
}

/// `content` cut to `max_chars` characters, with a note when it was cut.
pub fn cap_chars(content: &str, max_chars: usize) -> String {
    match content.char_indices().nth(max_chars) {
        Some((cut, _)) => format!(
            "{}\n\n[Content truncated: {max_chars} of {} characters shown.]",
            content[..cut].trim_end(),
            content.chars().count()
        ),
        None => content.to_string(),
    }
}

/// A successful response's body, at most `max_bytes` of it; `true` when it was cut. A status
/// outside 2xx and a failed read are errors (one line; `timeout` is the request's limit).
pub async fn read_capped(
    mut response: reqwest::Response,
    max_bytes: u64,
    timeout: Duration,
) -> Result<(Vec<u8>, bool), String> {
    if !response.status().is_success() {
        return Err(status_error(response.status()));
    }
    let cap = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| describe_error(&e, timeout))?
    {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_with_a_note() {
        assert_eq!(
            cap_chars("abcdef", 3),
            "abc\n\n[Content truncated: 3 of 6 characters shown.]"
        );
        assert_eq!(cap_chars("abc", 3), "abc");
    }
}
