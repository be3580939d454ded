//! Plain data that crosses the boundary: calls, outputs and errors.

use abi_stable::{
    std_types::{RStr, RString},
    StableAbi,
};

/// One tool call as the host hands it to a handler. Everything is borrowed for the call.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// The name the tool was called by (a handler may serve several).
    pub tool_name: RStr<'a>,
    /// The call's id (from the model, or made up by the host).
    pub call_id: RStr<'a>,
    /// The parameters: a JSON object. Values are usually strings, as Cline sends them.
    pub params_json: RStr<'a>,
    /// The task context: a JSON `TaskContext`.
    pub context_json: RStr<'a>,
}

/// What a successful call returns: a JSON `ToolContent` (text and image blocks).
#[repr(C)]
#[derive(StableAbi, Debug, Clone)]
pub struct ToolOutput {
    /// JSON `ToolContent`.
    pub content_json: RString,
}

/// Why a call failed. The host turns it into the text the model reads.
#[repr(C)]
#[derive(StableAbi, Debug, Clone)]
pub struct ToolError {
    /// The class of failure; decides how the model sees it and whether it counts as a mistake.
    pub kind: ToolErrorKind,
    /// The message for the model (without the "tool execution failed" wrapper).
    pub message: RString,
}

/// The class of a [`ToolError`]. A transparent integer with named constants, so that new kinds
/// can be added without changing the layout; unknown kinds are treated as [`Self::FAILED`].
#[repr(transparent)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolErrorKind(pub u16);

impl ToolErrorKind {
    /// A required parameter is missing or a parameter is malformed. Counts as a mistake.
    pub const INVALID_PARAMS: Self = Self(1);
    /// The tool ran and failed (file not found, no match). Counts as a mistake.
    pub const FAILED: Self = Self(2);
    /// A policy refused the call (.clineignore, command permissions). Not a mistake.
    pub const BLOCKED: Self = Self(3);
    /// The user (or the approval policy) denied the call. The message is shown as it is.
    pub const DENIED: Self = Self(4);
    /// The call was cancelled.
    pub const CANCELLED: Self = Self(5);
    /// The call ran out of time.
    pub const TIMEOUT: Self = Self(6);
    /// A host service the tool needs is not available (no user to ask, no model configured).
    pub const UNAVAILABLE: Self = Self(7);
    /// A path changed after the host checked it (a directory on the way replaced, or made a
    /// symbolic link): the tool reached nothing through it and did nothing. The host checks
    /// the path again and asks again where it must. Not a mistake.
    pub const PATH_CHANGED: Self = Self(8);
    /// The tool panicked. The host disables the plugin.
    pub const PANIC: Self = Self(100);
    /// A bug or broken invariant in the plugin or the host.
    pub const INTERNAL: Self = Self(101);
    /// The plugin's worker process ended during the call (a crash, a limit, a panic); the host
    /// starts a fresh one for the next call.
    pub const CRASHED: Self = Self(102);

    /// Whether the model's consecutive-mistake counter goes up for this kind.
    pub fn is_mistake(self) -> bool {
        self == Self::INVALID_PARAMS || self == Self::FAILED
    }

    /// A short lower-case name for logs and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Self::INVALID_PARAMS => "invalid_params",
            Self::FAILED => "failed",
            Self::BLOCKED => "blocked",
            Self::DENIED => "denied",
            Self::CANCELLED => "cancelled",
            Self::TIMEOUT => "timeout",
            Self::UNAVAILABLE => "unavailable",
            Self::PATH_CHANGED => "path_changed",
            Self::PANIC => "panic",
            Self::INTERNAL => "internal",
            Self::CRASHED => "crashed",
            _ => "failed",
        }
    }
}

impl ToolError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: RString::from(message.into()),
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for ToolError {}
