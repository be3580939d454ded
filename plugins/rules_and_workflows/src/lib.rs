//! Cline's rules and workflows, offered to MCP clients: no tool, only what `toolhost mcp`
//! serves besides tools. A client's resource picker lists the rules; its prompt picker lists
//! the workflows, and getting one gives the message Cline builds for a workflow's slash
//! command.
//!
//! Rules (Markdown, `.md`, `.markdown` or `.txt`), in Cline's search order: the workspace's
//! `AGENTS.md`, `.clinerules` (a file, or a directory's files and its `AGENTS.md`) and
//! `.cline/rules/`; then `~/.agents/AGENTS.md`, `~/.cline/rules/` and
//! `~/Documents/Cline/Rules/`. Workflows: the workspace's `.clinerules/workflows/`,
//! `~/Documents/Cline/Workflows/`, `~/.cline/workflows/` and the workspace's
//! `.cline/workflows/`; on a name clash the first one found wins. A file whose front matter
//! says `disabled: true` (or `enabled: false`) is left out, and a workspace file is offered
//! only when it really is inside the workspace and `.clineignore` does not block it.

mod found;

use serde_json::{json, Value};
use tool_api::sdk::prelude::*;

use found::{rules, workflows, Workflow};

/// The plugin's handler: it serves no tool, only the resources and prompts extensions.
#[derive(Debug, Default)]
pub struct RulesAndWorkflows;

impl Tool for RulesAndWorkflows {
    fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn execute(&self, call: &Call, _ctx: &Ctx<'_>) -> ToolResult {
        Err(ToolError::new(
            ToolErrorKind::UNAVAILABLE,
            format!(
                "rules_and_workflows serves no tool (asked for {})",
                call.name
            ),
        ))
    }

    fn extension(&self, method: &str, payload: &Value) -> Result<Value, ToolError> {
        let request: OfferRequest = serde_json::from_value(payload.clone())
            .map_err(|e| ToolError::new(ToolErrorKind::INVALID_PARAMS, e.to_string()))?;
        if let Some(answer) = instruction_files::answer_resources(method, &request, rules) {
            return answer;
        }
        match method {
            "prompts_list" => Ok(json!({
                "prompts": workflows(&request).iter().map(Workflow::listing).collect::<Vec<_>>()
            })),
            "prompts_get" => {
                let name = request.param("name").unwrap_or_default();
                let workflow = workflows(&request)
                    .into_iter()
                    .find(|w| w.file.name == name)
                    .ok_or_else(|| {
                        ToolError::new(
                            ToolErrorKind::INVALID_PARAMS,
                            format!("no workflow named '{name}'"),
                        )
                    })?;
                let input = request
                    .params
                    .get("arguments")
                    .and_then(|a| a["input"].as_str());
                workflow.prompt(&request, input.unwrap_or_default())
            }
            other => Err(ToolError::new(
                ToolErrorKind::UNAVAILABLE,
                format!("unknown handler extension '{other}'"),
            )),
        }
    }
}

tool_api::submit_tool!(RulesAndWorkflows);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::RESOURCES_CAPABILITY,
        tool_api::model::PROMPTS_CAPABILITY,
        "needs:resources",
        "needs:prompts",
        tool_api::model::access::FS_FULL,
    ]
);
