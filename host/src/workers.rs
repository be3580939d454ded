//! The threads tool calls run on: idle threads are reused, a new one starts when none is idle.
//!
//! Each call runs on a thread of its own (the ABI is synchronous, and a call that outlives its
//! timeout is abandoned, not killed), but starting a thread costs more than a quick tool call,
//! so finished threads wait for the next call. A thread abandoned by a timeout simply rejoins
//! the pool if its call ever ends.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};

/// A unit of work.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// Idle threads kept beyond this many exit instead of waiting.
const MAX_IDLE: usize = 16;

/// A pool of reusable threads.
#[derive(Default)]
pub struct Workers {
    idle: Arc<Mutex<Vec<Sender<Job>>>>,
}

impl Workers {
    /// Runs `job` on an idle thread, or on a new one.
    pub fn run(&self, job: Job) -> std::io::Result<()> {
        let mut job = job;
        loop {
            let idle = self
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop();
            match idle {
                Some(worker) => match worker.send(job) {
                    Ok(()) => return Ok(()),
                    // That thread is gone; try the next one.
                    Err(mpsc::SendError(returned)) => job = returned,
                },
                None => break,
            }
        }
        let idle = Arc::downgrade(&self.idle);
        std::thread::Builder::new()
            .name("tool-call".to_string())
            .spawn(move || {
                let mut next = Some(job);
                while let Some(job) = next.take() {
                    // Host code around the plugin call; plugins contain their own panics.
                    let _ = catch_unwind(AssertUnwindSafe(job));
                    // Offer this thread for the next call, unless the pool is gone or full.
                    let Some(idle) = idle.upgrade() else { return };
                    let (sender, receiver) = mpsc::channel();
                    {
                        let mut list = idle.lock().unwrap_or_else(PoisonError::into_inner);
                        if list.len() >= MAX_IDLE {
                            return;
                        }
                        list.push(sender);
                    }
                    drop(idle);
                    next = receiver.recv().ok();
                }
            })
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_reused() {
        let workers = Workers::default();
        let (sender, receiver) = mpsc::channel();
        for _ in 0..5 {
            let sender = sender.clone();
            let job: Job = Box::new(move || {
                let _ = sender.send(std::thread::current().id());
            });
            workers.run(job).unwrap_or_default();
            // Wait for the job, then give the thread a moment to become idle again.
            let _ = receiver.recv();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        drop(sender);
        let idle = workers.idle.lock().map(|l| l.len()).unwrap_or_default();
        assert_eq!(idle, 1, "one thread served all five jobs");
    }
}
