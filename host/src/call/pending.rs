//! A call running on a thread of its own, and how its caller waits for it.
//!
//! [`Host::start_call`] runs the whole call (checks, approval, hooks, the handler, the outcome)
//! on one thread of the host's pool ([`super::workers`]): a call passes from the caller's
//! thread to that one and back, and nothing else. The outcome comes
//! through the delivery the caller gave; the caller keeps the call's timeout with the
//! [`PendingCall`] it got back:
//!
//! - the call's thread marks on a [`HandlerClock`] when the handler starts and when it returns;
//! - a caller without an outcome `timeout` after the start gives the call up
//!   ([`PendingCall::give_up_if_overdue`]): the tool sees its cancellation and the caller gets
//!   the timeout error at once. The thread is abandoned: should the handler ever return, the
//!   call stops there, its outcome is dropped and the thread rejoins the pool.
//!
//! Whichever of the two comes first (the handler's return, the caller giving up) decides, in
//! one atomic step.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{CallError, ErrorKind};

use super::arguments::Arguments;
use super::clock::HandlerClock;
use super::host::Host;
use super::options::CallOptions;
use super::outcome::CallOutcome;
use super::services::{self, Cancellation};
use super::workers::Workers;
use super::{flow, run};
use crate::plugins::RegisteredTool;

impl Host {
    /// Starts one tool call from the model of `tool` (from [`Host::lookup`]) on a thread of
    /// its own and returns at once; `deliver` gets its outcome there, unless the caller gave
    /// the call up first ([`PendingCall::give_up_if_overdue`]). `Err`: the call could not
    /// start (no thread, the host ending), with its outcome.
    pub fn start_call(
        &self,
        tool: &Arc<RegisteredTool>,
        arguments: impl Into<Arguments>,
        options: &CallOptions,
        deliver: impl FnOnce(CallOutcome) + Send + 'static,
    ) -> Result<PendingCall, Box<CallOutcome>> {
        self.start_run(tool, arguments.into(), 0, false, options, deliver)
    }

    /// Runs a call on a thread of its own and waits here for its outcome.
    pub(super) fn call_and_wait(
        &self,
        tool: &Arc<RegisteredTool>,
        arguments: Arguments,
        depth: u32,
        subagent: bool,
        options: &CallOptions,
    ) -> CallOutcome {
        // One outcome, never waiting for room: a call given up still delivers without blocking.
        let (sender, receiver) = mpsc::sync_channel(1);
        let deliver = move |outcome| {
            let _ = sender.send(outcome);
        };
        match self.start_run(tool, arguments, depth, subagent, options, deliver) {
            Ok(pending) => pending.wait(&self.workers, &receiver),
            Err(outcome) => *outcome,
        }
    }

    /// Starts the call of `tool` on a thread of the pool: the host's steps before and after
    /// the handler hold the host, the handler between them does not (a call given up while
    /// its handler runs must not keep the task alive).
    fn start_run(
        &self,
        tool: &Arc<RegisteredTool>,
        arguments: Arguments,
        depth: u32,
        subagent: bool,
        options: &CallOptions,
        deliver: impl FnOnce(CallOutcome) + Send + 'static,
    ) -> Result<PendingCall, Box<CallOutcome>> {
        let name = tool.spec.name.as_str();
        let Some(me) = self.me.upgrade() else {
            return Err(Box::new(self.not_run(name, services::host_gone())));
        };
        // The call's own cancellation: giving the call up cancels it, not the frontend's.
        let cancellation = options.call_cancellation();
        let options = options.clone();
        let pending = PendingCall::new(me, tool.clone(), cancellation.clone());
        let clock = pending.clock();
        let host = self.me.clone();
        let tool = tool.clone();
        let job = move || {
            let scope = options.scope.clone();
            let call = flow::Call {
                tool,
                arguments,
                depth,
                subagent,
                options,
                cancellation,
            };
            scope.in_scope(|| call.run(&host, &clock)).flatten()
        };
        let delivery = move |outcome: Option<CallOutcome>| {
            if let Some(outcome) = outcome {
                deliver(outcome);
            }
        };
        match self.workers.run(job, delivery) {
            Ok(()) => Ok(pending),
            Err(e) => Err(Box::new(self.not_run(
                name,
                CallError::new(
                    ErrorKind::Internal,
                    format!("cannot start a thread for the call: {e}"),
                ),
            ))),
        }
    }
}

/// A call started on its own thread, as its caller sees it while waiting for the outcome.
#[must_use = "dropping a pending call gives up keeping its timeout"]
pub struct PendingCall {
    clock: Arc<HandlerClock>,
    timeout: Duration,
    /// The call's own cancellation (a child of the frontend's).
    cancellation: Arc<Cancellation>,
    host: Arc<Host>,
    tool: Arc<RegisteredTool>,
}

impl PendingCall {
    /// A call of `tool` with `params_json` about to start on `host` under `cancellation`;
    /// its clock is what the call's thread marks.
    pub(super) fn new(
        host: Arc<Host>,
        tool: Arc<RegisteredTool>,
        cancellation: Arc<Cancellation>,
    ) -> Self {
        Self {
            timeout: host.settings.limits.call_timeout(),
            clock: Arc::new(HandlerClock::new()),
            cancellation,
            host,
            tool,
        }
    }

    /// The clock the call's thread marks.
    pub(super) fn clock(&self) -> Arc<HandlerClock> {
        self.clock.clone()
    }

    /// When the caller should look again whether the call is overdue: when its handler is
    /// due, or, while none runs, a timeout from now (a handler starting later is due later).
    pub fn next_look(&self) -> Instant {
        self.clock
            .due(self.timeout)
            .unwrap_or_else(|| Instant::now() + self.timeout)
    }

    /// The timeout's outcome if the call's handler is past its timeout (the call is given up:
    /// the tool sees its cancellation); `None` while the call may still end in time.
    pub fn give_up_if_overdue(&self) -> Option<CallOutcome> {
        if !self.clock.abandon_if_overdue(self.timeout) {
            return None;
        }
        self.cancellation.cancel();
        // As after any run: another tool may have closed the session this call opened.
        self.host.sessions.mark_used(&self.tool);
        let name = self.tool.spec.name.as_str();
        let description =
            (self.clock.description.get().cloned()).unwrap_or_else(|| format!("[{name}]"));
        Some(
            self.host
                .finish(name, description, Err(run::timed_out(self.timeout)), None),
        )
    }

    /// Waits on this thread for the outcome `receiver` brings, giving the call up when it is
    /// overdue. `workers` polls first while that pays ([`Workers::wait_for`]).
    pub fn wait(&self, workers: &Workers, receiver: &Receiver<CallOutcome>) -> CallOutcome {
        loop {
            let wait = self.next_look().saturating_duration_since(Instant::now());
            match workers.wait_for(receiver, wait) {
                Ok(outcome) => return outcome,
                Err(RecvTimeoutError::Timeout) => {
                    if let Some(outcome) = self.give_up_if_overdue() {
                        return outcome;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return self.lost(),
            }
        }
    }

    /// The outcome of a call whose thread ended without one (a bug in the host's code
    /// around the handler, which the thread contained).
    pub fn lost(&self) -> CallOutcome {
        self.host.not_run(
            &self.tool.spec.name,
            CallError::new(
                ErrorKind::Internal,
                "The call's thread ended without a result.",
            ),
        )
    }
}
