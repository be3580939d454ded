//! The team tools of Cline's SDK tool set (`cline-sdk`: act, plan, search and default): a lead
//! and the teammates it spawns share a task board, async runs, a mailbox, a mission log and
//! outcomes built from reviewed fragments. One handler serves the 18 `team_*` names, because
//! they act on one shared state.
//!
//! - The caller through the host is the lead; a teammate's calls of team tools are made in its
//!   run, as the teammate ([`runs`]). A sub-agent's call through the host (spawn_agent's) is
//!   refused: the team tools are the lead's and its teammates'.
//! - A team is `team.name` from the settings, else the task's own. Its state lives in a file
//!   of its own directory ([`store`]), so that it survives the host, as Cline's does.
//! - Teammates are sub-agents: spawning them and running them needs `subagents.enabled`, and
//!   they talk to the `[llm]` endpoint. Their calls of the host's tools go through the host's
//!   full dispatch as a subagent's, which asks nobody.
//! - Inputs are checked as Cline's SDK checks them ([`input`]), and answers are its JSON.

mod board;
mod input;
mod lease;
mod runs;
mod session;
mod specs;
mod store;
mod teammate;
mod tools;

use tool_api::sdk::prelude::*;

/// The team tools.
#[derive(Debug, Default)]
pub struct Team;

/// The refusal of a call from a sub-agent.
pub const NOT_FOR_SUBAGENTS: &str =
    "The team tools are the lead's and its teammates'; a sub-agent has none.";

impl Tool for Team {
    fn specs(&self) -> Vec<ToolSpec> {
        specs::all()
            .iter()
            .map(|spec| {
                // Every one of them may run a teammate (a teammate's own calls of team tools are
                // made within the lead's call), and a teammate's calls of the host's tools are
                // a subagent's: they ask nobody.
                let mut tool = ToolSpec::simple(&spec.name, &spec.description, &[])
                    .approval(ApprovalCategory::Read)
                    .checks_own_params()
                    .calls_as_subagent();
                if ["team_run_task", "team_await_runs", specs::SPAWN].contains(&spec.name.as_str())
                {
                    tool = tool.open_world();
                }
                if spec.name == "team_run_task" || spec.name == "team_await_runs" {
                    tool = tool.runs_long();
                }
                tool.input_schema = spec.input_schema.clone();
                tool
            })
            .collect()
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        if call.task.is_subagent {
            return Err(ToolError::new(ToolErrorKind::FAILED, NOT_FOR_SUBAGENTS));
        }
        let store = store::Store::of_call(ctx, &call.task.task_id)?;
        let session = session::Session {
            ctx,
            store: &store,
            requester: board::LEAD,
            dispatch: tools::call,
        };
        let params = serde_json::Value::Object(call.params.as_map().clone());
        session
            .call(&call.name, &params)
            .map(ToolContent::text)
            .map_err(|message| ToolError::new(ToolErrorKind::FAILED, message))
    }
}

tool_api::submit_tool!(Team);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        tool_api::model::access::NETWORK_ANY,
        "needs:tools_list",
        "toolset:cline-sdk@act",
        "toolset:cline-sdk@plan",
        "toolset:cline-sdk@search",
        "toolset:cline-sdk@default",
    ]
);
