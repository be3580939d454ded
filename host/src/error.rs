//! Why a call failed, in the host's own types.
//!
//! The ABI carries a failure as an integer kind and an `RString`; the host converts it to and
//! from [`CallError`] where it crosses the boundary: in the ABI
//! adapter (`plugins/abi/`) and on a worker's channel (`plugins/worker/protocol.rs`). Everything
//! between speaks [`CallError`].

/// The class of a failed call: how the model sees it and whether it counts as a mistake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A required parameter is missing or a parameter is malformed. Counts as a mistake.
    InvalidParams,
    /// The tool ran and failed (file not found, no match). Counts as a mistake.
    Failed,
    /// A rule refused the call (`.clineignore`, command permissions, the sandbox). Not a mistake.
    Blocked,
    /// The user, the approval policy or a hook denied the call. The message is shown as it is.
    Denied,
    /// The call was cancelled.
    Cancelled,
    /// The call ran out of time.
    Timeout,
    /// A host service the tool needs is not available (nobody to ask, no worker).
    Unavailable,
    /// A path changed after the host checked it; the tool reached nothing through it.
    PathChanged,
    /// The tool panicked; the host disables the plugin.
    Panic,
    /// A bug or broken invariant in the plugin or the host.
    Internal,
    /// The plugin's worker process ended during the call.
    Crashed,
}

impl ErrorKind {
    /// Every kind.
    pub const ALL: [Self; 11] = [
        Self::InvalidParams,
        Self::Failed,
        Self::Blocked,
        Self::Denied,
        Self::Cancelled,
        Self::Timeout,
        Self::Unavailable,
        Self::PathChanged,
        Self::Panic,
        Self::Internal,
        Self::Crashed,
    ];

    /// Whether the model's consecutive-mistake counter goes up for this kind.
    pub fn is_mistake(self) -> bool {
        matches!(self, Self::InvalidParams | Self::Failed)
    }

    /// A short lower-case name for logs and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Self::InvalidParams => "invalid_params",
            Self::Failed => "failed",
            Self::Blocked => "blocked",
            Self::Denied => "denied",
            Self::Cancelled => "cancelled",
            Self::Timeout => "timeout",
            Self::Unavailable => "unavailable",
            Self::PathChanged => "path_changed",
            Self::Panic => "panic",
            Self::Internal => "internal",
            Self::Crashed => "crashed",
        }
    }
}

/// A failed call: its class and the message for the model (without the "tool execution
/// failed" wrapper).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", kind.name())]
pub struct CallError {
    /// The class of failure.
    pub kind: ErrorKind,
    /// The message for the model.
    pub message: String,
}

impl CallError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bad_parameters_and_failures_are_mistakes() {
        let mistakes: Vec<_> = ErrorKind::ALL
            .into_iter()
            .filter(|kind| kind.is_mistake())
            .collect();
        assert_eq!(mistakes, [ErrorKind::InvalidParams, ErrorKind::Failed]);
    }

    #[test]
    fn it_shows_its_kind_then_its_message() {
        let error = CallError::new(ErrorKind::PathChanged, "a.txt moved");
        assert_eq!(error.to_string(), "path_changed: a.txt moved");
    }
}
