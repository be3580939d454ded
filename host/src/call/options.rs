//! What a frontend gives one call ([`CallOptions`]): a cancellation it can trigger, a UI of the
//! call's own (progress, questions) and a [`CallScope`] to run on the call's thread.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use tool_api::model::McpInput;

use crate::plugins::handler::Cancellation;
use crate::ui::Ui;

/// What one call gets from the frontend that makes it.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Cancelling it cancels the call (the tool sees a cancellation of its own, a child of
    /// this one, so that the call's timeout does not cancel the frontend's).
    pub cancellation: Option<Arc<Cancellation>>,
    /// Where the call's UI events and questions go instead of the host's UI.
    pub ui: Option<Arc<dyn Ui>>,
    /// What runs around the call on its thread (and around the calls it makes).
    pub scope: CallScope,
    /// What the MCP client sent with the call (its capabilities; the answers to the tool's
    /// input requests of the round before), for the tool's task context.
    pub mcp: Option<McpInput>,
    /// Whether a result that needs input is the call's outcome, for a client that answers it
    /// itself (a 2026-07-28 MCP client), or is answered by the host
    /// ([`super::input_required`]; the default).
    pub input_relay: InputRelay,
}

/// Where a result that needs input goes: to the frontend's client, until the frontend stops
/// that while the call runs (its call became a task, whose client answers through the task),
/// or to the host. Whichever comes first wins: the frontend's stop or the tool's result.
#[derive(Clone, Default)]
pub struct InputRelay(Option<Arc<AtomicU8>>);

/// The relay is open.
const OPEN: u8 = 0;
/// A result that needs input took it: it goes to the client.
const TAKEN: u8 = 1;
/// The frontend stopped it: the host answers.
const STOPPED: u8 = 2;

impl InputRelay {
    /// Results that need input go to the client, until [`InputRelay::stop`].
    pub fn to_client() -> Self {
        Self(Some(Arc::new(AtomicU8::new(OPEN))))
    }

    /// The call's side, with a result that needs input: whether it goes to the client.
    pub(super) fn take(&self) -> bool {
        self.0.as_ref().is_some_and(|state| {
            matches!(
                state.compare_exchange(OPEN, TAKEN, Ordering::AcqRel, Ordering::Acquire),
                Ok(_) | Err(TAKEN)
            )
        })
    }

    /// The frontend's side: the host answers from now on; `false` when a result that needs
    /// input is on its way to the client already.
    pub fn stop(&self) -> bool {
        self.0.as_ref().is_none_or(|state| {
            matches!(
                state.compare_exchange(OPEN, STOPPED, Ordering::AcqRel, Ordering::Acquire),
                Ok(_) | Err(STOPPED)
            )
        })
    }
}

/// What a frontend runs around each call on the call's own thread: where it sets what
/// belongs to the call and is found by thread (the MCP frontend: which session the messages
/// logged during the call go to).
#[derive(Clone, Default)]
pub struct CallScope(Option<Arc<Around>>);

/// Runs the call it is given.
type Around = dyn Fn(&mut dyn FnMut()) + Send + Sync;

impl CallScope {
    /// A scope that runs each call inside `around` (which must run the call it is given).
    pub fn new(around: impl Fn(&mut dyn FnMut()) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(around)))
    }

    /// Runs `work` inside the scope; `None` if the scope did not run it.
    pub(super) fn in_scope<T>(&self, work: impl FnOnce() -> T) -> Option<T> {
        let Some(around) = &self.0 else {
            return Some(work());
        };
        let mut work = Some(work);
        let mut done = None;
        around(&mut || {
            if let Some(work) = work.take() {
                done = Some(work());
            }
        });
        done
    }
}

impl CallOptions {
    /// The cancellation the call runs under: a child of the frontend's, else a new one.
    pub(super) fn call_cancellation(&self) -> Arc<Cancellation> {
        self.cancellation
            .as_ref()
            .map_or_else(Arc::default, Cancellation::child)
    }
}

#[cfg(test)]
mod tests {
    use super::InputRelay;

    #[test]
    fn the_first_of_the_tool_and_the_frontend_decides_where_input_goes() {
        // Nothing relays: the host answers.
        assert!(!InputRelay::default().take());
        // The tool's result first: it goes to the client, and the frontend can no longer stop.
        let relay = InputRelay::to_client();
        assert!(relay.take());
        assert!(!relay.stop());
        assert!(relay.take());
        // The frontend first: the host answers every later result.
        let relay = InputRelay::to_client();
        assert!(relay.stop());
        assert!(!relay.take());
        assert!(relay.stop());
    }
}
