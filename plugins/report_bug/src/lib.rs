//! The `report_bug` tool: drafts a bug report from what the model saw, shows it to the user, and,
//! once the user accepts, hands them a link to a pre-filled GitHub issue.
//!
//! Differences from Cline:
//! - Cline opens the issue page in the browser; this tool shows the pre-filled link as an `info`
//!   event instead, since a tool host may run where no browser can open. The repository is
//!   `cline/cline` with its `bug_report.yml` form, as in Cline, unless the setting
//!   `report_bug.repository` names another (`owner/name`).
//! - The five fields are not declared required in the schema, because Cline answers a missing
//!   one with its own plain text (`Missing required parameter: title`), which the host's
//!   required check would replace; for the same reason that answer is a result and is not
//!   counted as a mistake.
//! - The provider and model come from the settings (`llm.provider`, `llm.model`), the system
//!   facts from this process; there is no Cline version to report.
//! - A plain "no" (a No answer without text) is a denial; with nobody to answer, nothing is filed
//!   and the model is told so.

mod system;

use serde_json::json;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "Draft a GitHub bug report about the agent itself when the user asks \
to report a problem. Fill in all five fields from the conversation: `title`; `what_happened` \
(what went wrong and what was expected instead); `steps_to_reproduce`; `api_request_output` \
(relevant request or error output, or \"N/A\"); `additional_context` (anything else that helps, \
or \"N/A\"). The user reviews the draft before anything is filed.";

/// The fields, in the order Cline checks them.
const FIELDS: [&str; 5] = [
    "title",
    "what_happened",
    "steps_to_reproduce",
    "api_request_output",
    "additional_context",
];

/// The result when the user accepted the report.
pub const ACCEPTED: &str = "The user accepted the creation of the Github issue.";

/// What the model reads when nobody can answer.
pub const NO_USER: &str = "No user is available to review and submit the bug report in this \
non-interactive session, so no issue was created.";

/// The report_bug tool.
#[derive(Debug, Default)]
pub struct ReportBug;

impl Tool for ReportBug {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "report_bug",
            DESCRIPTION,
            &[
                ("title", "Required: a concise title for the issue.", false),
                (
                    "what_happened",
                    "Required: what went wrong and what was expected.",
                    false,
                ),
                (
                    "steps_to_reproduce",
                    "Required: the steps that lead to the problem.",
                    false,
                ),
                (
                    "api_request_output",
                    "Required: relevant request or error output, or \"N/A\".",
                    false,
                ),
                (
                    "additional_context",
                    "Required: anything else that helps, or \"N/A\".",
                    false,
                ),
            ],
        )
        .with_partial()
        .read_only()
        .title("Report a bug")
        .without_pre_tool_use_hooks()]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let mut values: [String; 5] = Default::default();
        for (slot, field) in values.iter_mut().zip(FIELDS) {
            match call.params.string(field).filter(|v| !v.is_empty()) {
                Some(value) => *slot = value,
                None => {
                    return Ok(ToolContent::text(format!(
                        "Missing required parameter: {field}"
                    )))
                }
            }
        }
        let [title, what_happened, steps, api_output, additional] = values;
        let facts = system::Facts::gather(ctx);
        let report = json!({
            "title": title,
            "what_happened": what_happened,
            "steps_to_reproduce": steps,
            "api_request_output": api_output,
            "additional_context": additional,
            "provider_and_model": facts.provider_and_model,
            "operating_system": facts.operating_system,
            "system_info": facts.system_info,
            "cline_version": facts.cline_version,
        });
        match ctx.propose("report_bug", &report.to_string())? {
            Proposal::Feedback(text) => Ok(ToolContent::text(feedback(&text))),
            Proposal::NobodyToAsk => Err(ToolError::new(ToolErrorKind::UNAVAILABLE, NO_USER)),
            Proposal::Accepted => {
                let repository = ctx
                    .setting::<String>("report_bug.repository")
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(|| "cline/cline".to_string());
                let fields = [
                    ("title", title.as_str()),
                    ("operating-system", &facts.operating_system),
                    ("cline-version", &facts.cline_version),
                    ("system-info", &facts.system_info),
                    ("additional-context", &additional),
                    ("what-happened", &what_happened),
                    ("steps", &steps),
                    ("provider-model", &facts.provider_and_model),
                    ("logs", &api_output),
                ];
                let url = issue_url(&repository, &fields);
                ctx.say("info", &format!("File the bug report here: {url}"));
                Ok(ToolContent::text(ACCEPTED))
            }
        }
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        let mut draft = serde_json::Map::new();
        for field in FIELDS {
            draft.insert(field.to_string(), call.params.string_or_empty(field).into());
        }
        ctx.ask_partial("report_bug", &serde_json::Value::Object(draft).to_string());
        Ok(())
    }
}

/// The result when the user answered with feedback instead of filing.
pub fn feedback(text: &str) -> String {
    format!(
        "The user did not submit the bug, and provided feedback on the Github issue generated instead:\n<feedback>\n{text}\n</feedback>"
    )
}

/// The new-issue link with the form fields filled in (and Cline's issue form as the template).
pub fn issue_url(repository: &str, fields: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in fields {
        query.append_pair(name, value);
    }
    query.append_pair("template", "bug_report.yml");
    format!(
        "https://github.com/{repository}/issues/new?{}",
        query.finish()
    )
}

tool_api::submit_tool!(ReportBug);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_NONE,
        "toolset:cline-legacy",
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_links_encode_every_field() {
        assert_eq!(
            issue_url("cline/cline", &[("title", "a & b"), ("steps", "1. x\n2. y")]),
            "https://github.com/cline/cline/issues/new?title=a+%26+b&steps=1.+x%0A2.+y&template=bug_report.yml"
        );
    }
}
