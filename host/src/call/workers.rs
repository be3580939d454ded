//! The threads tool calls run on: idle threads are reused, a new one starts when none is idle.
//!
//! Each call runs on a thread of its own (the ABI is synchronous, and a call that outlives its
//! timeout is abandoned, not killed), but starting a thread costs more than a quick tool call,
//! so finished threads wait for the next call. A thread abandoned by a timeout simply rejoins
//! the pool if its call ever ends. A thread rejoins the pool before it hands over its result,
//! so a caller that calls again at once finds it idle instead of starting another.
//!
//! Handing a call to a sleeping thread and waking the caller for its result are two wake-ups of
//! 5–60 µs each on a shared machine, more than a quick tool call costs. So both sides poll for
//! a short while ([`SPIN`]) before they sleep: a thread that finished a call for the next one, a
//! caller for its result ([`Workers::wait_for`]). Calls that follow each other closely, and
//! results that come quickly, then pass without a wake-up. Polling only pays while the other
//! side is running: when the machine is busy, or calls come seconds apart, the polls come up
//! empty, and each kind of wait stops polling after a few misses, polling again only once in a
//! while to find out whether it pays again ([`Spin`]). The polls never yield the core: on
//! Linux's EEVDF scheduler every `sched_yield` pushes the thread's deadline back by a whole
//! slice, so a polling thread that yields starves behind busy processes.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tool_api::sdk::{drop_payload, panic_message};

/// Idle threads kept beyond this many exit instead of waiting.
const MAX_IDLE: usize = 16;

/// How long a waiting side polls before it sleeps: longer than the gap between two quick calls
/// in a row and than a quick tool's work, short enough to cost little when it is wasted.
pub const SPIN: Duration = Duration::from_micros(20);

/// Polls between two looks at the clock (a look costs about as much as a poll).
const POLLS_PER_CLOCK: u32 = 16;

/// Empty polls in a row after which a kind of wait stops polling.
const MISSES_TO_STOP: u32 = 4;

/// While stopped, one wait in this many polls anyway, to find out whether polling pays again.
const PROBE_EVERY: u32 = 16;

/// Sends a finished job's result.
type Delivery = Box<dyn FnOnce() + Send>;

/// A job: does the work and returns how to deliver its result.
type Task = Box<dyn FnOnce() -> Delivery + Send>;

/// A job, and the way back into the idle list for the thread that runs it. The idle list holds
/// an idle thread's only sender, so dropping the pool ends its idle threads.
struct Message {
    task: Task,
    mailbox: SyncSender<Message>,
}

/// A pool of reusable threads.
#[derive(Default)]
pub struct Workers {
    idle: Arc<Mutex<Vec<SyncSender<Message>>>>,
    /// How idle threads wait for their next call.
    idle_spin: Arc<Spin>,
    /// How callers wait for results.
    result_spin: Spin,
}

impl Workers {
    /// Runs `job` on an idle thread, or on a new one, and hands what it returns to `deliver`
    /// there, once the thread is back in the pool.
    pub fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
        deliver: impl FnOnce(T) + Send + 'static,
    ) -> std::io::Result<()> {
        let mut task: Task = Box::new(move || {
            let value = job();
            Box::new(move || deliver(value))
        });
        loop {
            let idle = self
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop();
            let Some(mailbox) = idle else { break };
            // Capacity 1 and only reachable while idle: the send never blocks.
            match mailbox.send(Message {
                task,
                mailbox: mailbox.clone(),
            }) {
                Ok(()) => return Ok(()),
                // That thread is gone; try the next one.
                Err(mpsc::SendError(returned)) => task = returned.task,
            }
        }
        let idle = Arc::downgrade(&self.idle);
        let spin = self.idle_spin.clone();
        let (mailbox, receiver) = mpsc::sync_channel::<Message>(1);
        std::thread::Builder::new()
            .name("tool-call".to_string())
            .spawn(move || {
                let mut next = Some(Message { task, mailbox });
                while let Some(Message { task, mailbox }) = next.take() {
                    // Host code around the plugin call; plugins contain their own panics.
                    let delivery = catch_unwind(AssertUnwindSafe(task))
                        .map_err(|panic| {
                            let message = panic_message(panic.as_ref());
                            tracing::error!(target: "toolhost::call", "the host's code panicked on a call thread: {message}");
                            drop_payload(panic);
                        })
                        .ok();
                    // Offer this thread for the next call, unless the pool is gone or full.
                    let offered = idle.upgrade().is_some_and(|idle| {
                        let mut list = idle.lock().unwrap_or_else(PoisonError::into_inner);
                        let room = list.len() < MAX_IDLE;
                        if room {
                            list.push(mailbox);
                        }
                        room
                    });
                    if let Some(delivery) = delivery {
                        let _ = catch_unwind(AssertUnwindSafe(delivery));
                    }
                    if !offered {
                        return;
                    }
                    next = match spin.poll(&receiver, SPIN) {
                        Poll::Ready(message) => Some(message),
                        Poll::Pending => receiver.recv().ok(),
                        Poll::Closed => None,
                    };
                }
            })
            .map(|_| ())
    }

    /// Waits up to `timeout` for the one message of `receiver` (a call's result), polling
    /// first while that pays.
    pub fn wait_for<T>(
        &self,
        receiver: &Receiver<T>,
        timeout: Duration,
    ) -> Result<T, RecvTimeoutError> {
        let started = Instant::now();
        match self.result_spin.poll(receiver, SPIN.min(timeout)) {
            Poll::Ready(message) => Ok(message),
            Poll::Closed => Err(RecvTimeoutError::Disconnected),
            Poll::Pending => receiver.recv_timeout(timeout.saturating_sub(started.elapsed())),
        }
    }
}

enum Poll<T> {
    Ready(T),
    Pending,
    Closed,
}

/// Whether one kind of wait polls: yes until [`MISSES_TO_STOP`] polls in a row came up empty,
/// then only every [`PROBE_EVERY`]th wait, until a poll succeeds again.
#[derive(Default)]
struct Spin {
    misses: AtomicU32,
    waits: AtomicU32,
}

impl Spin {
    /// Polls `receiver` for up to `spin` when polling pays (looking at the clock every
    /// [`POLLS_PER_CLOCK`] polls); otherwise looks once.
    fn poll<T>(&self, receiver: &Receiver<T>, spin: Duration) -> Poll<T> {
        let polling = self.misses.load(Ordering::Relaxed) < MISSES_TO_STOP
            || self.waits.fetch_add(1, Ordering::Relaxed) % PROBE_EVERY == PROBE_EVERY - 1;
        let deadline = Instant::now() + if polling { spin } else { Duration::ZERO };
        loop {
            for _ in 0..POLLS_PER_CLOCK {
                match receiver.try_recv() {
                    Ok(message) => {
                        self.misses.store(0, Ordering::Relaxed);
                        return Poll::Ready(message);
                    }
                    Err(TryRecvError::Disconnected) => return Poll::Closed,
                    Err(TryRecvError::Empty) if !polling => return Poll::Pending,
                    Err(TryRecvError::Empty) => std::hint::spin_loop(),
                }
            }
            if Instant::now() >= deadline {
                let _ = self
                    .misses
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |m| {
                        Some(m.saturating_add(1))
                    });
                return Poll::Pending;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deliver_to<T: Send>(sender: SyncSender<T>) -> impl FnOnce(T) + Send {
        move |value| {
            let _ = sender.send(value);
        }
    }

    fn idle_count(workers: &Workers) -> usize {
        workers.idle.lock().map(|l| l.len()).unwrap_or_default()
    }

    #[test]
    fn threads_are_reused() {
        let workers = Workers::default();
        let mut threads = Vec::new();
        for _ in 0..5 {
            let (sender, receiver) = mpsc::sync_channel(1);
            workers
                .run(|| std::thread::current().id(), deliver_to(sender))
                .unwrap_or_default();
            // The thread was back in the pool before it answered: no pause needed.
            threads.extend(receiver.recv());
            assert_eq!(idle_count(&workers), 1);
        }
        threads.dedup();
        assert_eq!(threads.len(), 1, "one thread served all five jobs");
    }

    #[test]
    fn a_busy_thread_is_not_given_a_second_job() {
        let workers = Workers::default();
        let (release, released) = mpsc::channel::<()>();
        let (first, first_result) = mpsc::sync_channel(1);
        workers
            .run(
                move || {
                    let _ = released.recv();
                    std::thread::current().id()
                },
                deliver_to(first),
            )
            .unwrap_or_default();
        let (second, second_result) = mpsc::sync_channel(1);
        workers
            .run(|| std::thread::current().id(), deliver_to(second))
            .unwrap_or_default();
        // Queued behind the first job, it would never come.
        let second = second_result.recv_timeout(Duration::from_secs(30));
        let _ = release.send(());
        let first = first_result.recv_timeout(Duration::from_secs(30));
        assert!(second.is_ok() && first.is_ok());
        assert_ne!(first, second);
    }

    #[test]
    fn idle_threads_end_with_the_pool() {
        /// Reports the end of the thread that holds it.
        struct OnExit(mpsc::Sender<()>);
        impl Drop for OnExit {
            fn drop(&mut self) {
                let _ = self.0.send(());
            }
        }
        use std::cell::RefCell;
        thread_local! {
            static ON_EXIT: RefCell<Option<OnExit>> = const { RefCell::new(None) };
        }
        let workers = Workers::default();
        let (exited, exited_receiver) = mpsc::channel();
        let (sender, receiver) = mpsc::sync_channel(1);
        workers
            .run(
                move || ON_EXIT.with(|slot| *slot.borrow_mut() = Some(OnExit(exited))),
                deliver_to(sender),
            )
            .unwrap_or_default();
        assert_eq!(receiver.recv(), Ok(()));
        drop(workers);
        // The idle thread held no sender of its own mailbox: it closed with the pool.
        assert_eq!(
            exited_receiver.recv_timeout(Duration::from_secs(30)),
            Ok(())
        );
    }

    #[test]
    fn a_result_after_the_spin_still_arrives_and_a_missing_one_times_out() {
        let workers = Workers::default();
        let (sender, receiver) = mpsc::sync_channel(1);
        std::thread::spawn(move || {
            std::thread::sleep(SPIN * 20);
            let _ = sender.send(7);
        });
        assert_eq!(workers.wait_for(&receiver, Duration::from_secs(10)), Ok(7));
        assert_eq!(
            workers.wait_for(&receiver, Duration::from_millis(1)),
            Err(RecvTimeoutError::Disconnected)
        );
        let (_sender, receiver) = mpsc::sync_channel::<i32>(1);
        assert_eq!(
            workers.wait_for(&receiver, Duration::from_millis(1)),
            Err(RecvTimeoutError::Timeout)
        );
    }

    #[test]
    fn polling_stops_after_misses_and_resumes_after_a_hit() {
        let spin = Spin::default();
        let (sender, receiver) = mpsc::sync_channel(1);
        let misses = |spin: &Spin| spin.misses.load(Ordering::Relaxed);
        for _ in 0..MISSES_TO_STOP {
            assert!(matches!(
                spin.poll(&receiver, Duration::from_micros(1)),
                Poll::Pending
            ));
        }
        assert_eq!(misses(&spin), MISSES_TO_STOP);
        // Stopped: the next waits look once (a poll would count one more miss) ...
        for _ in 0..PROBE_EVERY - 1 {
            assert!(matches!(
                spin.poll(&receiver, Duration::from_micros(1)),
                Poll::Pending
            ));
        }
        assert_eq!(misses(&spin), MISSES_TO_STOP);
        // ... but one in PROBE_EVERY polls.
        assert!(matches!(
            spin.poll(&receiver, Duration::from_micros(1)),
            Poll::Pending
        ));
        assert_eq!(misses(&spin), MISSES_TO_STOP + 1);
        let _ = sender.send(());
        assert!(matches!(
            spin.poll(&receiver, Duration::from_micros(1)),
            Poll::Ready(())
        ));
        assert_eq!(misses(&spin), 0);
    }
}
