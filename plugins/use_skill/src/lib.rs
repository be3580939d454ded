//! The `use_skill` tool: loads a skill's instructions (a `SKILL.md` in a skill directory) into the
//! conversation.
//!
//! Skills are looked for, in this order, in the workspace's `.clinerules/skills`,
//! `.cline/skills`, `.claude/skills` and `.agents/skills`, then in `~/.cline/skills` and
//! `~/.agents/skills`; on a name clash the later one wins (global over project), as in Cline.
//! Settings: `skills.global_dirs` (a list of directories, `~` and `${env:NAME}` expanded)
//! replaces the two global directories;
//! `skills.disabled` (a list of skill names or `SKILL.md` paths) turns skills off, as Cline's
//! skill toggles do. Cline's remote (enterprise) skills have no counterpart here.
//!
//! The available skills are also MCP resources (their `SKILL.md` files, `file://` URIs) for
//! the clients of `toolhost mcp`; a skill in the workspace is offered only when it really is
//! inside it and `.clineignore` does not block it.
//!
//! Cline answers every failure here with plain text (`Error: …`), not a tool error; the texts
//! are kept, and so is that form. Because of it `skill_name` is not declared required in the
//! schema (the host's required check would replace Cline's text), and the missing name, which
//! Cline counts as a mistake, is not counted (a successful result resets the count).

use std::path::Path;

use instruction_files::{InstructionFile, Origin};
use serde_json::json;
use tool_api::sdk::prelude::*;

use instruction_files::skills::{self, available as available_skills, Skill};

const DESCRIPTION: &str = "Load the instructions of one of the available skills (listed in your \
instructions with a description each) when the user's request matches what a skill is for. \
Required: `skill_name`, the skill's exact name. Load a skill once per task, then follow its \
instructions; files it refers to are in its directory.";

/// Cline's text for a missing `skill_name`.
pub const MISSING_NAME: &str =
    "Error: Missing required parameter 'skill_name'. Please provide the name of the skill to activate.";

/// Cline's text when no skill is available at all.
pub const NO_SKILLS: &str =
    "Error: No skills are available. Skills may be disabled or not configured.";

/// The use_skill tool.
#[derive(Debug, Default)]
pub struct UseSkill;

impl Tool for UseSkill {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "use_skill",
            DESCRIPTION,
            &[(
                "skill_name",
                "Required: the name of the skill to load.",
                false,
            )],
        )
        .with_partial()
        .read_only()
        .title("Use skill")
        .idempotent()
        .without_pre_tool_use_hooks()]
    }

    fn describe(&self, call: &Call) -> String {
        match call.params.string("skill_name").filter(|n| !n.is_empty()) {
            Some(name) => format!("[{} for \"{name}\"]", call.name),
            None => format!("[{}]", call.name),
        }
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let Some(name) = call.params.string("skill_name").filter(|n| !n.is_empty()) else {
            return Ok(ToolContent::text(MISSING_NAME));
        };
        let setting = |key: &str| ctx.setting::<serde_json::Value>(key);
        let available = match available_skills(Path::new(&call.task.cwd), setting) {
            Ok(available) => available,
            Err(message) => return Ok(ToolContent::text(format!("Error: {message}"))),
        };
        if available.is_empty() {
            return Ok(ToolContent::text(NO_SKILLS));
        }
        ctx.say("tool", &skill_message(&name));
        // Cline treats an unreadable SKILL.md like an unknown name.
        let found = available
            .iter()
            .find(|s| s.name == name)
            .and_then(|skill| Some((skill, skills::instructions(skill).ok()?)));
        let Some((skill, instructions)) = found else {
            let names: Vec<&str> = available.iter().map(|s| s.name.as_str()).collect();
            let list = if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            };
            return Ok(ToolContent::text(format!(
                "Error: Skill \"{name}\" not found. Available skills: {list}"
            )));
        };
        Ok(ToolContent::text(activated(skill, &instructions)))
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        ctx.say_partial(
            "tool",
            &skill_message(&call.params.string_or_empty("skill_name")),
        );
        Ok(())
    }

    /// The available skills' `SKILL.md` files as MCP resources, for a client's resource picker.
    fn extension(
        &self,
        method: &str,
        payload: &serde_json::Value,
    ) -> Result<serde_json::Value, ToolError> {
        let request: OfferRequest = serde_json::from_value(payload.clone())
            .map_err(|e| ToolError::new(ToolErrorKind::INVALID_PARAMS, e.to_string()))?;
        instruction_files::answer_resources(method, &request, skill_files).unwrap_or_else(|| {
            Err(ToolError::new(
                ToolErrorKind::UNAVAILABLE,
                format!("unknown handler extension '{method}'"),
            ))
        })
    }
}

/// The available skills of `request`'s workspace as instruction files (none when the
/// settings are unusable: a listing is no place to report them; a call does).
fn skill_files(request: &OfferRequest) -> Vec<InstructionFile> {
    let cwd = Path::new(&request.workspace.cwd);
    let setting = |key: &str| request.setting(key).cloned();
    available_skills(cwd, setting)
        .unwrap_or_default()
        .into_iter()
        .map(|skill| InstructionFile {
            origin: if skill.path.starts_with(cwd) {
                Origin::Workspace
            } else {
                Origin::User
            },
            name: skill.name,
            description: Some(skill.description),
            path: skill.path,
        })
        .collect()
}

/// The UI message naming the skill (Cline's `ClineSayTool` of kind `useSkill`).
fn skill_message(name: &str) -> String {
    json!({"tool": "useSkill", "path": name}).to_string()
}

/// The result for a loaded skill.
fn activated(skill: &Skill, instructions: &str) -> String {
    let dir = skill
        .path
        .parent()
        .map(|d| format!("{}{}", d.display(), std::path::MAIN_SEPARATOR))
        .unwrap_or_default();
    format!(
        "# Skill \"{}\" is now active\n\n{instructions}\n\n---\nIMPORTANT: The skill is now loaded. Do NOT call use_skill again for this task. Simply follow the instructions above to complete the user's request. You may access other files in the skill directory at: {dir}",
        skill.name
    )
}

tool_api::submit_tool!(UseSkill);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::RESOURCES_CAPABILITY,
        "needs:resources",
        tool_api::model::access::FS_FULL,
        "toolset:cline-legacy",
    ]
);
