//! Panic containment: no panic may unwind out of a plugin (abi_stable would end the host).
//!
//! A caught panic's payload is dropped inside a guard of its own: a payload whose destructor
//! panics (`std::panic::panic_any` with such a value) would otherwise panic again, outside the
//! first `catch_unwind`, and that panic would cross the ABI. A payload of that second panic
//! is forgotten rather than dropped, so nothing can escape however the destructors misbehave.

use std::any::Any;
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
            let message = panic_message(payload.as_ref());
            drop_payload(payload);
            // A panic of the payload's destructor recorded its own location: not this one's.
            PANIC_LOCATION.with(|slot| slot.borrow_mut().take());
            Err(ToolError::new(
                ToolErrorKind::PANIC,
                format!("The tool panicked: {message}{at}"),
            ))
        }
    }
}

/// Runs `f`, containing any panic (for entry points with nothing to report, such as
/// `shutdown`, and for the host's side of the ABI); `None` when it panicked. Unlike [`guard`]
/// it leaves the panic hook alone.
pub fn contain<R>(f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Some(value),
        Err(payload) => {
            drop_payload(payload);
            None
        }
    }
}

/// Drops a caught panic's payload without letting a panic of its destructor escape: that
/// second panic is caught too, and its own payload forgotten (leaked), never dropped.
pub fn drop_payload(payload: Box<dyn Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A payload whose destructor panics with another such payload, `depth` times over.
    struct Bomb {
        depth: usize,
        drops: &'static AtomicUsize,
    }

    impl Drop for Bomb {
        fn drop(&mut self) {
            self.drops.fetch_add(1, Ordering::SeqCst);
            if self.depth > 0 {
                std::panic::panic_any(Bomb {
                    depth: self.depth - 1,
                    drops: self.drops,
                });
            }
        }
    }

    fn bomb(depth: usize, drops: &'static AtomicUsize) -> Result<(), ToolError> {
        std::panic::panic_any(Bomb { depth, drops })
    }

    /// Runs `f`, failing the test if a panic escapes it. The escaped payload is forgotten: the
    /// test harness would drop it outside any guard, and a thread lost that way hangs the run.
    fn no_escape<R>(f: impl FnOnce() -> R) -> R {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(value) => value,
            Err(payload) => {
                std::mem::forget(payload);
                panic!("a panic escaped the guard");
            }
        }
    }

    #[test]
    fn a_payload_whose_destructor_panics_stays_inside_the_guard() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        let error = no_escape(|| guard(|| bomb(1, &DROPS))).unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::PANIC);
        assert!(
            error
                .message
                .starts_with("The tool panicked: (a panic with a non-text payload)"),
            "{}",
            error.message
        );
        // The payload was dropped (its destructor ran, and panicked); the payload of that
        // second panic was forgotten.
        assert_eq!(DROPS.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_payload_of_a_second_panic_is_forgotten_not_dropped() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        // Dropping the second payload would panic a third time, outside every guard.
        let error = no_escape(|| guard(|| bomb(2, &DROPS))).unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::PANIC);
        assert_eq!(
            DROPS.load(Ordering::SeqCst),
            1,
            "only the first payload is dropped"
        );
    }

    #[test]
    fn contain_catches_panics_and_their_payloads() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        assert_eq!(contain(|| 7), Some(7));
        assert!(no_escape(|| contain(|| bomb(2, &DROPS))).is_none());
        assert!(contain(|| -> u8 { panic!("plain") }).is_none());
        assert_eq!(DROPS.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_text_panic_keeps_its_message() {
        let error = guard(|| -> Result<(), ToolError> { panic!("boom {}", 1) }).unwrap_err();
        assert!(
            error.message.starts_with("The tool panicked: boom 1 (at "),
            "{}",
            error.message
        );
    }
}
