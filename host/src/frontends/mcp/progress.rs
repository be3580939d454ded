//! A call's `notifications/progress` ([`CallProgress`]): its events as they come, and, while it
//! says nothing, a message every [`BEAT`] so that a client that resets its request timeout on
//! progress keeps waiting for a long call. One sender per call writes them in the order they
//! were numbered, so the numbers the client reads only grow.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use rmcp::RoleServer;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

/// How long a call may say nothing before a message says it is still running.
pub const BEAT: Duration = Duration::from_secs(1);

/// How often the waiting request looks whether the call has been quiet for [`BEAT`].
pub const LOOK: Duration = Duration::from_millis(250);

/// A message, and who waits until it is written.
type Queued = (
    ProgressNotificationParam,
    Option<std::sync::mpsc::SyncSender<()>>,
);

/// The progress messages of one call that has a `progressToken`.
pub struct CallProgress {
    token: ProgressToken,
    /// The last number given, and when it was given.
    last: Mutex<(f64, Instant)>,
    started: Instant,
    queue: UnboundedSender<Queued>,
    /// Its request was answered (its call became a task): nothing more is sent.
    silenced: std::sync::atomic::AtomicBool,
}

impl CallProgress {
    /// Progress with `token`, written to `peer` on the runtime of `handle`.
    pub fn new(
        token: ProgressToken,
        peer: Peer<RoleServer>,
        handle: &tokio::runtime::Handle,
    ) -> Arc<Self> {
        let (queue, mut queued) = unbounded_channel::<Queued>();
        handle.spawn(async move {
            while let Some((param, written)) = queued.recv().await {
                if let Err(e) = peer.notify_progress(param).await {
                    tracing::debug!(target: "toolhost::mcp", "progress not sent: {e}");
                }
                if let Some(written) = written {
                    let _ = written.send(());
                }
            }
        });
        Arc::new(Self {
            token,
            last: Mutex::new((0.0, Instant::now())),
            started: Instant::now(),
            queue,
            silenced: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Queues `message` with the next number (or `at`, of `total`, as the tool said);
    /// `wait`: returns once it is written (a call's event reaches the client before the
    /// call's result).
    fn send(&self, message: String, at: Option<(f64, Option<f64>)>, wait: bool) {
        if self.silenced.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        let (written, done) = std::sync::mpsc::sync_channel(1);
        {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            let (progress, total) = at.unwrap_or((last.0 + 1.0, None));
            last.0 = progress;
            last.1 = Instant::now();
            let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
            param.total = total;
            param.message = Some(message);
            let _ = self.queue.send((param, wait.then_some(written)));
        }
        if wait {
            let _ = done.recv();
        }
    }

    /// Sends nothing more: the request was answered.
    pub fn silence(&self) {
        self.silenced
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// A call's event, from its thread: written before this returns.
    pub fn event(&self, message: String) {
        self.send(message, None, true);
    }

    /// Where the tool says it is: `progress` of `total`, from its thread (written before this
    /// returns). Its own numbers; the events after it count on from them.
    pub fn report(&self, progress: f64, total: Option<f64>, message: String) {
        self.send(message, Some((progress, total)), true);
    }

    /// From the waiting request: if the call said nothing for [`BEAT`], a message that it is
    /// still running.
    pub fn beat(&self) {
        let quiet = self
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1
            .elapsed();
        if quiet >= BEAT {
            let running = self.started.elapsed().as_secs();
            self.send(format!("still running ({running} s)"), None, false);
        }
    }
}
