//! The `skills` tool of Cline's SDK tool set (`cline-sdk`, act and plan presets): a skill's
//! instructions by its name (a leading `/` and the case ignored), with the arguments the model
//! gives, in Cline's `<command-name>`/`<command-instructions>` form. The skills are use_skill's
//! (the same directories and settings, found by `instruction_files::skills`).
//!
//! Deliberate difference from Cline's SDK: the description does not end with the list of the
//! available skills (a spec is the same for every workspace here); the answer to an unknown
//! name lists them.

use std::path::Path;

use instruction_files::skills::{self, Skill};
use serde_json::{json, Value};
use tool_api::sdk::operation::invalid_param;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "Execute a skill within the main conversation. When users ask you to perform tasks, check if any available skills match. When users reference a slash command, invoke it with this tool. Input: `skill` (required) and optional `args`. Example: `skill: \"pdf\"`, `skill: \"commit\", args: \"-m \\\"Fix bug\\\"\"`, `skill: \"review-pr\", args: \"123\"`, `skill: \"ms-office-suite:pdf\"`. When a skill matches the user's request, invoking this tool is a blocking requirement before any other response. Never mention a skill without invoking this tool.";

/// The tool's input schema, as Cline's SDK shows it to the model.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "skill": {"type": "string", "minLength": 1, "description": "Name of the skill to execute."},
            "args": {"description": "Arguments for the skill; use null when omitted", "anyOf": [{"type": "string"}, {"type": "null"}]}
        },
        "required": ["skill"],
        "additionalProperties": false
    })
}

/// The answer for `requested` with `args` among `available` (all answers are texts, as in
/// Cline, failures included).
pub fn answer(requested: &str, args: Option<&str>, available: &[Skill]) -> String {
    let name = requested.trim().trim_start_matches('/').to_lowercase();
    if name.is_empty() {
        return "Missing skill name.".to_string();
    }
    let bare = name.rsplit(':').next().unwrap_or(&name);
    let found = available
        .iter()
        .find(|s| s.name.to_lowercase() == name)
        .or_else(|| available.iter().find(|s| s.name.to_lowercase() == bare));
    let Some(skill) = found else {
        if available.is_empty() {
            return "No skills are currently available.".to_string();
        }
        let mut names: Vec<&str> = available.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        return format!(
            "Skill \"{requested}\" not found. Available skills: {}",
            names.join(", ")
        );
    };
    let Ok(instructions) = skills::instructions(skill) else {
        return format!("Skill \"{requested}\" not found. Its SKILL.md cannot be read.");
    };
    let mut out = format!("<command-name>{}</command-name>", skill.name);
    if let Some(args) = args.map(str::trim).filter(|a| !a.is_empty()) {
        out.push_str(&format!("\n<command-args>{args}</command-args>"));
    }
    out.push_str("\n<command-instructions>\n");
    if !skill.description.is_empty() {
        out.push_str(&format!("Description: {}\n\n", skill.description));
    }
    out.push_str(&instructions);
    out.push_str("\n</command-instructions>");
    out
}

/// The skills tool.
#[derive(Debug, Default)]
pub struct Skills;

impl Tool for Skills {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut spec = ToolSpec::simple("skills", DESCRIPTION, &[])
            .read_only()
            .title("Skills")
            .checks_own_params();
        spec.input_schema = input_schema();
        vec![spec]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let map = call.params.as_map();
        let Some(requested) = map
            .get("skill")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        else {
            return Err(invalid_param(
                "Too small: expected string to have >=1 characters",
                "skill",
            ));
        };
        let args = map.get("args").and_then(Value::as_str);
        let setting = |key: &str| ctx.setting::<Value>(key);
        let available = skills::available(Path::new(&call.task.cwd), setting)
            .map_err(|message| ToolError::new(ToolErrorKind::FAILED, message))?;
        Ok(ToolContent::text(answer(requested, args, &available)))
    }
}

tool_api::submit_tool!(Skills);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        "toolset:cline-sdk@act",
        "toolset:cline-sdk@plan",
        "toolset:cline-sdk@default",
    ]
);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_skill_is_found_by_name_and_answers_with_its_instructions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        std::fs::write(
            &path,
            "---\nname: pdf\ndescription: Work with PDFs\n---\nUse pdftotext.\n",
        )
        .unwrap();
        let available = vec![Skill {
            name: "pdf".into(),
            description: "Work with PDFs".into(),
            path,
        }];
        assert_eq!(
            answer("/PDF", Some(" a.pdf "), &available),
            "<command-name>pdf</command-name>\n<command-args>a.pdf</command-args>\n<command-instructions>\nDescription: Work with PDFs\n\nUse pdftotext.\n</command-instructions>"
        );
        assert_eq!(answer(" ", None, &available), "Missing skill name.");
        assert_eq!(
            answer("zip", None, &available),
            "Skill \"zip\" not found. Available skills: pdf"
        );
        assert_eq!(
            answer("zip", None, &[]),
            "No skills are currently available."
        );
    }
}
