//! A `tools/call` running on its call thread, as the protocol's side waits for it
//! ([`RunningCall`]): its outcome, the questions it forwards ([`super::ask`]), the client's
//! cancellation and its timeout. A call that asks may outlive the request that started it: an
//! `InputRequiredResult` parks it until the client's retry ([`super::input_required`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ask::Question;
use super::progress::{CallProgress, LOOK};
use super::stdio as protocol_stdio;
use super::ui::ClientLink;
use crate::call::{CallOutcome, InputRelay, PendingCall};
use crate::plugins::handler::Cancellation;
use crate::Host;

/// A call started, and what its waiting needs.
pub struct RunningCall {
    pending: PendingCall,
    delivered: oneshot::Receiver<CallOutcome>,
    cancellation: Arc<Cancellation>,
    questions: UnboundedReceiver<Question>,
    host: Arc<Host>,
    /// Its progress, which says it is still running while it says nothing.
    progress: Option<Arc<CallProgress>>,
    /// When it may become a task, and what stops then.
    growing: Option<Growing>,
}

/// A call that becomes a task when it runs [`Growing::after`] without an end or a question.
pub struct Growing {
    /// How long the request waits before it hands the call over as a task.
    pub after: Duration,
    /// Its results that need input, which go to the task's client from then on.
    pub relay: InputRelay,
    /// Its log messages to the request, which end then.
    pub link: ClientLink,
}

/// How a wait ended.
pub enum Waited {
    /// The call's outcome.
    Done(CallOutcome),
    /// The call asks: it waits for the answer.
    Asks(RunningCall, Question),
    /// The call ran long: it is a task's from now on (it sends its request nothing more).
    Grown(RunningCall),
}

impl RunningCall {
    /// A call `pending` on `host` whose outcome `delivered` brings, cancelled by
    /// `cancellation`, asking through `questions`.
    pub fn new(
        pending: PendingCall,
        delivered: oneshot::Receiver<CallOutcome>,
        cancellation: Arc<Cancellation>,
        questions: UnboundedReceiver<Question>,
        host: Arc<Host>,
    ) -> Self {
        Self {
            pending,
            delivered,
            cancellation,
            questions,
            host,
            progress: None,
            growing: None,
        }
    }

    /// The same call, `progress` telling the client it is still running while it says
    /// nothing for [`super::progress::BEAT`].
    pub fn keeping_alive(self, progress: Option<Arc<CallProgress>>) -> Self {
        Self { progress, ..self }
    }

    /// The same call, becoming a task as `growing` says.
    pub fn growing(self, growing: Option<Growing>) -> Self {
        Self { growing, ..self }
    }

    /// Waits until the call ends, asks, or (when it may) grows into a task; `cancelled` (the
    /// current request's token) cancels it, and a handler past its timeout is given up.
    pub async fn wait(mut self, cancelled: &CancellationToken) -> Waited {
        let mut cancel_passed = false;
        let grown = tokio::time::sleep(self.growing.as_ref().map_or(Duration::MAX, |g| g.after));
        tokio::pin!(grown);
        let mut beats = tokio::time::interval(LOOK);
        beats.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let outcome = loop {
            tokio::select! {
                _ = beats.tick(), if self.progress.is_some() => {
                    if let Some(progress) = &self.progress {
                        progress.beat();
                    }
                }
                outcome = &mut self.delivered => {
                    break outcome.unwrap_or_else(|_| self.pending.lost());
                }
                Some(question) = self.questions.recv() => return Waited::Asks(self, question),
                () = &mut grown, if self.growing.is_some() => {
                    let Some(growing) = self.growing.take() else { continue };
                    // Unless a result that needs input is on its way to the request already.
                    if growing.relay.stop() {
                        growing.link.silence();
                        if let Some(progress) = self.progress.take() {
                            progress.silence();
                        }
                        return Waited::Grown(self);
                    }
                }
                () = cancelled.cancelled(), if !cancel_passed => {
                    self.cancellation.cancel();
                    cancel_passed = true;
                }
                () = tokio::time::sleep_until(self.pending.next_look().into()) => {
                    if let Some(outcome) = self.pending.give_up_if_overdue() {
                        // Also this call's questions to the user, which wait on this token.
                        self.cancellation.cancel();
                        break outcome;
                    }
                }
            }
        };
        let Self { pending, host, .. } = self;
        drop(pending);
        if Arc::strong_count(&host) == 1 {
            // The task ended during the call (its roots changed, its session closed). Ending
            // it tells its handlers (`task_ended`), which may block: not on the protocol's
            // thread.
            tokio::task::spawn_blocking(move || drop(host));
        }
        protocol_stdio::restore();
        Waited::Done(outcome)
    }
}
