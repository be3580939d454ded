//! The `spawn_agent` tool of Cline's SDK tool set (`cline-sdk`; every preset but yolo): a
//! sub-agent with the system prompt the model wrote, working on one task until it answers
//! without calling a tool.
//!
//! Like use_subagents, it runs only when `subagents.enabled` is true, and its sub-agent talks
//! to the model endpoint of the settings (`[llm]`, through [`agent_support`]). The sub-agent
//! is offered every tool the host serves, as the model sees them (the host's `tools.list`),
//! but spawn_agent itself: it starts no sub-agent of its own. Its calls go through the host's
//! full dispatch as a subagent's: `.clineignore`, the command policy, the workspace boundary
//! and the sandbox apply, what is not auto-approved is refused, and no question reaches the
//! user, since a subagent never asks. The answer is Cline's `SpawnAgentOutput` as JSON: the
//! last text, the iterations, why it finished, and the tokens.

use agent_support::agent_loop::{self, Agent, Outcome, RunError};
use agent_support::conversation::{parse_arguments, Message, ToolDef, ToolRequest};
use agent_support::llm::{max_turns, subagents_enabled, LlmSettings};
use serde_json::{json, Value};
use tool_api::sdk::operation::required_string_param;
use tool_api::sdk::prelude::*;

/// The tool's name.
pub const NAME: &str = "spawn_agent";

const DESCRIPTION: &str = "Spawn a sub-agent with a custom system prompt for specialized tasks. Use when delegating work that benefits from focused expertise.";

/// The tool's input schema, as Cline's SDK shows it to the model.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "systemPrompt": {"type": "string", "description": "System prompt defining the sub-agent's behavior"},
            "task": {"type": "string", "description": "Task for the sub-agent to complete"}
        },
        "required": ["systemPrompt", "task"],
        "additionalProperties": false
    })
}

/// The answer the model reads: Cline's `SpawnAgentOutput` as compact JSON.
pub fn output_json(outcome: &Outcome) -> String {
    json!({
        "text": outcome.text,
        "iterations": outcome.iterations,
        "finishReason": outcome.finish.name(),
        "usage": {"inputTokens": outcome.usage.input, "outputTokens": outcome.usage.output},
    })
    .to_string()
}

/// The spawn_agent tool.
#[derive(Debug, Default)]
pub struct SpawnAgent;

impl Tool for SpawnAgent {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut spec = ToolSpec::simple(NAME, DESCRIPTION, &[])
            .approval(ApprovalCategory::Read)
            .title("Spawn a sub-agent")
            .open_world()
            .runs_long()
            .calls_as_subagent()
            .checks_own_params();
        spec.input_schema = input_schema();
        vec![spec]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let map = call.params.as_map();
        let system = required_string_param(map, "systemPrompt")?;
        let task = required_string_param(map, "task")?;
        if !subagents_enabled(ctx)? {
            return Err(ToolError::new(ToolErrorKind::FAILED, DISABLED));
        }
        if call.task.is_subagent {
            return Err(ToolError::new(ToolErrorKind::FAILED, NESTED));
        }
        let llm = LlmSettings::read(ctx, NAME)?;
        let tools = served_tools(ctx, &llm)?;
        let outcome = run(ctx, &llm, system.trim(), &task, &tools)?;
        Ok(ToolContent::text(output_json(&outcome)))
    }
}

/// The error while subagents are disabled (use_subagents' gate, `subagents.enabled`).
pub const DISABLED: &str = "Sub-agents are disabled. Set subagents.enabled = true in the \
settings to use spawn_agent.";

/// The error inside a sub-agent's run, where the tool is not offered either.
pub const NESTED: &str = "spawn_agent cannot be used inside a sub-agent's run.";

/// The tools the host serves, as the model sees them, but this one: a sub-agent starts no
/// sub-agent of its own.
fn served_tools(ctx: &Ctx<'_>, llm: &LlmSettings) -> Result<Vec<ToolDef>, ToolError> {
    let mut tools = agent_support::host_tools(ctx, llm)?;
    tools.retain(|tool| tool.name != NAME);
    Ok(tools)
}

/// The sub-agent's run, its tool calls made through the host.
fn run(
    ctx: &Ctx<'_>,
    llm: &LlmSettings,
    system: &str,
    task: &str,
    tools: &[ToolDef],
) -> Result<Outcome, ToolError> {
    let api_key = llm.api_key()?;
    let agent = Agent {
        system,
        tools,
        max_turns: max_turns(ctx)?,
    };
    let mut messages = vec![Message::User(vec![task.to_string()])];
    agent_loop::run(
        ctx,
        llm,
        api_key.as_deref(),
        agent,
        &mut messages,
        &|request| answer(ctx, tools, request),
        &|| false,
    )
    .map_err(|e| match e {
        RunError::Cancelled | RunError::Stopped => cancelled(),
        RunError::Request(message) => ToolError::new(
            ToolErrorKind::FAILED,
            format!("The sub-agent's model request failed: {message}"),
        ),
    })
}

/// What the model reads as the result of one of its tool calls.
fn answer(ctx: &Ctx<'_>, tools: &[ToolDef], request: &ToolRequest) -> String {
    if !tools.iter().any(|tool| tool.name == request.name) {
        return texts::tool_error(&format!("Tool '{}' is not available.", request.name));
    }
    let arguments = match parse_arguments(&request.raw_arguments) {
        Ok(arguments) => arguments,
        Err(message) => return texts::tool_error(&message),
    };
    agent_support::call_through_host(ctx, &request.name, arguments)
}

fn cancelled() -> ToolError {
    ToolError::new(
        ToolErrorKind::CANCELLED,
        "The sub-agent's run was cancelled.",
    )
}

tool_api::submit_tool!(SpawnAgent);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_WORKSPACE_READ,
        tool_api::model::access::NETWORK_ANY,
        "needs:tools_list",
        "toolset:cline-sdk@act",
        "toolset:cline-sdk@plan",
        "toolset:cline-sdk@search",
        "toolset:cline-sdk@minimal",
        "toolset:cline-sdk@default",
    ]
);

#[cfg(test)]
mod tests {
    use super::*;
    use agent_support::agent_loop::Finish;
    use agent_support::conversation::Usage;

    #[test]
    fn the_output_has_cline_s_keys() {
        let outcome = Outcome {
            text: "found it".to_string(),
            iterations: 2,
            finish: Finish::Completed,
            usage: Usage {
                input: 30,
                output: 7,
                ..Usage::default()
            },
        };
        assert_eq!(
            output_json(&outcome),
            r#"{"text":"found it","iterations":2,"finishReason":"completed","usage":{"inputTokens":30,"outputTokens":7}}"#
        );
    }

    #[test]
    fn the_spec_is_cline_s() {
        let spec = &SpawnAgent.specs()[0];
        assert_eq!(spec.name, NAME);
        assert_eq!(
            spec.input_schema["required"],
            json!(["systemPrompt", "task"])
        );
    }
}
