//! The UI side of a call: the streaming preview and the payload shown for approval.

use serde_json::json;

pub use tool_api::sdk::js::strip_partial_closing_tag;

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
