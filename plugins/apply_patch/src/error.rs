//! Why a patch was not applied ([`Failure`]), and the message of an invalid one
//! ([`PatchError`]): the errors every stage returns.

use tool_api::sdk::prelude::*;

use crate::texts;

/// A patch that cannot be applied: the message shown after `Error executing apply_patch: `.
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

impl From<Failure> for ToolError {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Patch(error) => ToolError::new(ToolErrorKind::FAILED, texts::failed(&error.0)),
            Failure::Blocked(path) => ToolError::new(
                ToolErrorKind::BLOCKED,
                texts::failed(&texts::access_denied(&path)),
            ),
            Failure::Host(error) => error,
        }
    }
}
