//! What a frontend gives one call ([`CallOptions`]): a cancellation it can trigger, a UI of the
//! call's own (progress, questions) and a [`CallScope`] to run on the call's thread.

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
    /// The frontend's client answers a result that needs input itself (a 2026-07-28 MCP
    /// client): such a result is the call's outcome. Otherwise the host answers it
    /// ([`super::input_required`]).
    pub relays_input_required: bool,
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
