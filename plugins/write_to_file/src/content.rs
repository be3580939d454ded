//! Text preparation around the edit: cleaning up the model's content before it is written, and
//! the normalised form of the saved file that is shown back to the model.

use crate::js;

/// Strips Markdown code fences some models wrap whole files in (Cline's preparation, §5.3):
/// a first line starting with ```` ``` ```` is removed (language tag and all), then the text is
/// trimmed; a text ending with ```` ``` ```` loses its last line and is trimmed again.
///
/// The trims also remove the final newline; that is Cline's behaviour and kept on purpose.
pub fn strip_code_fences(content: &str) -> String {
    let mut text = content.to_string();
    if text.starts_with("```") {
        let rest: Vec<&str> = text.split('\n').skip(1).collect();
        text = js::trim(&rest.join("\n")).to_string();
    }
    if text.ends_with("```") {
        let mut lines: Vec<&str> = text.split('\n').collect();
        lines.pop();
        text = js::trim(&lines.join("\n")).to_string();
    }
    text
}

/// Cline's fixes for non-Claude models: HTML entities some models escape by mistake are turned
/// back into characters (not in `.xml` files, where they are syntax), and U+FFFD replacement
/// characters are removed.
///
/// Cline also applies them when the model is unknown. Here they only apply when the host names a
/// model that is not a Claude model: unescaping a file that really contains `&lt;` would corrupt
/// it, so without knowing the model the text is left alone.
pub fn apply_model_fixes(text: &str, model_id: Option<&str>, path: &str) -> String {
    let Some(model) = model_id else {
        return text.to_string();
    };
    if model.contains("claude") {
        return text.to_string();
    }
    let mut fixed = text.to_string();
    if !path.to_lowercase().ends_with(".xml") {
        // The order matters and is Cline's: `&amp;lt;` becomes `&lt;`, not `<`.
        fixed = fixed
            .replace("&gt;", ">")
            .replace("&lt;", "<")
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&apos;", "'");
    }
    fixed.replace('\u{FFFD}', "")
}

/// The saved file as Cline reports it (`saveChanges`): every line ending converted to the
/// content's style (CRLF if it has any `\r\n`, else LF), trailing whitespace trimmed, and exactly
/// one final line ending. An empty file stays empty (Cline reports nothing useful there).
pub fn final_content(content: &str) -> String {
    if content.is_empty() {
        return String::new();
    }
    let eol = if content.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let unified = content.replace("\r\n", "\n");
    let converted = if eol == "\n" {
        unified
    } else {
        unified.replace('\n', eol)
    };
    format!("{}{eol}", js::trim_end(&converted))
}

/// The text shown to the model for a file: for Jupyter notebooks the cell outputs are removed
/// (they are noise for editing and can be huge), everything else as it is.
pub fn for_model(path: &str, text: &str) -> String {
    if path.to_lowercase().ends_with(".ipynb") {
        tool_api::sdk::files::strip_notebook_outputs(text)
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_with_language_tags_are_stripped() {
        assert_eq!(
            strip_code_fences("```python\nprint(1)\nprint(2)\n```"),
            "print(1)\nprint(2)"
        );
        assert_eq!(strip_code_fences("```\n  x = 1\n```\n"), "x = 1");
    }

    #[test]
    fn fence_stripping_trims_even_without_a_closing_fence() {
        assert_eq!(strip_code_fences("```js\nlet a = 1\n\n"), "let a = 1");
        assert_eq!(strip_code_fences("text\n```"), "text");
        assert_eq!(strip_code_fences("```"), "");
    }

    #[test]
    fn content_without_fences_is_untouched() {
        assert_eq!(
            strip_code_fences("  keep\nall ``` inside  \n"),
            "  keep\nall ``` inside  \n"
        );
    }

    #[test]
    fn final_content_has_one_line_ending_in_the_content_style() {
        assert_eq!(final_content("a\nb"), "a\nb\n");
        assert_eq!(final_content("a\nb\n\n  \n"), "a\nb\n");
        assert_eq!(final_content("a\r\nb\nc  "), "a\r\nb\r\nc\r\n");
        assert_eq!(final_content("a\r\n\r\n"), "a\r\n");
        assert_eq!(final_content(""), "");
        assert_eq!(final_content("\n\n"), "\n");
    }

    #[test]
    fn model_fixes_apply_only_to_known_non_claude_models() {
        let text = "a &lt;b&gt; &amp;lt; \u{FFFD}";
        assert_eq!(apply_model_fixes(text, None, "x.ts"), text);
        assert_eq!(
            apply_model_fixes(text, Some("claude-sonnet-4"), "x.ts"),
            text
        );
        assert_eq!(
            apply_model_fixes(text, Some("deepseek-chat"), "x.ts"),
            "a <b> &lt; "
        );
        assert_eq!(
            apply_model_fixes(text, Some("deepseek-chat"), "conf/App.XML"),
            "a &lt;b&gt; &amp;lt; "
        );
    }

    #[test]
    fn notebook_outputs_are_removed_for_the_model() {
        let notebook = r#"{"cells":[{"cell_type":"code","outputs":[{"text":"big"}],"source":["x"]}],"nbformat":4}"#;
        assert_eq!(
            for_model("nb/Analysis.IPYNB", notebook),
            "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"outputs\": [],\n   \"source\": [\n    \"x\"\n   ]\n  }\n ],\n \"nbformat\": 4\n}"
        );
        assert_eq!(for_model("a.ipynb", "not json"), "not json");
        assert_eq!(for_model("a.txt", notebook), notebook);
    }
}
