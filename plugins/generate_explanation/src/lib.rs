//! The `generate_explanation` tool: explains a set of code changes (between two git references,
//! or between one and the working tree) as inline review comments written by an LLM.
//!
//! The LLM endpoint comes from the `[llm]` settings section (`base_url`, `model`, `api_key_env`).
//! Without one the tool is unavailable, with a message saying what to configure (Cline's check
//! for an API configuration comes first, too). With one, the git side runs as in Cline: the
//! repository and references are checked and the changed files listed, which answers "no
//! changes" and "only binary files" exactly as Cline does; writing the comments needs an LLM
//! client and a diff view, which this toolhost does not have yet, so that last step reports
//! itself unavailable.
//!
//! UI events: a `generate_explanation` message (JSON `{title, fromRef, toRef, status, error?}`)
//! with status `generating` while it works and `error` when it stops.

mod changes;
mod llm;

use std::path::Path;

use serde_json::json;
use tool_api::sdk::prelude::*;

use changes::{changed_files, is_binary, ChangesError};

const DESCRIPTION: &str = "Explain code changes to the user as inline comments on a diff, for \
example after finishing a feature or when asked what changed. `title` names the change set; \
`from_ref` is the git reference to compare from (a commit, branch, tag or HEAD~1); `to_ref` is \
optional, and without it the working tree is compared. Needs a git repository and an LLM \
endpoint configured for the tool host.";

/// The generate_explanation tool.
#[derive(Debug, Default)]
pub struct GenerateExplanation;

impl Tool for GenerateExplanation {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "generate_explanation",
            DESCRIPTION,
            &[
                ("title", "A short title for the changes.", true),
                (
                    "from_ref",
                    "The git reference to compare from (commit, branch, tag, HEAD~1).",
                    true,
                ),
                (
                    "to_ref",
                    "Optional: the git reference to compare to; the working tree when left out.",
                    false,
                ),
            ],
        )
        .with_partial()
        .read_only()
        .title("Explain changes")
        .open_world()
        .without_pre_tool_use_hooks()]
    }

    fn describe(&self, call: &Call) -> String {
        let title = call
            .params
            .string("title")
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "code changes".to_string());
        format!("[{} for '{title}']", call.name)
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let title = call.params.required("title")?;
        let from = call.params.required("from_ref")?;
        let to = call.params.string("to_ref").filter(|t| !t.is_empty());
        let status = Status {
            title: &title,
            from: &from,
            to: to.as_deref().unwrap_or(WORKING_DIRECTORY),
        };
        ctx.say_partial("generate_explanation", &status.message("generating", None));
        let fail = |kind: ToolErrorKind, message: String| {
            ctx.say(
                "generate_explanation",
                &status.message("error", Some(&message)),
            );
            Err(ToolError::new(kind, message))
        };
        let endpoint = match llm::endpoint(ctx) {
            Ok(endpoint) => endpoint,
            Err(message) => return fail(ToolErrorKind::UNAVAILABLE, message),
        };
        let cwd = Path::new(&call.task.cwd);
        let files = match changed_files(cwd, &from, to.as_deref()) {
            Ok(files) => files,
            Err(e @ ChangesError::NotARepository(_)) => {
                return fail(ToolErrorKind::UNAVAILABLE, e.message())
            }
            Err(e @ ChangesError::InvalidRef { .. }) => {
                return fail(ToolErrorKind::FAILED, e.message())
            }
            Err(e @ ChangesError::Git(_)) => return fail(ToolErrorKind::FAILED, e.message()),
        };
        let compared_to = to.as_deref().unwrap_or(WORKING_DIRECTORY);
        if files.is_empty() {
            return Ok(ToolContent::text(format!(
                "No changes found between '{from}' and '{compared_to}'."
            )));
        }
        let workspace = ctx.workspace();
        let text_files = files.iter().filter(|f| !is_binary(workspace, f)).count();
        if text_files == 0 {
            return Ok(ToolContent::text(format!(
                "All changed files between '{from}' and '{compared_to}' are binary files that cannot be displayed."
            )));
        }
        let plural = if text_files == 1 { "" } else { "s" };
        fail(
            ToolErrorKind::UNAVAILABLE,
            format!(
                "Found {text_files} changed file{plural} between {}, but this toolhost has no LLM client yet to write the explanations with the configured model '{}' at {}.",
                ref_description(&from, to.as_deref()),
                endpoint.model,
                endpoint.base_url
            ),
        )
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        let title = call
            .params
            .string("title")
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "code changes".to_string());
        let to = call.params.string("to_ref").filter(|t| !t.is_empty());
        let status = Status {
            title: &title,
            from: &call.params.string_or_empty("from_ref"),
            to: to.as_deref().unwrap_or(WORKING_DIRECTORY),
        };
        ctx.say_partial("generate_explanation", &status.message("generating", None));
        Ok(())
    }
}

/// What `to_ref` means when it is left out.
const WORKING_DIRECTORY: &str = "working directory";

/// Cline's wording for the compared references in its success text.
fn ref_description(from: &str, to: Option<&str>) -> String {
    match to {
        Some(to) => format!("'{from}' and '{to}'"),
        None => format!("'{from}' and working directory"),
    }
}

/// The fields of a `generate_explanation` UI message.
struct Status<'a> {
    title: &'a str,
    from: &'a str,
    to: &'a str,
}

impl Status<'_> {
    fn message(&self, status: &str, error: Option<&str>) -> String {
        let mut message = json!({
            "title": self.title,
            "fromRef": self.from,
            "toRef": self.to,
            "status": status,
        });
        if let Some(error) = error {
            message["error"] = error.into();
        }
        message.to_string()
    }
}

tool_api::submit_tool!(GenerateExplanation);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_WORKSPACE_READ,
        tool_api::model::access::SPAWN,
        tool_api::model::access::NETWORK_ANY,
        "toolset:cline-legacy",
    ]
);
