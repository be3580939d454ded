//! The result of one call, and the forms it is shown in.

use crate::error::{CallError, ErrorKind};
use serde::Serialize;
use tool_api::model::{ApprovalDecision, ContentBlock, ToolContent};
use tool_api::texts;

/// What a call produced.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The tool name called.
    pub tool: String,
    /// The handler's description of the call (`[read_file for 'a.txt']`).
    pub description: String,
    /// The content, or the error.
    pub result: Result<ToolContent, CallError>,
    /// Set when a hook cancelled the task during this call (Cline ends the task then): what a
    /// frontend does with it is its own (see ARCHITECTURE.md, "A hook's cancel").
    pub task_cancelled: Option<TaskCancelled>,
    /// The MCP structures of a result the tool reported as failed (an MCP server's
    /// `isError`): see [`CallOutcome::mcp_result`].
    pub failed_mcp_result: Option<serde_json::Value>,
}

/// A hook's cancellation of the task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskCancelled {
    /// The hook that cancelled (`PreToolUse`, `PostToolUse`).
    pub hook: &'static str,
    /// Its `errorMessage`, else Cline's text for a cancel without one.
    pub message: String,
}

impl TaskCancelled {
    /// The sentence that tells a client without a user why (`serve`, `mcp`).
    pub fn note(&self) -> String {
        format!(
            "The {} hook cancelled the task: {}",
            self.hook, self.message
        )
    }
}

/// An image of a result, in `--json` output.
#[derive(Debug, Clone, Serialize)]
pub struct ImageOut {
    /// MIME type.
    pub media_type: String,
    /// Base64 data.
    pub data: String,
}

/// The `--json` form of an outcome.
#[derive(Debug, Clone, Serialize)]
pub struct OutcomeJson {
    /// Whether the call failed.
    pub is_error: bool,
    /// The text the model receives.
    pub text: String,
    /// Images of the result.
    pub images: Vec<ImageOut>,
    /// The error class, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<&'static str>,
    /// The hook that cancelled the task during the call, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_cancelled: Option<TaskCancelled>,
}

impl CallOutcome {
    /// The outcome of calling a name nobody registered.
    pub fn unknown_tool(name: &str) -> Self {
        Self {
            tool: name.to_string(),
            description: format!("[{name}]"),
            result: Err(CallError::new(
                ErrorKind::InvalidParams,
                format!("No tool named '{name}' is available."),
            )),
            task_cancelled: None,
            failed_mcp_result: None,
        }
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.result.is_err()
    }

    /// Exactly the text the model receives for this call.
    pub fn model_text(&self) -> String {
        match &self.result {
            Ok(content) => content.joined_text(),
            Err(e) if e.kind == ErrorKind::Denied => e.message.to_string(),
            Err(e) => texts::tool_error(e.message.as_str()),
        }
    }

    /// [`CallOutcome::model_text`] for a model that calls tools with JSON arguments: an
    /// error's message without the reminder of the XML tool-call format.
    pub fn native_model_text(&self) -> String {
        match &self.result {
            Err(e) if e.kind != ErrorKind::Denied => {
                texts::tool_error(texts::without_tool_use_reminder(e.message.as_str()))
            }
            _ => self.model_text(),
        }
    }

    /// The result as an MCP `tools/call` result, when the tool relayed one (use_mcp_tool):
    /// the server's content blocks with their annotations, `structuredContent`, `isError`.
    pub fn mcp_result(&self) -> Option<&serde_json::Value> {
        match &self.result {
            Ok(content) => content.mcp_result.as_ref(),
            Err(_) => self.failed_mcp_result.as_ref(),
        }
    }

    /// The text for a JSON client with no user behind it (`serve`, `mcp`): the model's text
    /// without the reminder of the XML tool-call format (that client's model calls tools with
    /// JSON arguments, as in Cline's native tool-call mode) and, when a hook cancelled the
    /// task, why; nobody else would be told.
    pub fn unattended_text(&self) -> String {
        let text = self.native_model_text();
        match &self.task_cancelled {
            Some(cancelled) if text.is_empty() => cancelled.note(),
            Some(cancelled) => format!("{text}\n\n{}", cancelled.note()),
            None => text,
        }
    }

    /// The images of a successful result.
    pub fn images(&self) -> Vec<ImageOut> {
        let Ok(content) = &self.result else {
            return Vec::new();
        };
        content
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Image { media_type, data } => Some(ImageOut {
                    media_type: media_type.clone(),
                    data: data.clone(),
                }),
                ContentBlock::Text { .. } => None,
            })
            .collect()
    }

    /// The `--json` form.
    pub fn to_json(&self) -> OutcomeJson {
        OutcomeJson {
            is_error: self.is_error(),
            text: self.model_text(),
            images: self.images(),
            error_kind: self.result.as_ref().err().map(|e| e.kind.name()),
            task_cancelled: self.task_cancelled.clone(),
        }
    }

    /// The `--json` form for a client with no user behind it: its text is
    /// [`CallOutcome::unattended_text`].
    pub fn to_unattended_json(&self) -> OutcomeJson {
        OutcomeJson {
            text: self.unattended_text(),
            ..self.to_json()
        }
    }
}

/// The error of a call the user, a rule or a hook denied (`None`: a hook), as the decision
/// says ([`ApprovalDecision::denial`]).
pub(super) fn denied(decision: Option<&ApprovalDecision>) -> CallError {
    let text = match decision {
        Some(decision) => decision.denial(texts::TOOL_DENIED),
        None => texts::TOOL_DENIED.to_string(),
    };
    CallError::new(ErrorKind::Denied, text)
}
