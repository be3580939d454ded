//! Why a patch was not applied ([`Failure`]), and the message of an invalid one
//! ([`PatchError`]): the errors every stage returns.

use tool_api::sdk::prelude::*;

use crate::texts;

/// A patch that cannot be applied: the message a plugin shows in its own wrapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError(pub String);

impl PatchError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// Why a patch was not applied.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The patch is invalid or does not fit the files.
    Patch(PatchError),
    /// `.clineignore` blocks this path (as the patch names it).
    Blocked(String),
    /// The host failed.
    Host(ToolError),
}

impl From<PatchError> for Failure {
    fn from(error: PatchError) -> Self {
        Self::Patch(error)
    }
}

impl Failure {
    /// The call's error, a patch's or a block's message wrapped by `wrap` (each tool words
    /// its failures its own way); the host's errors as they are.
    pub fn into_tool_error(self, wrap: impl Fn(&str) -> String) -> ToolError {
        match self {
            Self::Patch(error) => ToolError::new(ToolErrorKind::FAILED, wrap(&error.0)),
            Self::Blocked(path) => {
                ToolError::new(ToolErrorKind::BLOCKED, wrap(&texts::access_denied(&path)))
            }
            Self::Host(error) => error,
        }
    }
}
