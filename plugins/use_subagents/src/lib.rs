//! The `use_subagents` tool: up to five research subagents run in parallel, each a real agent
//! loop against the LLM endpoint of the settings (`[llm]`), calling read-only tools through the
//! host's full dispatch (`.clineignore`, command permissions, the workspace boundary and
//! approvals still apply).
//!
//! - The model endpoint (`[llm]`), the conversation and one request are agent_support's,
//!   shared with spawn_agent, as are the gate (`subagents.enabled`) and the turn limit.
//! - [`runner`]: one subagent's loop; [`board`]: the status of all, the `subagent` UI event and
//!   the summary the main agent reads; [`tools`]: the tools offered to a subagent.
//! - [`agents`]: named subagents from agent config files, each offered as `use_subagent_<name>`
//!   (one subagent per call, with the agent's system prompt, tools and model). The files are
//!   read from `~/Documents/Cline/Agents/` or `$TOOLHOST_AGENTS_DIR` once, when the plugin is
//!   loaded at host start (the specs are built before settings can be read, so no setting can
//!   move the directory); they are not hot-reloaded. While any agent exists the generic
//!   `use_subagents` is not offered, though this handler still serves it.

pub mod agents;
pub mod board;
pub mod prompt;
pub mod runner;
pub mod tools;

use agent_support::conversation::ToolDef;
use agent_support::llm::LlmSettings;
use tool_api::sdk::prelude::*;

use crate::agents::NamedAgent;
use crate::board::{summary, usage_event, Board};
use crate::runner::Shared;

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

/// The generic tool's name.
pub const GENERIC: &str = "use_subagents";

/// The parameter of a named subagent tool.
pub const PROMPT: &str = "prompt";

/// The use_subagents tool and one `use_subagent_<name>` tool per configured agent.
#[derive(Debug, Default)]
pub struct UseSubagents {
    /// The configured agents (none: only the generic tool is offered).
    pub agents: Vec<NamedAgent>,
}

impl UseSubagents {
    /// The tool with the agents of the agent directory ([`agents::agents_dir`]), read now.
    pub fn from_agent_dir() -> Self {
        Self {
            agents: agents::agents_dir()
                .map(|dir| agents::load(&dir))
                .unwrap_or_default(),
        }
    }

    fn generic_spec() -> ToolSpec {
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
        ToolSpec::simple(GENERIC, DESCRIPTION, &params)
            .approval(ApprovalCategory::Read)
            .read_only()
            .title("Run subagents")
            .open_world()
            .runs_long()
            .without_pre_tool_use_hooks()
            .calls_as_subagent()
    }

    /// `prompt` is checked by [`Self::execute`] rather than listed as required, because a call
    /// with only `prompt_1` is accepted too (the host would refuse it otherwise).
    fn agent_spec(named: &NamedAgent) -> ToolSpec {
        let description = format!(
            "Use the \"{}\" subagent: {}",
            named.agent.name, named.agent.description
        );
        ToolSpec::simple(
            &named.tool_name,
            &description,
            &[(
                PROMPT,
                "Required: the subagent's task, self-contained (it sees nothing of this conversation).",
                false,
            )],
        )
        .approval(ApprovalCategory::Read)
        .read_only()
        .title(&format!("Subagent {}", named.agent.name))
        .open_world()
        .runs_long()
        .calls_as_subagent()
    }
}

impl Tool for UseSubagents {
    fn specs(&self) -> Vec<ToolSpec> {
        if self.agents.is_empty() {
            return vec![Self::generic_spec()];
        }
        self.agents.iter().map(Self::agent_spec).collect()
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let agent = if call.name == GENERIC {
            None
        } else {
            let named = self.agents.iter().find(|a| a.tool_name == call.name);
            Some(named.ok_or_else(|| {
                ToolError::new(
                    ToolErrorKind::INTERNAL,
                    format!("the use_subagents handler does not serve '{}'", call.name),
                )
            })?)
        };
        if !agent_support::llm::subagents_enabled(ctx)? {
            return Err(ToolError::new(ToolErrorKind::FAILED, DISABLED));
        }
        if call.task.is_subagent {
            return Err(ToolError::new(ToolErrorKind::FAILED, NESTED));
        }
        let mut llm = LlmSettings::read(ctx, GENERIC)?;
        let Some(named) = agent else {
            let prompts = prompts(&call.params)?;
            return run_all(
                call,
                ctx,
                &llm,
                &prompts,
                prompt::SYSTEM_PROMPT,
                &tools::definitions(),
            );
        };
        let Some(prompt) = agent_prompt(&call.params) else {
            // What the host says for a missing required parameter.
            ctx.say(
                "error",
                &texts::missing_param_notice(&call.name, PROMPT, None),
            );
            return Err(tool_api::sdk::missing(PROMPT));
        };
        if let Some(model) = &named.agent.model_id {
            llm.model = model.clone();
        }
        run_all(
            call,
            ctx,
            &llm,
            &[prompt],
            &prompt::agent_system_prompt(&named.agent),
            &tools::definitions_for(&named.agent.tools),
        )
    }
}

/// Runs one subagent per prompt, all at once, and returns the summary.
fn run_all(
    call: &Call,
    ctx: &Ctx<'_>,
    llm: &LlmSettings,
    prompts: &[String],
    system: &str,
    tools: &[ToolDef],
) -> ToolResult {
    let api_key = llm.api_key()?;
    let max_turns = agent_support::llm::max_turns(ctx)?;
    let board = Board::new(prompts, llm.context_window, |json| {
        ctx.say_partial("subagent", json);
    });
    let environment = prompt::environment_details(&call.task);
    let shared = Shared {
        ctx,
        llm,
        api_key: api_key.as_deref(),
        system,
        tools,
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

/// The prompt of a named subagent call: `prompt`, else `prompt_1`, trimmed; `None` when both
/// are blank.
pub fn agent_prompt(params: &Params) -> Option<String> {
    [PROMPT, "prompt_1"]
        .iter()
        .filter_map(|name| params.string(name))
        .map(|p| p.trim().to_string())
        .find(|p| !p.is_empty())
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

tool_api::submit_tool!(UseSubagents::from_agent_dir());
// The agent files decide the names, so the host reads them at every start.
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::SPECS_FROM_ENVIRONMENT_CAPABILITY,
        tool_api::model::access::FS_WORKSPACE_READ,
        tool_api::model::access::NETWORK_ANY,
        "toolset:cline-legacy",
    ]
);

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
        let spec = &UseSubagents::default().specs()[0];
        assert_eq!(spec.approval, Some(ApprovalCategory::Read));
        assert_eq!(spec.required_params(), vec!["prompt_1"]);
    }

    #[test]
    fn agents_replace_the_generic_spec() {
        let tool = UseSubagents {
            agents: agents::name_tools(vec![agents::Agent {
                name: "DB Explorer".to_string(),
                description: "Maps schemas".to_string(),
                model_id: None,
                tools: Vec::new(),
                skills: Vec::new(),
                system_prompt: "p".to_string(),
            }]),
        };
        let specs = tool.specs();
        let names: Vec<(&str, &str)> = specs
            .iter()
            .map(|s| (s.name.as_str(), s.description.as_str()))
            .collect();
        assert_eq!(
            names,
            [(
                "use_subagent_db_explorer",
                "Use the \"DB Explorer\" subagent: Maps schemas"
            )]
        );
        assert_eq!(specs[0].approval, Some(ApprovalCategory::Read));
    }

    #[test]
    fn a_named_call_takes_prompt_then_prompt_1() {
        let params = |v: serde_json::Value| Params::from_json(&v.to_string()).unwrap();
        assert_eq!(
            agent_prompt(&params(json!({"prompt": " a ", "prompt_1": "b"}))),
            Some("a".to_string())
        );
        assert_eq!(
            agent_prompt(&params(json!({"prompt": " ", "prompt_1": "b"}))),
            Some("b".to_string())
        );
        assert_eq!(agent_prompt(&params(json!({"prompt": ""}))), None);
    }
}
