//! Sessions other tools close: a handler whose spec says so (a browser) keeps a session for
//! the task, which the host closes with the `close_session` extension before any other tool
//! of the task runs — but only when that handler ran since its session was last closed.

use std::sync::{Arc, Mutex, PoisonError};

use crate::plugins::{Handler, RegisteredTool};

/// The handlers with a session that may be open.
#[derive(Default)]
pub struct Sessions {
    open: Mutex<Vec<Arc<Handler>>>,
}

impl Sessions {
    /// Before `tool` runs: the handlers whose sessions must close now (every open one but the
    /// tool's own).
    pub fn to_close_before(&self, tool: &RegisteredTool) -> Vec<Arc<Handler>> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (keep, close): (Vec<_>, Vec<_>) = open
            .drain(..)
            .partition(|handler| handler.id == tool.handler.id);
        *open = keep;
        close
    }

    /// `tool` is about to run, or has run: its session may be open from now on.
    pub fn mark_used(&self, tool: &RegisteredTool) {
        if !tool.spec.handling.closed_by_other_tools {
            return;
        }
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if !open.iter().any(|handler| handler.id == tool.handler.id) {
            open.push(tool.handler.clone());
        }
    }
}
