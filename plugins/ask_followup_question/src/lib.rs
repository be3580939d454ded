//! The `ask_followup_question` tool: asks the user a question, optionally with answer choices.
//!
//! With nobody to answer (no terminal, a non-interactive run), the model is told to find the
//! answer with its tools instead, as Cline does in its non-interactive mode.

use serde_json::{json, Value};
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "Ask the user a question when you need information to go on that you \
cannot find with your tools: a choice between approaches, a missing detail, a preference. Ask \
one clear, specific question. `options` may list 2 to 5 short answers the user can pick from, \
as a JSON array of strings; do not add an option for switching modes.";

/// The ask_followup_question tool.
#[derive(Debug, Default)]
pub struct AskFollowupQuestion;

impl Tool for AskFollowupQuestion {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "ask_followup_question",
            DESCRIPTION,
            &[
                ("question", "The question to ask the user.", true),
                (
                    "options",
                    "Optional: a JSON array of 2-5 answer choices.",
                    false,
                ),
            ],
        )
        .with_partial()
        .read_only()
        .title("Ask the user")
        .without_pre_tool_use_hooks()]
    }

    fn describe(&self, call: &Call) -> String {
        format!(
            "[ask_followup_question for '{}']",
            call.params.string_or_empty("question")
        )
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let question = call.params.required("question")?;
        let options = parse_options(call.params.string("options").as_deref());
        let message = json!({"question": question, "options": options}).to_string();
        match ctx.ask("followup", &message) {
            Ok(reply) => {
                let answer = reply.text.unwrap_or_default();
                if !options.contains(&answer) {
                    ctx.say("user_feedback", &answer);
                }
                Ok(ToolContent::text(format!("<answer>\n{answer}\n</answer>")))
            }
            Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => {
                let preview: String = question.chars().take(100).collect();
                let more = if question.chars().count() > 100 {
                    "[...]"
                } else {
                    ""
                };
                ctx.say(
                    "info",
                    &format!("[YOLO MODE] Auto-responding to question: \"{preview}{more}\""),
                );
                Ok(ToolContent::text(no_user_text(&question)))
            }
            Err(e) => Err(e),
        }
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        let question = call.params.string_or_empty("question");
        let options = parse_options(call.params.string("options").as_deref());
        ctx.ask_partial(
            "followup",
            &json!({"question": question, "options": options}).to_string(),
        );
        Ok(())
    }
}

/// The answer the model gets when nobody can answer.
pub fn no_user_text(question: &str) -> String {
    format!(
        "[YOLO MODE: User input is not available in non-interactive mode. You must use available \
         tools (read_file, list_files, search_files, etc.) to gather the information you need \
         instead of asking the user. Proceed with using tools to find the answer to your question: \"{question}\"]"
    )
}

/// Options as Cline parses them: a JSON array of strings, or, for a malformed array that starts
/// with `["`, the text between the brackets split on `", "`.
pub fn parse_options(raw: Option<&str>) -> Vec<String> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Vec::new();
    };
    if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(raw) {
        return items
            .into_iter()
            .map(|item| match item {
                Value::String(s) => s,
                other => other.to_string(),
            })
            .collect();
    }
    match raw.strip_prefix("[\"") {
        Some(rest) => {
            let rest = rest.strip_suffix("\"]").unwrap_or(rest);
            rest.split("\", \"").map(str::to_string).collect()
        }
        None => Vec::new(),
    }
}

tool_api::submit_tool!(AskFollowupQuestion);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        "toolset:cline-legacy",
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_leniently() {
        assert_eq!(parse_options(Some(r#"["a","b"]"#)), vec!["a", "b"]);
        assert_eq!(
            parse_options(Some(r#"["a", "b with "quote"]"#)),
            vec!["a", "b with \"quote"]
        );
        assert_eq!(parse_options(Some("not a list")), Vec::<String>::new());
        assert_eq!(parse_options(None), Vec::<String>::new());
    }
}
