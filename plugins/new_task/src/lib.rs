//! The `new_task` tool: proposes to start a fresh task that carries a summary of this one.
//!
//! The user sees the proposed context and either starts the new task (the host creates it from
//! the context; the tool only reports it) or answers with feedback, which goes back to the
//! model. Differences from Cline, whose question has only a "create" button and a text box:
//! - a plain "no" (a No answer without text) is a denial ("The user denied this operation.");
//! - with nobody to answer, no task is created and the model is told so (Cline hides the tool
//!   in non-interactive mode, so it has no behaviour to copy).

use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "Offer the user to continue in a fresh task that starts from a summary \
of this one, for example when the conversation has grown long or a part of the work is done. Put \
in `context` everything the new task needs: what was asked, what has been done, the files and \
decisions that matter, and what is left. The user either starts the new task or replies with \
feedback.";

/// The result when the user started the new task.
pub const CREATED: &str = "The user has created a new task with the provided context.";

/// What the model reads when nobody can answer.
pub const NO_USER: &str = "No user is available to start a new task in this non-interactive \
session, so no new task was created. Continue with the current task.";

/// The new_task tool.
#[derive(Debug, Default)]
pub struct NewTask;

impl Tool for NewTask {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "new_task",
            DESCRIPTION,
            &[(
                "context",
                "What the new task needs to know to carry on the work.",
                true,
            )],
        )
        .with_partial()
        .read_only()
        .title("Start a new task")
        .without_pre_tool_use_hooks()]
    }

    fn describe(&self, call: &Call) -> String {
        format!("[{} for creating a new task]", call.name)
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let context = call.params.required("context")?;
        match ctx.propose("new_task", &context)? {
            Proposal::Feedback(text) => Ok(ToolContent::text(feedback(&text))),
            Proposal::Accepted => Ok(ToolContent::text(CREATED)),
            Proposal::NobodyToAsk => Err(ToolError::new(ToolErrorKind::UNAVAILABLE, NO_USER)),
        }
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        ctx.ask_partial("new_task", &call.params.string_or_empty("context"));
        Ok(())
    }
}

/// The result when the user answered with feedback instead.
pub fn feedback(text: &str) -> String {
    format!("The user provided feedback instead of creating a new task:\n<feedback>\n{text}\n</feedback>")
}

tool_api::submit_tool!(NewTask);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        "toolset:cline-legacy",
    ]
);
