//! A page's text as Cline's SDK takes it out of HTML: scripts, styles and comments dropped,
//! block elements and other tags made spaces, a few entities decoded, white space collapsed.
//! JSON is pretty-printed; anything else is left as it is.

use std::sync::OnceLock;

use regex::Regex;

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}")))
}

/// The text of `html`.
pub fn html_to_text(html: &str) -> String {
    static SCRIPT: OnceLock<Regex> = OnceLock::new();
    static STYLE: OnceLock<Regex> = OnceLock::new();
    static COMMENT: OnceLock<Regex> = OnceLock::new();
    static BLOCK: OnceLock<Regex> = OnceLock::new();
    static TAG: OnceLock<Regex> = OnceLock::new();
    static NUMERIC: OnceLock<Regex> = OnceLock::new();
    static SPACE: OnceLock<Regex> = OnceLock::new();
    static AFTER_NEWLINE: OnceLock<Regex> = OnceLock::new();
    static BLANK_LINES: OnceLock<Regex> = OnceLock::new();
    let text = regex(&SCRIPT, r"(?is)<script[^>]*>.*?</script>").replace_all(html, "");
    let text = regex(&STYLE, r"(?is)<style[^>]*>.*?</style>").replace_all(&text, "");
    let text = regex(&COMMENT, r"(?s)<!--.*?-->").replace_all(&text, "");
    let text = regex(&BLOCK, r"(?i)<(?:p|div|br|hr|h[1-6]|li|tr)[^>]*>").replace_all(&text, "\n");
    let text = regex(&TAG, r"<[^>]+>").replace_all(&text, " ");
    let text = text
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"");
    let text = regex(&NUMERIC, r"&#(\d+);").replace_all(&text, |c: &regex::Captures<'_>| {
        c[1].parse::<u32>()
            .ok()
            .and_then(char::from_u32)
            .map(String::from)
            .unwrap_or_default()
    });
    // As in Cline, collapsing white space also removes the line breaks made above.
    let text = regex(&SPACE, r"\s+").replace_all(&text, " ");
    let text = regex(&AFTER_NEWLINE, r"\n\s+").replace_all(&text, "\n");
    let text = regex(&BLANK_LINES, r"\n{3,}").replace_all(&text, "\n\n");
    text.trim().to_string()
}

/// `body` pretty-printed when it is JSON, else as it is.
pub fn pretty_json(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| body.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_scripts_and_entities() {
        assert_eq!(
            html_to_text("<html><head><style>p{}</style><script>x()</script></head><body><h1>Title</h1><p>A &amp; B&#33;</p><!-- c --></body></html>"),
            "Title A & B!"
        );
        assert_eq!(pretty_json("{\"a\":1}"), "{\n  \"a\": 1\n}");
        assert_eq!(pretty_json("not json"), "not json");
    }
}
