//! The `plan_mode_respond` tool: in PLAN MODE, presents the model's plan or answer to the user
//! and returns the user's reply.
//!
//! Mode switching: in Cline the user answers a plan by typing a reply or by toggling to ACT MODE
//! (the UI then answers the question with the marker `PLAN_MODE_TOGGLE_RESPONSE`), and in
//! non-interactive (yolo) mode the handler switches to ACT MODE itself. A plugin cannot change
//! the mode (the task context is read-only), so:
//! - an answer that is the marker means the user switched to ACT MODE: the model is told so
//!   ([`SWITCHED_TO_ACT`]); the host that offers the toggle is the one that switches the mode;
//! - with `yolo` set in ACT MODE the model is told to go ahead, as in Cline;
//! - nobody to answer in ACT MODE is treated the same way (Cline's yolo answer);
//! - nobody to answer in PLAN MODE is reported as unavailable ([`NO_USER_IN_PLAN`]): only the
//!   host could switch to ACT MODE. A host that wants Cline's yolo behaviour switches the task
//!   to ACT MODE itself before calling, so the call sees ACT MODE.

use serde_json::{json, Value};
use tool_api::model::Mode;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "PLAN MODE only: talk to the user about the plan. Use it to present a \
plan, answer a question, or ask for a decision once you have gathered what you need with the \
read-only tools; the user's reply comes back as the result. Put your whole message in \
`response`. `options` may offer 2 to 5 short replies the user can pick, as a JSON array of \
strings. If you realise you must look at more files before the plan is ready, set \
`needs_more_exploration` to true and carry on exploring instead of waiting for an answer.";

/// The answer to `needs_more_exploration`.
pub const MORE_EXPLORATION: &str = "[You have indicated that you need more exploration. Proceed with calling tools to continue the planning process.]";

/// The answer in ACT MODE when nobody reviews plans (Cline's yolo mode).
pub const GO_AHEAD: &str = "[Go ahead and execute.]";

/// The result after the user switched to ACT MODE.
pub const SWITCHED_TO_ACT: &str =
    "[The user has switched to ACT MODE, so you may now proceed with the task.]";

/// The answer Cline's UI gives when the user answers by toggling to ACT MODE.
const TOGGLE_MARKER: &str = "PLAN_MODE_TOGGLE_RESPONSE";

/// The plan_mode_respond tool.
#[derive(Debug, Default)]
pub struct PlanModeRespond;

impl Tool for PlanModeRespond {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "plan_mode_respond",
            DESCRIPTION,
            &[
                ("response", "The message for the user.", true),
                (
                    "options",
                    "Optional: a JSON array of 2-5 replies the user can choose from.",
                    false,
                ),
                (
                    "needs_more_exploration",
                    "Optional: true when you still need to explore before the plan is ready.",
                    false,
                ),
                (
                    "task_progress",
                    "Optional: the task's checklist in markdown (\"- [ ]\" / \"- [x]\" lines).",
                    false,
                ),
            ],
        )
        .with_partial()
        .read_only()
        .title("Respond with a plan")
        .without_pre_tool_use_hooks()]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let response = call.params.required("response")?;
        // Cline compares the raw string, so only the exact `true` counts here.
        if call.params.string("needs_more_exploration").as_deref() == Some("true") {
            return Ok(ToolContent::text(MORE_EXPLORATION));
        }
        let act = call.task.mode == Mode::Act;
        if call.task.yolo && act {
            return Ok(ToolContent::text(GO_AHEAD));
        }
        let options = parse_partial_array(&call.params.string_or_empty("options"));
        let message = json!({"response": response, "options": options}).to_string();
        let reply = match ctx.ask("plan_mode_respond", &message) {
            Ok(reply) => reply,
            Err(e) if e.kind == ToolErrorKind::UNAVAILABLE && act => {
                return Ok(ToolContent::text(GO_AHEAD));
            }
            Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => {
                return Err(ToolError::new(ToolErrorKind::UNAVAILABLE, NO_USER_IN_PLAN));
            }
            Err(e) => return Err(e),
        };
        let text = reply.text.unwrap_or_default();
        if text == TOGGLE_MARKER {
            return Ok(ToolContent::text(SWITCHED_TO_ACT));
        }
        // Picking one of the offered replies is an answer; anything else typed is feedback.
        if !text.is_empty() && !options.contains(&text) {
            ctx.say("user_feedback", &text);
        }
        Ok(ToolContent::text(user_message(&text)))
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        let options = parse_partial_array(&call.params.string_or_empty("options"));
        let message = json!({
            "response": call.params.string_or_empty("response"),
            "options": options,
        });
        ctx.ask_partial("plan_mode_respond", &message.to_string());
        Ok(())
    }
}

/// What the model reads when nobody can answer in PLAN MODE.
pub const NO_USER_IN_PLAN: &str = "No user is available to respond to the plan, and this host \
cannot switch from PLAN MODE to ACT MODE by itself. Continue with the tools available in PLAN \
MODE, or present the plan as your final result with attempt_completion.";

/// The result carrying the user's reply.
fn user_message(text: &str) -> String {
    format!("<user_message>\n{text}\n</user_message>")
}

/// Cline's `parsePartialArrayString`, coerced to a list of strings: valid JSON is used as it is
/// (an array's strings as they are, other items as JSON text; a non-array gives no options);
/// otherwise a text starting with `["` is split on `", "` (the streaming form).
pub fn parse_partial_array(raw: &str) -> Vec<String> {
    if let Ok(value) = serde_json::from_str::<Value>(raw) {
        return match value {
            Value::Array(items) => items
                .into_iter()
                .map(|item| match item {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect(),
            _ => Vec::new(),
        };
    }
    let Some(rest) = raw.trim().strip_prefix("[\"") else {
        return Vec::new();
    };
    let rest = rest.strip_suffix("\"]").unwrap_or(rest);
    rest.split("\", \"")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

tool_api::submit_tool!(PlanModeRespond);
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
    fn partial_arrays_follow_cline() {
        assert_eq!(
            parse_partial_array(r#"["a.com", "b.org"]"#),
            ["a.com", "b.org"]
        );
        assert_eq!(parse_partial_array(r#"["a.com", "b.o"#), ["a.com", "b.o"]);
        assert_eq!(
            parse_partial_array(r#"["a.com","b.org""#),
            [r#"a.com","b.org""#]
        );
        assert_eq!(parse_partial_array("a.com, b.org"), Vec::<String>::new());
        assert_eq!(parse_partial_array(r#"{"a":1}"#), Vec::<String>::new());
        assert_eq!(parse_partial_array("[1, true]"), ["1", "true"]);
    }
}
