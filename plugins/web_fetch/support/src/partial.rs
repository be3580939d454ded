//! The UI side of a call: the streaming preview and the payload shown for approval.

use serde_json::json;

/// Removes a closing tag still being typed at the end of a streamed value (Cline's
/// `removeClosingTag`): an optional whitespace character, `<` or `</`, then any in-order part of
/// the parameter's name, at the very end. `https://x.io</ur` becomes `https://x.io`.
pub fn strip_partial_closing_tag<'a>(text: &'a str, tag: &str) -> &'a str {
    let Some(open) = text.rfind('<') else {
        return text;
    };
    let after = &text[open + 1..];
    let after = after.strip_prefix('/').unwrap_or(after);
    // Each character of the rest must come from the tag's name, in order, each at most once
    // (the regex is the name with every character optional).
    let mut wanted = tag.chars();
    if !after.chars().all(|c| wanted.by_ref().any(|t| t == c)) {
        return text;
    }
    let head = &text[..open];
    match head.chars().next_back() {
        Some(c) if c.is_whitespace() => &head[..head.len() - c.len_utf8()],
        _ => head,
    }
}

/// Cline's `ClineSayTool` payload for a web tool: `{"tool":"webFetch","path":URL,
/// "content":"Fetching URL: URL","operationIsLocatedInWorkspace":false}`.
pub fn tool_message(tool: &str, path: &str, content: &str) -> String {
    json!({
        "tool": tool,
        "path": path,
        "content": content,
        "operationIsLocatedInWorkspace": false,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_closing_tags_are_removed() {
        let cases = [
            ("https://x.io</ur", "https://x.io"),
            ("https://x.io <", "https://x.io"),
            ("https://x.io</url", "https://x.io"),
            ("https://x.io<", "https://x.io"),
            ("https://x.io/?q=<b>", "https://x.io/?q=<b>"),
            ("https://x.io", "https://x.io"),
            ("a</lu", "a</lu"),
        ];
        for (input, want) in cases {
            assert_eq!(strip_partial_closing_tag(input, "url"), want, "{input}");
        }
        assert_eq!(strip_partial_closing_tag("tokio</query", "query"), "tokio");
        assert_eq!(
            strip_partial_closing_tag("rust async</qu", "query"),
            "rust async"
        );
    }

    #[test]
    fn the_payload_has_clines_keys_in_order() {
        assert_eq!(
            tool_message("webFetch", "https://x.io", "Fetching URL: https://x.io"),
            r#"{"tool":"webFetch","path":"https://x.io","content":"Fetching URL: https://x.io","operationIsLocatedInWorkspace":false}"#
        );
    }
}
