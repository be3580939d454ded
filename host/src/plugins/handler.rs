//! The seam between the host and a plugin's handlers, in Rust types.
//!
//! Everything the host asks of a handler goes through [`HandlerApi`], and everything a handler
//! may ask of the host during a call through [`CallServices`]. A library loaded into this
//! process implements the first and sees the second through the ABI adapter
//! ([`super::abi`], the only host code that knows the ABI's types); a plugin served by a worker
//! process implements the same traits over its channel. A call reaches a handler typed
//! ([`super::handler_call::HandlerCall`]); the adapter writes its JSON, once.

use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use super::handler_call::{HandlerCall, Ran, Watch};
use crate::error::CallError;
use serde_json::Value;
use tool_api::model::{
    ApprovalDecision, ApprovalRequest, AskReply, PathVerdict, ToolContent, ToolSpec,
};

/// A handler's specs that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{reason}")]
pub struct InvalidSpecs {
    /// What is wrong with them (the JSON parser's message).
    pub reason: String,
}

/// What the host asks of one handler.
pub trait HandlerApi: Send + Sync {
    /// The specs of the names it serves.
    fn specs(&self) -> Result<Vec<ToolSpec>, InvalidSpecs>;
    /// The short description that prefixes a call's result.
    fn describe(&self, call: &HandlerCall<'_>) -> String;
    /// Runs a complete call with this call's host services, and describes it.
    ///
    /// A handler in this process runs on the calling thread and marks its start and return
    /// on `watch` (the caller keeps `timeout`, and may give the call up: [`Ran::GivenUp`]); a
    /// handler in another process gives up after `timeout` itself, stopping the work
    /// ([`Ran::TimedOut`]).
    fn run(
        &self,
        call: &HandlerCall<'_>,
        services: &dyn CallServices,
        timeout: Duration,
        watch: &dyn Watch,
    ) -> Ran;
    /// Shows a call that is still streaming (UI events only).
    fn partial(&self, call: &HandlerCall<'_>, services: &dyn CallServices)
        -> Result<(), CallError>;
    /// A handler extension: `method` with a JSON payload, answered with JSON.
    fn extension(&self, method: &str, payload: &Value) -> Result<Value, CallError>;
}

/// An opened plugin: its handlers, and how to stop it.
pub trait OpenedPlugin: Send + Sync {
    /// The handlers, in the order the plugin built them.
    fn handlers(&self) -> &[Arc<dyn HandlerApi>];
    /// Stops the plugin's threads and runtimes.
    fn shutdown(&self);
    /// The process id of the worker serving it, when it runs isolated and one is running.
    fn worker_pid(&self) -> Option<u32> {
        None
    }
}

/// The verdict on a path nobody could judge (the host is gone, or did not answer): refused.
pub fn refused_verdict(path: &str) -> PathVerdict {
    PathVerdict {
        path: path.to_string(),
        absolute: String::new(),
        resolved: String::new(),
        inside_workspace: false,
        ignored: true,
        display: path.to_string(),
        refused: true,
        ignore_rule: None,
        leads_to: None,
        anchor: None,
    }
}

/// The host services of one call, as a handler may use them.
pub trait CallServices: Send + Sync {
    /// A UI event (`kind` is a Cline say type), possibly a partial update.
    fn say(&self, kind: &str, text: &str, partial: bool);
    /// Asks the user; `UNAVAILABLE` when nobody can answer. A partial ask is a preview whose
    /// answer is ignored.
    fn ask(&self, kind: &str, text: &str, partial: bool) -> Result<AskReply, CallError>;
    /// Applies the approval policy.
    fn request_approval(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, CallError>;
    /// The host's verdict on a path.
    fn check_path(&self, path: &str) -> PathVerdict;
    /// Records a read in the task's read cache; how many unchanged reads there have been.
    fn record_file_read(&self, absolute_path: &str, mtime_ms: u64) -> u32;
    /// Drops one path from the read cache, or every path when it is empty.
    fn forget_file_reads(&self, absolute_path: &str);
    /// The task's consecutive-mistake count.
    fn mistake_count(&self) -> u32;
    /// A setting by dotted key.
    fn setting(&self, key: &str) -> Option<Value>;
    /// A log record (`level` 1 error .. 5 trace).
    fn log(&self, level: u8, target: &str, message: &str);
    /// Whether the call was cancelled.
    fn is_cancelled(&self) -> bool;
    /// Waits up to `timeout_ms` for cancellation; whether it was cancelled.
    fn wait_cancelled(&self, timeout_ms: u64) -> bool;
    /// Calls another tool through the host's whole dispatch.
    fn invoke_tool(&self, name: &str, params_json: &str) -> Result<ToolContent, CallError>;
    /// A service added after v1.
    fn call_service(
        &self,
        service: &str,
        method: &str,
        payload: &Value,
    ) -> Result<Value, CallError>;
}

/// A cancellation flag a tool can poll or wait on.
#[derive(Debug, Default)]
pub struct Cancellation {
    cancelled: Mutex<bool>,
    changed: Condvar,
    /// Cancellations that end with this one ([`Cancellation::child`]).
    children: Mutex<Vec<Weak<Cancellation>>>,
}

impl Cancellation {
    /// Cancels; wakes every waiter, and cancels the children.
    pub fn cancel(&self) {
        *self
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = true;
        self.changed.notify_all();
        let children =
            std::mem::take(&mut *self.children.lock().unwrap_or_else(PoisonError::into_inner));
        for child in children.iter().filter_map(Weak::upgrade) {
            child.cancel();
        }
    }

    /// A cancellation of its own that is also cancelled when this one is (a nested call's,
    /// whose timeout must not cancel its caller).
    pub fn child(self: &Arc<Self>) -> Arc<Self> {
        let child = Arc::new(Self::default());
        let mut children = self.children.lock().unwrap_or_else(PoisonError::into_inner);
        if self.is_cancelled() {
            child.cancel();
        } else {
            children.retain(|c| c.strong_count() > 0);
            children.push(Arc::downgrade(&child));
        }
        child
    }

    /// Whether it was cancelled.
    pub fn is_cancelled(&self) -> bool {
        *self
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits up to `timeout`; returns whether it was cancelled.
    pub fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut cancelled = self
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while !*cancelled {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            cancelled = self
                .changed
                .wait_timeout(cancelled, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *cancelled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_ends_with_its_parent_but_not_the_other_way() {
        let parent = Arc::new(Cancellation::default());
        let first = parent.child();
        let second = parent.child();
        first.cancel();
        assert!(!parent.is_cancelled() && !second.is_cancelled());
        parent.cancel();
        assert!(second.is_cancelled());
        assert!(
            parent.child().is_cancelled(),
            "a child of a cancelled parent starts cancelled"
        );
    }
}
