//! The `attempt_completion` tool: presents the result of the task, optionally with a command
//! that demonstrates it, and passes on the user's feedback.

use serde_json::json;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "Present the result of your work to the user once the task is done and \
you have confirmed that every tool use before succeeded. Describe the final result in `result` \
without ending on a question or an offer of more help. `command` may give a command that shows \
the result (for example opening a page); do not use it to print text.";

/// The first line of every completion result. (Cline's handler writes its own
/// `[attempt_completion] Result: Done`; here the agent loop adds the description prefix to every
/// result, so the handler's text is the part after it.)
pub const DONE: &str = "Done";

/// The attempt_completion tool.
#[derive(Debug, Default)]
pub struct AttemptCompletion;

impl Tool for AttemptCompletion {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "attempt_completion",
            DESCRIPTION,
            &[
                (
                    "result",
                    "The result of the task: final, not a question.",
                    true,
                ),
                (
                    "command",
                    "Optional: a command that demonstrates the result.",
                    false,
                ),
            ],
        )
        .with_partial()
        .read_only()
        .title("Complete the task")
        .without_pre_tool_use_hooks()
        .without_post_tool_use_hooks()
        .param_alias("response", "result")]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let result = call.params.required("result")?;
        ctx.say("completion_result", &result);
        let mut blocks = vec![ContentBlock::Text {
            text: DONE.to_string(),
        }];
        if let Some(command) = call.params.string("command").filter(|c| !c.is_empty()) {
            let output = ctx.invoke_tool(
                "execute_command",
                &json!({"command": command, "requires_approval": "false"}),
            );
            match output {
                Ok(content) => blocks.extend(content.content),
                Err(e) if e.kind == ToolErrorKind::DENIED => return Err(e),
                Err(e) => blocks.push(ContentBlock::Text {
                    text: texts::tool_error(&e.message),
                }),
            }
        }
        // Cline asks with an empty text (its UI shows the result above); a frontend that
        // shows only the question gets the result with it.
        match ctx.ask("completion_result", &result) {
            Ok(reply) if reply.response != AskResponse::Yes => {
                let feedback = reply.text.unwrap_or_default();
                ctx.say("user_feedback", &feedback);
                let mut text = "The user has provided feedback on the results. Consider their input to continue the task, and then attempt completion again.".to_string();
                if !feedback.is_empty() {
                    text.push_str(&format!("\n<feedback>\n{feedback}\n</feedback>"));
                }
                blocks.push(ContentBlock::Text { text });
            }
            // Accepted, or nobody there to answer: the completion stands.
            Ok(_) => {}
            Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => {}
            Err(e) => return Err(e),
        }
        Ok(ToolContent::blocks(blocks))
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        ctx.say_partial("completion_result", &call.params.string_or_empty("result"));
        Ok(())
    }
}

tool_api::submit_tool!(AttemptCompletion);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        "toolset:cline-legacy",
    ]
);
