//! Panic containment: no panic may unwind out of a plugin (abi_stable would end the host).

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use crate::abi::{ToolError, ToolErrorKind};

thread_local! {
    /// Where the last panic on this thread happened, recorded by the plugin's panic hook.
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Replaces the plugin's panic hook (each library image has its own) with one that records the
/// location instead of printing: the host reports the panic as a tool error and logs it.
fn install_quiet_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()));
            PANIC_LOCATION.with(|slot| *slot.borrow_mut() = location);
        }));
    });
}

/// Runs `f`, turning a panic into a `PANIC` tool error.
pub fn guard<R>(f: impl FnOnce() -> Result<R, ToolError>) -> Result<R, ToolError> {
    install_quiet_hook();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let location = PANIC_LOCATION.with(|slot| slot.borrow_mut().take());
            let at = location.map(|l| format!(" (at {l})")).unwrap_or_default();
            Err(ToolError::new(
                ToolErrorKind::PANIC,
                format!("The tool panicked: {}{at}", panic_message(payload.as_ref())),
            ))
        }
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
