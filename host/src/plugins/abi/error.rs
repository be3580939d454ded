//! A failure across the ABI: the host's [`CallError`] to and from the ABI's [`ToolError`].

use tool_api::abi::{ToolError, ToolErrorKind};

use crate::error::{CallError, ErrorKind};

/// The ABI's number for `kind`.
pub fn abi_kind(kind: ErrorKind) -> ToolErrorKind {
    match kind {
        ErrorKind::InvalidParams => ToolErrorKind::INVALID_PARAMS,
        ErrorKind::Failed => ToolErrorKind::FAILED,
        ErrorKind::Blocked => ToolErrorKind::BLOCKED,
        ErrorKind::Denied => ToolErrorKind::DENIED,
        ErrorKind::Cancelled => ToolErrorKind::CANCELLED,
        ErrorKind::Timeout => ToolErrorKind::TIMEOUT,
        ErrorKind::Unavailable => ToolErrorKind::UNAVAILABLE,
        ErrorKind::PathChanged => ToolErrorKind::PATH_CHANGED,
        ErrorKind::Panic => ToolErrorKind::PANIC,
        ErrorKind::Internal => ToolErrorKind::INTERNAL,
        ErrorKind::Crashed => ToolErrorKind::CRASHED,
    }
}

/// The kind the ABI's number stands for; a number this host does not know is
/// [`ErrorKind::Failed`], as the ABI documents.
pub fn host_kind(kind: ToolErrorKind) -> ErrorKind {
    match kind {
        ToolErrorKind::INVALID_PARAMS => ErrorKind::InvalidParams,
        ToolErrorKind::BLOCKED => ErrorKind::Blocked,
        ToolErrorKind::DENIED => ErrorKind::Denied,
        ToolErrorKind::CANCELLED => ErrorKind::Cancelled,
        ToolErrorKind::TIMEOUT => ErrorKind::Timeout,
        ToolErrorKind::UNAVAILABLE => ErrorKind::Unavailable,
        ToolErrorKind::PATH_CHANGED => ErrorKind::PathChanged,
        ToolErrorKind::PANIC => ErrorKind::Panic,
        ToolErrorKind::INTERNAL => ErrorKind::Internal,
        ToolErrorKind::CRASHED => ErrorKind::Crashed,
        _ => ErrorKind::Failed,
    }
}

impl From<ToolError> for CallError {
    fn from(error: ToolError) -> Self {
        CallError::new(host_kind(error.kind), error.message.into_string())
    }
}

impl From<CallError> for ToolError {
    fn from(error: CallError) -> Self {
        ToolError::new(abi_kind(error.kind), error.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_crosses_and_comes_back_as_itself() {
        for number in 0..=u16::MAX {
            let kind = host_kind(ToolErrorKind(number));
            if abi_kind(kind) == ToolErrorKind(number) {
                continue;
            }
            assert_eq!(kind, ErrorKind::Failed, "{number} is not a known kind");
        }
        for kind in ErrorKind::ALL {
            assert_eq!(host_kind(abi_kind(kind)), kind);
            assert_eq!(abi_kind(kind).name(), kind.name());
        }
    }
}
