//! A downloaded page as the model reads it: decoded, HTML turned into Markdown of its main
//! content, cut to the length limit, with the prompt and the URL on top.
//!
//! HTML goes through dom_smoothie, a port of Mozilla's Readability (Firefox's reader view): it
//! keeps the article and drops navigation, sidebars, footers, scripts and styles, and its
//! Markdown writer keeps links (made absolute) and code blocks. A page Readability cannot score
//! (a bare listing, an app shell) is converted whole by dom_query's Markdown writer, which still
//! leaves out scripts and styles.

use encoding_rs::{Encoding, UTF_8};
use reqwest::Url;

use crate::direct::{Download, Kind};
use web_support::limits::{byte_cap_note, cap_chars};

/// What the model reads when a page has no text at all.
pub const EMPTY_PAGE: &str = "(The page has no readable text.)";

/// The result text for a downloaded page; `requested` is the URL asked for, as parsed (so that
/// `https://a.io` and `https://a.io/` do not count as a redirect).
pub fn render(
    download: &Download,
    requested: &Url,
    prompt: &str,
    max_bytes: u64,
    max_chars: usize,
) -> String {
    let text = decode(&download.body, download.content_type.as_deref());
    let (title, content) = match download.kind {
        Kind::Html => html_to_markdown(&text, download.final_url.as_str()),
        Kind::Json | Kind::Text => (None, text),
    };
    let content = content.trim();
    let content = if content.is_empty() {
        EMPTY_PAGE
    } else {
        content
    };
    let mut out = format!("Prompt: {prompt}\nURL: {}", download.final_url);
    if download.final_url != *requested {
        out.push_str(&format!(" (redirected from {requested})"));
    }
    if let Some(title) = title.filter(|t| !t.trim().is_empty()) {
        out.push_str(&format!("\nTitle: {}", title.trim()));
    }
    out.push_str("\n\n");
    out.push_str(&cap_chars(content, max_chars));
    if download.cut {
        out.push_str("\n\n");
        out.push_str(&byte_cap_note(max_bytes));
    }
    out
}

/// Decodes a body: a byte-order mark wins, then the header's charset, then UTF-8 if the bytes are
/// UTF-8 (a sequence cut short at the download cap still counts), then chardetng's guess.
pub fn decode(body: &[u8], content_type: Option<&str>) -> String {
    let encoding = Encoding::for_bom(body)
        .map(|(encoding, _)| encoding)
        .or_else(|| {
            content_type
                .and_then(charset)
                .and_then(|label| Encoding::for_label(label.as_bytes()))
        })
        .unwrap_or_else(|| {
            let utf8 = match std::str::from_utf8(body) {
                Ok(_) => true,
                // `error_len() == None`: the bytes end inside a character, i.e. the cut.
                Err(e) => e.error_len().is_none(),
            };
            if utf8 {
                UTF_8
            } else {
                let mut detector = chardetng::EncodingDetector::new();
                detector.feed(body, true);
                detector.guess(None, true)
            }
        });
    encoding.decode_with_bom_removal(body).0.into_owned()
}

/// The `charset` parameter of a `Content-Type`.
fn charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_string())
    })
}

/// The title and the Markdown of a page's main content (or of the whole page).
pub fn html_to_markdown(html: &str, url: &str) -> (Option<String>, String) {
    let config = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Markdown,
        ..dom_smoothie::Config::default()
    };
    let article = dom_smoothie::Readability::new(html, Some(url), Some(config))
        .and_then(|mut readability| readability.parse());
    match article {
        Ok(article) if !article.text_content.trim().is_empty() => {
            (Some(article.title), article.text_content.to_string())
        }
        _ => {
            let document = dom_query::Document::from(html);
            let title = document.select("head title").text().to_string();
            (Some(title), document.md(None).to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn download(address: &str, kind: Kind, body: &str, cut: bool) -> Download {
        Download {
            final_url: url(address),
            content_type: None,
            kind,
            body: body.as_bytes().to_vec(),
            cut,
        }
    }

    #[test]
    fn text_comes_back_with_the_prompt_on_top() {
        let page = download(
            "https://example.com/a.txt",
            Kind::Text,
            "line one\nline two\n",
            false,
        );
        assert_eq!(
            render(
                &page,
                &url("https://example.com/a.txt"),
                "find the second line",
                1000,
                1000
            ),
            "Prompt: find the second line\nURL: https://example.com/a.txt\n\nline one\nline two"
        );
    }

    #[test]
    fn redirects_and_both_cuts_are_noted() {
        let page = download(
            "https://example.com/b",
            Kind::Json,
            "{\"a\": \"0123456789\"}",
            true,
        );
        assert_eq!(
            render(&page, &url("http://example.com/a"), "p", 2048, 10),
            "Prompt: p\nURL: https://example.com/b (redirected from http://example.com/a)\n\n{\"a\": \"012\n\n[Content truncated: 10 of 19 characters shown.]\n\n[Content truncated: only the first 2.0 KB of the page were downloaded.]"
        );
    }

    #[test]
    fn an_empty_page_says_so() {
        let page = download(
            "https://example.com/",
            Kind::Html,
            "<html><body><script>x()</script></body></html>",
            false,
        );
        assert_eq!(
            render(&page, &url("https://example.com"), "p", 1000, 1000),
            format!("Prompt: p\nURL: https://example.com/\n\n{EMPTY_PAGE}")
        );
    }

    #[test]
    fn html_becomes_markdown_of_the_main_content() {
        let html = r#"<html><head><title>Guide</title><style>p{color:red}</style>
            <script>track()</script></head><body>
            <nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
            <article><h1>Getting started</h1>
            <p>This guide explains how the <a href="/docs/runtime">runtime</a> schedules tasks
            across threads, and why blocking inside a task stalls every other task on that thread.
            It is long enough for the reader view to take it as the page's main content.</p>
            <pre><code>cargo add tokio</code></pre></article>
            <footer>Copyright Example</footer></body></html>"#;
        let (title, markdown) = html_to_markdown(html, "https://example.com/guide/");
        assert_eq!(
            (title.as_deref(), markdown.as_str()),
            (
                Some("Guide"),
                "## Getting started\n\nThis guide explains how the \
                 [runtime](https://example.com/docs/runtime) schedules tasks across threads, and \
                 why blocking inside a task stalls every other task on that thread. It is long \
                 enough for the reader view to take it as the page's main content.\n\n```\ncargo \
                 add tokio\n```"
            )
        );
    }

    #[test]
    fn bodies_are_decoded_by_bom_header_or_guess() {
        assert_eq!(decode(b"caf\xc3\xa9", None), "café");
        assert_eq!(
            decode(b"caf\xe9", Some("text/plain; charset=ISO-8859-1")),
            "café"
        );
        assert_eq!(
            decode(b"\xef\xbb\xbfhi", Some("text/plain; charset=latin1")),
            "hi"
        );
        // Cut inside the two bytes of "é": still UTF-8.
        assert_eq!(decode(b"caf\xc3", None), "caf\u{fffd}");
        assert_eq!(
            charset("text/html; Charset=\"windows-1252\""),
            Some("windows-1252".to_string())
        );
    }
}
