//! The `use_subagents` tool: up to five research subagents run in parallel, each a real agent
//! loop against the LLM endpoint of the settings (`[llm]`), calling read-only tools through the
//! host's full dispatch (`.clineignore`, command permissions, the workspace boundary and
//! approvals still apply).
//!
//! - [`settings`]: `[llm]` (`base_url`, `model`, `protocol = "openai" | "anthropic"`,
//!   `api_key_env`, ...) and `[subagents]` (`enabled`, `max_turns`).
//! - [`conversation`]: the protocol-neutral conversation and its two wire formats (native tool
//!   calling, non-streaming requests).
//! - [`endpoint`]: one request with Cline's retry rule, on a runtime of its own.
//! - [`runner`]: one subagent's loop; [`board`]: the status of all, the `subagent` UI event and
//!   the summary the main agent reads; [`tools`]: the tools offered to a subagent.
//!
//! Not built: named subagents from agent config files (`use_subagent_<name>`).

pub mod board;
pub mod conversation;
pub mod endpoint;
pub mod prompt;
pub mod runner;
pub mod settings;
pub mod tools;

use tool_api::sdk::prelude::*;

use crate::board::{summary, usage_event, Board};
use crate::runner::Shared;
use crate::settings::LlmSettings;

const DESCRIPTION: &str = "Start up to five research subagents that work in parallel, each on \
one prompt, and get their findings back in one result. A subagent reads files, lists \
directories, searches and runs read-only commands in the workspace on its own, then reports what \
it found with the relevant file paths. Use it to explore several independent questions about \
the codebase at once; give each prompt everything the subagent needs, since it sees nothing of \
this conversation. Subagents never change files.";

/// The most prompts one call takes.
pub const MAX_PROMPTS: usize = 5;

/// The error while subagents are disabled (Cline's text; `subagents.enabled` turns them on).
pub const DISABLED: &str =
    "Subagents are disabled. Enable them in Settings > Features to use this tool.";

/// The error inside a subagent run, where the tool is not offered.
pub const NESTED: &str = "use_subagents cannot be used inside a subagent run.";

/// The use_subagents tool.
#[derive(Debug, Default)]
pub struct UseSubagents;

impl Tool for UseSubagents {
    fn specs(&self) -> Vec<ToolSpec> {
        let params: Vec<(String, String, bool)> = (1..=MAX_PROMPTS)
            .map(|n| {
                let about = if n == 1 {
                    "The task of the first subagent: a self-contained research question."
                        .to_string()
                } else {
                    format!("Optional: the task of subagent {n}.")
                };
                (format!("prompt_{n}"), about, n == 1)
            })
            .collect();
        let params: Vec<(&str, &str, bool)> = params
            .iter()
            .map(|(name, about, required)| (name.as_str(), about.as_str(), *required))
            .collect();
        vec![ToolSpec::simple("use_subagents", DESCRIPTION, &params)
            .approval(ApprovalCategory::Read)
            .read_only()]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        if !settings::enabled(ctx)? {
            return Err(ToolError::new(ToolErrorKind::FAILED, DISABLED));
        }
        if call.task.is_subagent {
            return Err(ToolError::new(ToolErrorKind::FAILED, NESTED));
        }
        let prompts = prompts(&call.params)?;
        let llm = LlmSettings::read(ctx)?;
        let api_key = llm.api_key()?;
        let max_turns = settings::max_turns(ctx)?;
        let board = Board::new(&prompts, llm.context_window, |json| {
            ctx.say_partial("subagent", json);
        });
        let tools = tools::definitions();
        let environment = prompt::environment_details(&call.task);
        let shared = Shared {
            ctx,
            llm: &llm,
            api_key: api_key.as_deref(),
            system: prompt::SYSTEM_PROMPT,
            tools: &tools,
            environment: &environment,
            max_turns,
            board: &board,
        };
        // One thread per subagent, all borrowing this call's services: the scope ends only
        // when every run has ended, so nothing outlives the call.
        std::thread::scope(|scope| {
            for (index, prompt) in prompts.iter().enumerate() {
                let shared = &shared;
                scope.spawn(move || runner::run(shared, index, prompt));
            }
        });
        let (items, totals) = board.snapshot();
        ctx.say("subagent", &board.aggregate(&items).to_string());
        ctx.say("subagent_usage", &usage_event(&totals).to_string());
        Ok(ToolContent::text(summary(&items, llm.context_window)))
    }
}

/// The non-blank prompts in order (gaps allowed); the missing-parameter error for `prompt_1`
/// when there is none.
pub fn prompts(params: &Params) -> Result<Vec<String>, ToolError> {
    let prompts: Vec<String> = (1..=MAX_PROMPTS)
        .filter_map(|n| params.string(&format!("prompt_{n}")))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    if prompts.is_empty() {
        return Err(tool_api::sdk::missing("prompt_1"));
    }
    Ok(prompts)
}

tool_api::submit_tool!(UseSubagents);
tool_api::export_plugin!();

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn prompts_are_trimmed_and_gaps_allowed() {
        let params = Params::from_json(
            &json!({"prompt_1": " a ", "prompt_2": "  ", "prompt_4": "b"}).to_string(),
        )
        .unwrap();
        assert_eq!(
            prompts(&params).unwrap(),
            vec!["a".to_string(), "b".to_string()]
        );
        let none = Params::from_json(&json!({"prompt_1": " "}).to_string()).unwrap();
        let error = prompts(&none).unwrap_err();
        assert_eq!(
            (error.kind, error.message.to_string()),
            (
                ToolErrorKind::INVALID_PARAMS,
                texts::missing_param_error("prompt_1")
            )
        );
    }

    #[test]
    fn the_spec_asks_for_read_approval() {
        let spec = &UseSubagents.specs()[0];
        assert_eq!(spec.approval, Some(ApprovalCategory::Read));
        assert_eq!(spec.required_params(), vec!["prompt_1"]);
    }
}
