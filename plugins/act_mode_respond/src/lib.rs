//! The `act_mode_respond` tool: in ACT MODE, shows the user a short progress message without
//! waiting for an answer.
//!
//! Differences from Cline, both for lack of host state:
//! - Cline refuses a second act_mode_respond right after another (`[BLOCKED] …`, no mistake). That
//!   needs the name of the task's previous tool, which the task context does not carry; a host
//!   that adds it (e.g. `last_tool` in `TaskContext`) lets this tool apply the rule with Cline's
//!   text (spec §10.4).
//! - The host checks the required `response` before the tool runs, so a call that is both in
//!   PLAN MODE and without `response` gets the missing-parameter error, where Cline reports the
//!   mode first.
//!
//! `task_progress` is passed on to the `focus_chain` tool when one is loaded, as Cline updates
//! its focus chain from this tool.

use serde_json::json;
use tool_api::model::Mode;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "ACT MODE only: show the user a short progress note (what you found, \
what you are about to do) and carry on at once; the user does not answer. Use it sparingly, \
between real steps: the next call must be a different tool that does actual work, never \
act_mode_respond again.";

/// The result after the message was shown.
pub const DISPLAYED: &str = "[Message displayed. Now proceed with your next tool call - it must be a different tool (read_file, replace_in_file, execute_command, etc.), not act_mode_respond again.]";

/// The act_mode_respond tool.
#[derive(Debug, Default)]
pub struct ActModeRespond;

impl Tool for ActModeRespond {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "act_mode_respond",
            DESCRIPTION,
            &[
                ("response", "The progress note for the user.", true),
                (
                    "task_progress",
                    "Optional: the task's checklist in markdown (\"- [ ]\" / \"- [x]\" lines).",
                    false,
                ),
            ],
        )
        .with_partial()
        .read_only()
        .title("Report progress")
        .without_pre_tool_use_hooks()]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        if call.task.mode != Mode::Act {
            return Err(ToolError::new(
                ToolErrorKind::FAILED,
                wrong_mode(call.task.mode),
            ));
        }
        let response = call.params.required("response")?;
        ctx.say("text", &response);
        if let Some(progress) = call
            .params
            .string("task_progress")
            .filter(|p| !p.is_empty())
        {
            // The checklist is a side matter: a missing or failing focus_chain tool must not fail
            // the message, which has already been shown.
            if let Err(e) = ctx.invoke_tool("focus_chain", &json!({"task_progress": progress})) {
                ctx.log_debug(&format!("task_progress not recorded: {}", e.message));
            }
        }
        Ok(ToolContent::text(DISPLAYED))
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        ctx.say_partial("text", &call.params.string_or_empty("response"));
        Ok(())
    }
}

/// The error for a call outside ACT MODE.
pub fn wrong_mode(mode: Mode) -> String {
    let name = match mode {
        Mode::Plan => "PLAN",
        Mode::Act => "ACT",
    };
    format!(
        "The act_mode_respond tool is only available in ACT MODE. You are currently in {name} MODE. Please use the appropriate tool for your current mode."
    )
}

tool_api::submit_tool!(ActModeRespond);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        "toolset:cline-legacy",
    ]
);
