//! The `ask_question` tool of Cline's SDK tool set (`cline-sdk`, act and plan presets): one
//! question for the user with 2 to 5 options; the answer is the option chosen (by its number
//! or its text) or what the user typed instead. With nobody to ask, the first option, as
//! Cline's command line answers when it has no terminal.

use serde_json::{json, Value};
use tool_api::sdk::operation::invalid_param as invalid;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "Ask user a question for clarifying or gathering information needed to complete the task. For example, ask the user clarifying questions about a key implementation decision. You should only ask one question. Provide an array of 2-5 options for the user to choose from. Never include an option to toggle to Act mode.";

/// The tool's input schema, as Cline's SDK shows it to the model.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "question": {"type": "string", "minLength": 1, "description": "The single question to ask the user. E.g. \"How can I help you?\""},
            "options": {
                "minItems": 2,
                "maxItems": 5,
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "description": "Array of 2-5 user-selectable answer options for the single question"
            }
        },
        "required": ["question", "options"],
        "additionalProperties": false
    })
}

/// The question and its options, checked as Cline's schema checks them.
pub fn question(params: &Params) -> Result<(String, Vec<String>), ToolError> {
    let map = params.as_map();
    let question = map
        .get("question")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if question.is_empty() {
        return Err(invalid(
            "Too small: expected string to have >=1 characters",
            "question",
        ));
    }
    let options: Vec<String> = match map.get("options") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|o| o.as_str().filter(|o| !o.is_empty()).map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                invalid(
                    "Too small: expected string to have >=1 characters",
                    "options",
                )
            })?,
        _ => {
            return Err(invalid(
                "Invalid input: expected array, received undefined",
                "options",
            ))
        }
    };
    if options.len() < 2 {
        return Err(invalid(
            "Too small: expected array to have >=2 items",
            "options",
        ));
    }
    if options.len() > 5 {
        return Err(invalid(
            "Too big: expected array to have <=5 items",
            "options",
        ));
    }
    Ok((question.to_string(), options))
}

/// The answer a reply gives: an option's number picks it, other text is the answer, nothing
/// picks the first option.
pub fn answer(reply: &str, options: &[String]) -> String {
    let reply = reply.trim();
    if reply.is_empty() {
        return options[0].clone();
    }
    match reply.parse::<usize>() {
        Ok(n) if (1..=options.len()).contains(&n) => options[n - 1].clone(),
        _ => reply.to_string(),
    }
}

/// The ask_question tool.
#[derive(Debug, Default)]
pub struct AskQuestion;

impl Tool for AskQuestion {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut spec = ToolSpec::simple("ask_question", DESCRIPTION, &[])
            .read_only()
            .title("Ask the user")
            .without_pre_tool_use_hooks()
            .checks_own_params();
        spec.input_schema = input_schema();
        vec![spec]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let (question, options) = question(&call.params)?;
        let message = json!({"question": question, "options": options}).to_string();
        match ctx.ask("followup", &message) {
            Ok(reply) => Ok(ToolContent::text(answer(
                reply.text.as_deref().unwrap_or_default(),
                &options,
            ))),
            Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => {
                Ok(ToolContent::text(options[0].clone()))
            }
            Err(e) => Err(e),
        }
    }
}

tool_api::submit_tool!(AskQuestion);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        "toolset:cline-sdk@act",
        "toolset:cline-sdk@plan",
        "toolset:cline-sdk@default",
    ]
);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_number_picks_an_option_and_nothing_the_first() {
        let options = vec!["Yes".to_string(), "No".to_string()];
        assert_eq!(answer("2", &options), "No");
        assert_eq!(answer("", &options), "Yes");
        assert_eq!(answer(" maybe later ", &options), "maybe later");
        assert_eq!(answer("7", &options), "7");
        let params = |v: Value| Params::from_map(v.as_object().unwrap().clone());
        assert!(question(&params(json!({"question": "q", "options": ["a"]}))).is_err());
        assert!(question(&params(json!({"question": "q", "options": ["a", "b"]}))).is_ok());
    }
}
