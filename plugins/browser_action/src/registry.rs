//! The plugin's browser sessions, one per task, kept from `launch` to `close`.
//!
//! Handlers keep no per-call state; a browser that outlives one call is a process-level
//! service of the plugin, and this is its registry. Calls of one task take turns on their
//! session; different tasks have separate browsers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::session::BrowserSession;

/// One task's session, when it has one. The lock is held for a whole call.
pub type Slot = Arc<tokio::sync::Mutex<Option<BrowserSession>>>;

static SESSIONS: Mutex<BTreeMap<String, Slot>> = Mutex::new(BTreeMap::new());

/// The slot of `task_id`, created empty on first use.
pub fn slot(task_id: &str) -> Slot {
    SESSIONS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(task_id.to_string())
        .or_default()
        .clone()
}

/// Closes the session of `task_id`, if it has one: what the host should call before it runs
/// any other tool of that task (Cline closes the browser then). Waits for a running call of
/// the task to finish first.
pub async fn close_session(task_id: &str) {
    let slot = SESSIONS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(task_id)
        .cloned();
    if let Some(slot) = slot {
        if let Some(session) = slot.lock().await.take() {
            session.close(true).await;
        }
    }
}

/// Whether `task_id` has a browser open (a cheap check before closing it).
pub fn has_session(task_id: &str) -> bool {
    let slot = SESSIONS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(task_id)
        .cloned();
    slot.is_some_and(|slot| slot.try_lock().map_or(true, |held| held.is_some()))
}

/// Closes every session (for the plugin's shutdown). A session whose call is still running is
/// left to the runtime's shutdown, which drops its keeper task and so kills its browser.
pub async fn close_all() {
    let slots: Vec<Slot> =
        std::mem::take(&mut *SESSIONS.lock().unwrap_or_else(PoisonError::into_inner))
            .into_values()
            .collect();
    for slot in slots {
        let Ok(mut held) = slot.try_lock() else {
            continue;
        };
        if let Some(session) = held.take() {
            session.close(true).await;
        }
    }
}

/// Closes every session from a plain thread: the plugin's `shutdown` runs it before the
/// runtime stops.
pub fn shutdown() {
    let _ = tool_api::sdk::runtime::block_on(close_all());
}
