//! Panic containment: no panic may unwind out of a plugin (abi_stable would end the host).

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::abi::{ToolError, ToolErrorKind};

/// Runs `f`, turning a panic into a `PANIC` tool error.
pub fn guard<R>(f: impl FnOnce() -> Result<R, ToolError>) -> Result<R, ToolError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(ToolError::new(
            ToolErrorKind::PANIC,
            format!("The tool panicked: {}", panic_message(payload.as_ref())),
        )),
    }
}

/// The message carried by a panic payload (`&str` or `String`), or a placeholder.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic with a non-text payload)".to_string()
    }
}
