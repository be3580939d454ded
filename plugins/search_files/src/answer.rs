//! What the model reads when a search did not run to the end: an error for a cancelled search
//! or a refused regex, `Found 0 results.` for a search that could not run.

use tool_api::sdk::prelude::*;

use crate::format::NO_RESULTS;
use crate::search::SearchError;

/// What a search that did not run to the end answers: cancellation and a refused regex are
/// errors; a search that could not run (a missing path) finds nothing, as in Cline.
pub(crate) fn failed_search(ctx: &Ctx<'_>, error: SearchError) -> Result<String, ToolError> {
    match error {
        SearchError::Cancelled => Err(ToolError::new(
            ToolErrorKind::FAILED,
            "The search was cancelled.",
        )),
        SearchError::Regex(message) | SearchError::Pattern(message) => Err(ToolError::new(
            ToolErrorKind::FAILED,
            ripgrep_error(&message),
        )),
        e => {
            ctx.log_debug(&format!("search_files: {e}"));
            Ok(NO_RESULTS.to_string())
        }
    }
}

/// The error for a regex or file pattern ripgrep refuses: Cline's text for a failed ripgrep
/// run, `ripgrep process error: ` and what ripgrep prints (without its final line break).
pub fn ripgrep_error(message: &str) -> String {
    format!("ripgrep process error: {}", message.trim_end())
}
