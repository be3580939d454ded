//! The `search_codebase` tool of Cline's SDK tool set (`cline-sdk`): several regex searches of
//! the workspace in one call, each answered with its matches and the lines around them; an
//! array of operation results in the order given (a search with no match is a success).
//!
//! Deliberate differences from Cline's SDK executor:
//! - Every answer has the form Cline gives when it searches without ripgrep (each matching line
//!   shown, marked `>`, with its own two lines before and after). With ripgrep, Cline never shows
//!   the matching line and gives each context line to whichever match it read last, across files.
//! - The files are ripgrep's, in path order (ripgrep's order varies from run to run), without the
//!   `.clineignore`d ones, read through the workspace capability.
//! - A query that is not a valid regex says so in the words of Rust's regex syntax, which is the
//!   syntax used (ripgrep's); Cline's fallback reports JavaScript's.
//! - The queries run one after another.

mod search;

use serde_json::Value;
use tool_api::sdk::operation::OperationResult;
use tool_api::sdk::prelude::*;

pub use search::{compile, search, MAX_OUTPUT_CHARS, MAX_RESULTS};

const DESCRIPTION: &str = "Perform regex pattern searches across the codebase. Supports multiple parallel searches. When several search patterns could be useful and do not depend on each other, run them together in one call, and call this tool in the same response as other independent tool calls. Use for finding code patterns, function definitions, class names, imports, etc. Output beyond ~48k characters per query is middle-truncated; narrow patterns beat broad ones.";

/// The tool's input schema, as Cline's SDK shows it to the model.
fn input_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "queries": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Array of regex search queries to execute"
            }
        },
        "required": ["queries"],
        "additionalProperties": false
    })
}

/// The queries of a call: `queries` as a list of strings, or one string.
pub fn queries(params: &Params) -> Result<Vec<String>, ToolError> {
    let invalid = || ToolError::new(ToolErrorKind::INVALID_PARAMS, "✖ Invalid input");
    match params.as_map().get("queries") {
        Some(Value::String(query)) => {
            // A JSON array sent as a string (Cline's runtime parses it).
            match serde_json::from_str::<Vec<String>>(query) {
                Ok(list) if query.trim_start().starts_with('[') => Ok(list),
                _ => Ok(vec![query.clone()]),
            }
        }
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string).ok_or_else(invalid))
            .collect(),
        _ => Err(invalid()),
    }
}

/// The search_codebase tool.
#[derive(Debug, Default)]
pub struct SearchCodebase;

impl Tool for SearchCodebase {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut spec = ToolSpec::simple("search_codebase", DESCRIPTION, &[])
            .approval(ApprovalCategory::Read)
            .read_only()
            .idempotent()
            .title("Search codebase")
            .checks_own_params();
        spec.input_schema = input_schema();
        vec![spec]
    }

    fn describe(&self, call: &Call) -> String {
        let asked = queries(&call.params).unwrap_or_default();
        format!("[search_codebase for {}]", asked.join(", "))
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let asked = queries(&call.params)?;
        let workspace = ctx.workspace();
        let root = workspace.root_path(0).to_path_buf();
        let allowed =
            |relative: &std::path::Path| !workspace.blocks_as_typed(&root.join(relative), false);
        let results: Vec<OperationResult> = asked
            .iter()
            .map(|query| {
                let answer = compile(query).and_then(|regex| {
                    search(workspace, query, &regex, &allowed, &|| ctx.is_cancelled())
                });
                match answer {
                    Ok(text) => OperationResult::success(query.as_str(), text),
                    Err(why) => {
                        OperationResult::failure(query.as_str(), format!("Search failed: {why}"))
                    }
                }
            })
            .collect();
        Ok(ToolContent::text(OperationResult::to_json(&results)))
    }
}

tool_api::submit_tool!(SearchCodebase);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_WORKSPACE_READ,
        "toolset:cline-sdk@act",
        "toolset:cline-sdk@plan",
        "toolset:cline-sdk@search",
        "toolset:cline-sdk@default",
    ]
);
