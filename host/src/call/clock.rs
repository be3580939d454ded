//! When a call's handler started and whether it returned in time ([`HandlerClock`]), shared by
//! the call's thread and its caller, who keeps the timeout ([`super::pending`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::plugins::handler_call::Watch;

/// The handler has not started (or runs in another process, which keeps its own timeout).
const NOT_STARTED: u64 = 0;
/// The handler returned in time.
const RETURNED: u64 = u64::MAX - 1;
/// The caller gave the call up.
const ABANDONED: u64 = u64::MAX;

/// When a call's handler started, shared by the call's thread and its caller.
///
/// Its state goes from not started to started (once), then to returned or abandoned,
/// whichever comes first.
pub struct HandlerClock {
    origin: Instant,
    /// [`NOT_STARTED`], [`RETURNED`], [`ABANDONED`], or 1 + the nanoseconds from `origin` to
    /// the handler's start.
    state: AtomicU64,
    /// The call's description, written before the handler starts: a caller giving the call up
    /// answers with it without asking the (stuck) plugin.
    pub(super) description: OnceLock<String>,
}

impl HandlerClock {
    pub(super) fn new() -> Self {
        Self {
            origin: Instant::now(),
            state: AtomicU64::new(NOT_STARTED),
            description: OnceLock::new(),
        }
    }

    /// The handler is to run again (a path of the call changed after it was checked): its
    /// next start is timed afresh. `false` when the caller gave the call up.
    pub fn again(&self) -> bool {
        self.state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                (state != ABANDONED).then_some(NOT_STARTED)
            })
            .is_ok()
    }

    /// Whether the caller gave the call up.
    pub fn abandoned(&self) -> bool {
        self.state.load(Ordering::Acquire) == ABANDONED
    }

    /// When the running handler is due, `timeout` after its start; `None` when none runs.
    pub(super) fn due(&self, timeout: Duration) -> Option<Instant> {
        match self.state.load(Ordering::Acquire) {
            NOT_STARTED | RETURNED | ABANDONED => None,
            started => Some(self.origin + Duration::from_nanos(started - 1) + timeout),
        }
    }

    /// Gives the call up if its handler is still running past `timeout`; `false` when it is
    /// not (it returned, or it is not due yet).
    pub(super) fn abandon_if_overdue(&self, timeout: Duration) -> bool {
        self.state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| match state {
                NOT_STARTED | RETURNED | ABANDONED => None,
                started => {
                    let due = self.origin + Duration::from_nanos(started - 1) + timeout;
                    (Instant::now() >= due).then_some(ABANDONED)
                }
            })
            .is_ok()
    }
}

/// A handler in this process marks its start and return on its call's clock.
impl Watch for HandlerClock {
    /// The handler of the call `description` describes starts now.
    fn started(&self, description: &str) {
        let _ = self.description.set(description.to_string());
        let nanos = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let previous = self
            .state
            .swap(nanos.min(RETURNED - 2) + 1, Ordering::AcqRel);
        debug_assert_eq!(previous, NOT_STARTED, "a call's handler starts once");
    }

    /// The handler returned. `false` when the caller had given the call up: its outcome is
    /// no longer wanted.
    fn returned(&self) -> bool {
        self.state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                (state != ABANDONED).then_some(RETURNED)
            })
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handler_is_overdue_only_once_started_and_past_its_timeout() {
        let clock = HandlerClock::new();
        let timeout = Duration::from_millis(20);
        assert!(clock.due(timeout).is_none(), "not started");
        assert!(!clock.abandon_if_overdue(Duration::ZERO));
        clock.started("[tool]");
        let due = clock.due(timeout);
        assert!(due.is_some_and(|due| due > Instant::now()));
        assert!(!clock.abandon_if_overdue(timeout), "not due yet");
        std::thread::sleep(timeout);
        assert!(clock.abandon_if_overdue(timeout));
        assert!(clock.abandoned());
        assert!(!clock.returned(), "a late return is not wanted");
        assert!(clock.abandoned());
    }

    #[test]
    fn a_handler_that_returned_is_never_given_up() {
        let clock = HandlerClock::new();
        clock.started("[tool]");
        assert!(clock.returned());
        assert!(!clock.abandon_if_overdue(Duration::ZERO));
        assert!(!clock.abandoned());
        assert!(clock.due(Duration::ZERO).is_none());
    }
}
