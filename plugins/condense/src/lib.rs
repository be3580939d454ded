//! The `condense` tool (Cline's `/smol` and `/compact`): the model proposes a summary of the
//! conversation so far; once the user accepts it, the history before it can be dropped.
//!
//! No LLM is called here: the model itself writes the summary into `context`. Dropping the
//! history is the host's (the agent loop's) part: on the accepted result it should replace the
//! conversation before this call with the summary, keeping the task's first message, as Cline
//! does with its truncation range.
//!
//! Differences from Cline:
//! - `context` is not declared required in the schema, because Cline's missing-parameter answer
//!   here is its own plain text (`Missing required parameter: context`), which the host's
//!   required check would replace; for the same reason that answer is a result, not an error,
//!   and is not counted as a mistake (a successful result resets the count).
//! - a plain "no" (a No answer without text) is a denial; Cline's question has no such button;
//! - with nobody to answer, nothing is condensed and the model is told so.

use tool_api::sdk::prelude::*;

const DESCRIPTION: &str =
    "Propose to shrink the conversation to a summary when it has grown long. \
Required: `context`, a thorough summary of the conversation so far: what the user asked, what \
has been done and decided, the files and code that matter, and what is still open. The user \
reviews it; once accepted, earlier messages are dropped and only the summary remains.";

/// Cline's plain-text answer to a missing `context`.
pub const MISSING_CONTEXT: &str = "Missing required parameter: context";

/// The result once the user accepted the summary (Cline's `formatResponse.condense()`).
pub const ACCEPTED: &str = "The user has accepted the condensed conversation summary you generated. This summary covers important details of the historical conversation with the user which has been truncated.\n<explicit_instructions type=\"condense_response\">It's crucial that you respond by ONLY asking the user what you should work on next. You should NOT take any initiative or make any assumptions about continuing with work. For example you should NOT suggest file changes or attempt to read any files.\nWhen asking the user what you should work on next, you can reference information in the summary which was just generated. However, you should NOT reference information outside of what's contained in the summary for this response. Keep this response CONCISE.</explicit_instructions>";

/// What the model reads when nobody can answer.
pub const NO_USER: &str = "No user is available to accept the summary in this non-interactive \
session, so the conversation was not condensed. Continue with the task.";

/// The condense tool.
#[derive(Debug, Default)]
pub struct Condense;

impl Tool for Condense {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "condense",
            DESCRIPTION,
            &[(
                "context",
                "Required: the summary of the conversation so far.",
                false,
            )],
        )
        .with_partial()
        .read_only()
        .title("Condense the conversation")
        .without_pre_tool_use_hooks()]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let Some(context) = call.params.string("context").filter(|c| !c.is_empty()) else {
            return Ok(ToolContent::text(MISSING_CONTEXT));
        };
        match ctx.propose("condense", &context)? {
            Proposal::Feedback(text) => Ok(ToolContent::text(feedback(&text))),
            Proposal::Accepted => Ok(ToolContent::text(ACCEPTED)),
            Proposal::NobodyToAsk => Err(ToolError::new(ToolErrorKind::UNAVAILABLE, NO_USER)),
        }
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        ctx.ask_partial("condense", &call.params.string_or_empty("context"));
        Ok(())
    }
}

/// The result when the user answered with feedback on the summary.
pub fn feedback(text: &str) -> String {
    format!(
        "The user provided feedback on the condensed conversation summary:\n<feedback>\n{text}\n</feedback>"
    )
}

tool_api::submit_tool!(Condense);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        "toolset:cline-legacy",
    ]
);
