//! The direct backend's download: one GET, redirects followed, the body read up to a cap, and
//! what kind of content came back.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use reqwest::{Client, Url};
use tool_api::texts::format_size;
use web_support::limits::read_capped;
use web_support::{describe_error, status_error};

/// What the direct backend asks for: pages first, then anything textual.
const ACCEPT_HEADER: &str =
    "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5";

/// How many leading bytes decide whether an undeclared body is text.
const SNIFF_LEN: usize = 8192;

/// What a page holds, as far as the conversion cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML or XHTML: converted to Markdown.
    Html,
    /// JSON: returned as it is.
    Json,
    /// Any other text: returned as it is.
    Text,
}

/// A downloaded page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// Where the page was found, after redirects.
    pub final_url: Url,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// What the body holds.
    pub kind: Kind,
    /// The body, at most the cap.
    pub body: Vec<u8>,
    /// Whether the body was cut at the cap.
    pub cut: bool,
}

/// The URL to fetch, or the message for a URL the model got wrong.
pub fn parse_url(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw.trim()).map_err(|e| {
        format!(
            "Invalid URL '{raw}': {e}. Give a complete URL that starts with https:// or http://."
        )
    })?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        scheme => Err(format!(
            "Unsupported URL scheme '{scheme}' in '{raw}': web_fetch only fetches http:// and https:// URLs."
        )),
    }
}

/// Fetches `url`: a status outside 2xx, a declared binary type and every network failure are
/// errors (one line, for `Error fetching web content: …`).
pub async fn download(
    client: &Client,
    url: Url,
    max_bytes: u64,
    timeout: Duration,
) -> Result<Download, String> {
    let response = client
        .get(url)
        .header(ACCEPT, ACCEPT_HEADER)
        .send()
        .await
        .map_err(|e| describe_error(&e, timeout))?;
    if !response.status().is_success() {
        return Err(status_error(response.status()));
    }
    let final_url = response.url().clone();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let known = match content_type.as_deref().map_or(Declared::Unknown, classify) {
        Declared::Known(kind) => Some(kind),
        Declared::Unknown => None,
        Declared::Binary(mime) => {
            let length = response
                .headers()
                .get(CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok());
            return Err(binary_error(&final_url, &mime, length));
        }
    };
    let (body, cut) = read_capped(response, max_bytes, timeout).await?;
    let kind = match known.or_else(|| sniff(&body)) {
        Some(kind) => kind,
        None => {
            let mime = content_type.as_deref().unwrap_or("no Content-Type");
            return Err(binary_error(&final_url, mime, None));
        }
    };
    Ok(Download {
        final_url,
        content_type,
        kind,
        body,
        cut,
    })
}

/// What a `Content-Type` says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Declared {
    Known(Kind),
    /// Binary: refused without reading the body. Holds the MIME type.
    Binary(String),
    /// Missing or `application/octet-stream`: the body decides.
    Unknown,
}

fn classify(content_type: &str) -> Declared {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let (top, sub) = mime.split_once('/').unwrap_or((mime.as_str(), ""));
    match (top, sub) {
        ("", _) | ("application", "octet-stream") => Declared::Unknown,
        ("text", "html") | ("application", "xhtml+xml") => Declared::Known(Kind::Html),
        ("application", "json") => Declared::Known(Kind::Json),
        ("application", s) if s.ends_with("+json") => Declared::Known(Kind::Json),
        ("text", _) => Declared::Known(Kind::Text),
        ("application", s) if s.ends_with("+xml") || TEXT_APPLICATION_TYPES.contains(&s) => {
            Declared::Known(Kind::Text)
        }
        _ => Declared::Binary(mime),
    }
}

/// `application/…` types that are text.
const TEXT_APPLICATION_TYPES: [&str; 12] = [
    "xml",
    "javascript",
    "x-javascript",
    "ecmascript",
    "yaml",
    "x-yaml",
    "toml",
    "x-sh",
    "sql",
    "graphql",
    "x-ndjson",
    "csv",
];

/// The kind of an undeclared body: `None` when it looks binary.
fn sniff(body: &[u8]) -> Option<Kind> {
    let head = &body[..body.len().min(SNIFF_LEN)];
    if content_inspector::inspect(head).is_binary() {
        return None;
    }
    let start = String::from_utf8_lossy(&head[..head.len().min(512)]).to_ascii_lowercase();
    let start = start.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Some(Kind::Html)
    } else if start.starts_with('{') || start.starts_with('[') {
        Some(Kind::Json)
    } else {
        Some(Kind::Text)
    }
}

fn binary_error(url: &Url, mime: &str, length: Option<u64>) -> String {
    let size = length
        .map(|n| format!(", {}", format_size(n)))
        .unwrap_or_default();
    format!("{url} is not a text page ({mime}{size}); web_fetch only reads HTML, text and JSON.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_absolute_http_or_https() {
        assert_eq!(
            parse_url(" https://example.com/a?b=1 ").map(|u| u.to_string()),
            Ok("https://example.com/a?b=1".to_string())
        );
        assert_eq!(
            parse_url("example.com/page"),
            Err("Invalid URL 'example.com/page': relative URL without a base. Give a complete URL that starts with https:// or http://.".to_string())
        );
        assert_eq!(
            parse_url("ftp://example.com/file.txt"),
            Err("Unsupported URL scheme 'ftp' in 'ftp://example.com/file.txt': web_fetch only fetches http:// and https:// URLs.".to_string())
        );
        assert_eq!(
            parse_url("file:///etc/passwd"),
            Err("Unsupported URL scheme 'file' in 'file:///etc/passwd': web_fetch only fetches http:// and https:// URLs.".to_string())
        );
    }

    #[test]
    fn content_types_are_classified() {
        let cases = [
            ("text/html; charset=utf-8", Declared::Known(Kind::Html)),
            ("application/xhtml+xml", Declared::Known(Kind::Html)),
            ("application/json", Declared::Known(Kind::Json)),
            ("application/problem+json", Declared::Known(Kind::Json)),
            ("text/plain", Declared::Known(Kind::Text)),
            ("text/markdown", Declared::Known(Kind::Text)),
            ("application/rss+xml", Declared::Known(Kind::Text)),
            ("application/x-yaml", Declared::Known(Kind::Text)),
            ("application/octet-stream", Declared::Unknown),
            ("", Declared::Unknown),
            ("image/png", Declared::Binary("image/png".to_string())),
            (
                "Application/PDF",
                Declared::Binary("application/pdf".to_string()),
            ),
        ];
        for (header, want) in cases {
            assert_eq!(classify(header), want, "{header}");
        }
    }

    #[test]
    fn undeclared_bodies_are_sniffed() {
        assert_eq!(sniff(b"  <!DOCTYPE html><p>x</p>"), Some(Kind::Html));
        assert_eq!(sniff(b"{\"a\": 1}"), Some(Kind::Json));
        assert_eq!(sniff(b"plain words"), Some(Kind::Text));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), None);
    }
}
