//! What a subagent is told: its system prompt and the workspace block of its first message.

use serde_json::{json, Map};
use tool_api::model::TaskContext;

use crate::agents::Agent;

/// The system prompt of a generic subagent (written for this port; Cline's prompt registry is
/// not reproduced).
pub const SYSTEM_PROMPT: &str = "You are a research subagent working for a coding agent. You \
explore a software workspace with the tools you are given and report what you find; another \
agent will act on your report.

# Subagent Execution Mode

- Research only: read files, list directories, search and run commands that only read. Never \
change, create or delete anything.
- Call one tool at a time and use its result before the next call.
- When you know enough, call attempt_completion. Its `result` is handed to the main agent as it \
is, so make it concise and complete.
- End the result with a section headed \"Relevant file paths\" that lists the paths that matter, \
one per line, and nothing else.";

/// The system prompt of a named agent: its own prompt, its profile, then the execution-mode
/// rules every subagent gets (the part of [`SYSTEM_PROMPT`] from `# Subagent Execution Mode`).
///
/// Cline appends the profile with no separator after the agent's prompt; a blank line is put
/// between them here so that the heading stays a heading.
pub fn agent_system_prompt(agent: &Agent) -> String {
    let rules = SYSTEM_PROMPT
        .find("# Subagent Execution Mode")
        .map_or(SYSTEM_PROMPT, |at| &SYSTEM_PROMPT[at..]);
    format!(
        "{}\n\n# Agent Profile\nName: {}\nDescription: {}\n\n{rules}",
        agent.system_prompt, agent.name, agent.description
    )
}

/// The `<environment_details>` block: the workspace roots as JSON (Cline's
/// `{"workspaces":{"<path>":{"hint":"<name>"}}}`, falling back to the cwd).
pub fn environment_details(task: &TaskContext) -> String {
    let mut workspaces = Map::new();
    for root in &task.workspace_roots {
        workspaces.insert(root.path.clone(), json!({"hint": root.name}));
    }
    if workspaces.is_empty() {
        let hint = std::path::Path::new(&task.cwd)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        workspaces.insert(task.cwd.clone(), json!({"hint": hint}));
    }
    format!(
        "<environment_details>\n# Workspace Configuration\n{}\n</environment_details>",
        json!({"workspaces": workspaces})
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cwd_stands_in_for_missing_roots() {
        let task = TaskContext {
            cwd: "/work/app".to_string(),
            ..TaskContext::default()
        };
        assert_eq!(
            environment_details(&task),
            "<environment_details>\n# Workspace Configuration\n{\"workspaces\":{\"/work/app\":{\"hint\":\"app\"}}}\n</environment_details>"
        );
    }
}
