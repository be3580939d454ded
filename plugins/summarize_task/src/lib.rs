//! The `summarize_task` tool (Cline's automatic context compaction): the model hands in a
//! detailed summary of the conversation when the context window is nearly full; the result is
//! the prompt the conversation continues from, with the files the summary lists as required
//! attached fresh.
//!
//! No LLM is called here: the model itself writes the summary into `context`. What Cline does
//! besides the result belongs to the host (the agent loop): drop the conversation before this
//! call (keeping the task's first message) once the result is in, and run PreCompact hooks
//! before it. Nothing here keeps task state.

mod required_files;

use required_files::{attachment, listed_paths, load};

use serde_json::json;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "Hand in a detailed summary of the conversation when asked to because \
the context window is nearly full; the conversation then continues from your summary alone, so \
leave nothing out that the work needs. Cover: what the user asked and why; key technical \
concepts; the files and code involved (with the important snippets); problems solved; pending \
tasks; what you were doing right before this; the next step, quoting the latest messages. List \
the files to reload under a section headed `9. Required Files:`, one `- path` per line; up to 8 \
of them are read and attached for you.";

/// The summarize_task tool.
#[derive(Debug, Default)]
pub struct SummarizeTask;

impl Tool for SummarizeTask {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "summarize_task",
            DESCRIPTION,
            &[
                ("context", "The detailed summary of the conversation.", true),
                (
                    "task_progress",
                    "Optional: the task's checklist in markdown (\"- [ ]\" / \"- [x]\" lines).",
                    false,
                ),
            ],
        )
        .with_partial()
        .read_only()
        .title("Summarize the task")
        .without_pre_tool_use_hooks()]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let context = call.params.required("context")?;
        ctx.say("tool", &summary_message(&context));
        let files = load(&listed_paths(&context), ctx);
        Ok(ToolContent::text(
            continuation_prompt(&context) + &attachment(&files),
        ))
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        ctx.say_partial(
            "tool",
            &summary_message(&call.params.string_or_empty("context")),
        );
        Ok(())
    }
}

/// The UI message showing the summary (Cline's `ClineSayTool` of kind `summarizeTask`).
fn summary_message(context: &str) -> String {
    json!({"tool": "summarizeTask", "content": context}).to_string()
}

/// The prompt the conversation continues from (Cline's `continuationPrompt`).
pub fn continuation_prompt(summary: &str) -> String {
    format!(
        "\nThis session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n{summary}.\n\nPlease continue the conversation from where we left it off without asking the user any further questions. Continue with the last task that you were asked to work on. Pay special attention to the most recent user message when responding rather than the initial task message, if applicable.\nIf the most recent user's message starts with \"/newtask\", \"/smol\", \"/compact\", \"/newrule\", or \"/reportbug\", you should indicate to the user that they will need to run this command again.\n"
    )
}

tool_api::submit_tool!(SummarizeTask);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        "toolset:cline-legacy",
    ]
);
