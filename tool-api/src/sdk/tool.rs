//! The [`Tool`] trait plugin authors implement, and the call it receives.

use crate::abi::ToolError;
use crate::model::{DynamicToolsQuery, TaskContext, ToolContent, ToolSpec};

use super::{Ctx, Params};

/// What a tool call returns: content for the model, or an error the host will format.
pub type ToolResult = Result<ToolContent, ToolError>;

/// One complete (or, for `handle_partial`, still streaming) tool call.
#[derive(Debug, Clone)]
pub struct Call {
    /// The name the tool was called by.
    pub name: String,
    /// The call's id.
    pub call_id: String,
    /// The parameters.
    pub params: Params,
    /// The task context.
    pub task: TaskContext,
}

/// A tool, in plain Rust. The SDK adapts it to the ABI and catches its panics.
///
/// Handlers keep no task state of their own: everything per task lives in the host and is
/// reached through [`Ctx`].
pub trait Tool: Send + Sync + 'static {
    /// One spec per name this tool serves.
    fn specs(&self) -> Vec<ToolSpec>;

    /// The short description that prefixes results (Cline's `getDescription`).
    fn describe(&self, call: &Call) -> String {
        format!("[{}]", call.name)
    }

    /// Runs a complete call.
    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult;

    /// Handles a streaming call: UI updates only. The default does nothing.
    fn handle_partial(&self, _call: &Call, _ctx: &Ctx<'_>) -> Result<(), ToolError> {
        Ok(())
    }

    /// The names this tool serves beyond [`Tool::specs`], found at run time (an MCP server's
    /// tools, tools declared in the settings). Asked only when the plugin declares the
    /// [`crate::model::DYNAMIC_TOOLS_CAPABILITY`]; a call of one of them reaches
    /// [`Tool::execute`] under that name. The default serves none.
    fn dynamic_tools(&self, _query: &DynamicToolsQuery) -> Result<Vec<ToolSpec>, ToolError> {
        Ok(Vec::new())
    }

    /// Handles a host notification or request outside a call (`method`, JSON `payload`). The
    /// host sends `close_session` (`{"task_id"}`) to browser_action before another tool of the
    /// task runs, and `task_ended` (`{"task_id"}`) to every handler when a task's host goes
    /// away. The default answers UNAVAILABLE, which the host ignores.
    fn extension(
        &self,
        method: &str,
        _payload: &serde_json::Value,
    ) -> Result<serde_json::Value, ToolError> {
        Err(ToolError::new(
            crate::abi::ToolErrorKind::UNAVAILABLE,
            format!("unknown handler extension '{method}'"),
        ))
    }
}

/// A tool's self-registration inside its plugin library, gathered by [`crate::export_plugin!`].
///
/// `inventory` works per library image: each plugin sees only its own registrations.
pub struct ToolRegistration {
    /// Builds the tool's handler.
    pub build: fn() -> crate::abi::ToolHandlerBox,
}

inventory::collect!(ToolRegistration);
