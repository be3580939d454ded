//! The host's side of one running worker: requests out, answers and service requests in, and
//! what happens when the worker ends.
//!
//! A reader thread routes each message to the call it belongs to. The thread that runs a call
//! waits for that call's messages, answers its service requests with the call's own
//! `CallServices` (so a plugin in a worker sees exactly the services an in-process one does)
//! and returns its result. When the worker ends — a crash, a limit, a broken channel, or the
//! host stopping it — every call in flight gets an error that says so.

use std::collections::HashMap;
use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error::{CallError, ErrorKind};
use serde_json::Value;
use tool_api::model::ToolSpec;

use super::process::{self, Launch, Output};
use super::protocol::{
    read_frame, write_frame, FromWorker, Op, ServiceRequest, ToWorker, WireCall, WireError,
};
use crate::plugins::abi::library::Manifest;
use crate::plugins::error::LoadError;
use crate::plugins::handler::InvalidSpecs;
use crate::plugins::{CallServices, HandlerCall};

/// How long a worker may take to load its library and answer.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// How often a waiting call looks at its cancellation.
const CANCEL_POLL: Duration = Duration::from_millis(10);

/// How long a cancelled call may take to end by itself before its worker is stopped.
const CANCEL_GRACE: Duration = Duration::from_millis(200);

/// How long a crash report waits for the worker's last words.
const LAST_WORDS_WAIT: Duration = Duration::from_millis(200);

/// How a worker ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// In a few words: `SIGSEGV`, `exit code 3`.
    pub how: String,
    /// The last line it wrote to standard error.
    pub last_words: Option<String>,
    /// Why the host stopped it (`None`: it ended by itself, a crash).
    pub stopped: Option<String>,
}

impl Ending {
    /// Whether it counts as a crash.
    pub fn is_crash(&self) -> bool {
        self.stopped.is_none()
    }
}

/// A message for one waiting call.
enum Incoming {
    Service { id: u64, request: ServiceRequest },
    Done(Result<Value, WireError>),
    Ended(Ending),
}

/// Who waits for what, and what happens when the worker ends.
#[derive(Default)]
struct Routes {
    waiting: HashMap<u64, Sender<Incoming>>,
    ended: Option<Ending>,
    on_end: Option<EndHook>,
}

/// What runs once a worker has ended.
type EndHook = Box<dyn FnOnce(&Ending) + Send>;

/// A running worker.
pub struct Connection {
    pid: u32,
    plugin: String,
    writer: Mutex<UnixStream>,
    routes: Mutex<Routes>,
    next_id: AtomicU64,
    child: Mutex<Option<Child>>,
    stopping: Mutex<Option<String>>,
}

/// What a worker reported when it had loaded its library.
pub struct Ready {
    /// The plugin's manifest.
    pub manifest: Manifest,
    /// Each handler's specs (or why they do not parse).
    pub specs: Vec<Result<Vec<ToolSpec>, InvalidSpecs>>,
}

impl Connection {
    /// Starts a worker and waits for it to load its library.
    pub fn start(launch: &Launch) -> Result<(Arc<Self>, Ready), LoadError> {
        let worker_failed = |e: &dyn std::fmt::Display| LoadError::Worker(e.to_string());
        let started = process::start(launch).map_err(|e| {
            worker_failed(&format!("cannot start {}: {e}", launch.program.display()))
        })?;
        let mut child = started.child;
        let channel = started.channel;
        let output = started.output;
        let mut reader = BufReader::new(channel.try_clone().map_err(|e| worker_failed(&e))?);
        let _ = channel.set_read_timeout(Some(READY_TIMEOUT));
        let first = read_frame::<FromWorker>(&mut reader);
        let _ = channel.set_read_timeout(None);
        let ready = match first {
            Ok(Some(FromWorker::Ready { manifest, specs })) => Ready { manifest, specs },
            other => {
                process::kill_group(&child);
                let status = child.wait();
                return Err(match other {
                    Ok(Some(FromWorker::Refused { error })) => error,
                    Err(e)
                        if e.kind() == std::io::ErrorKind::WouldBlock
                            || e.kind() == std::io::ErrorKind::TimedOut =>
                    {
                        worker_failed(&format!(
                            "it did not load the library within {} s",
                            READY_TIMEOUT.as_secs()
                        ))
                    }
                    _ => {
                        let how = status.map_or_else(|e| e.to_string(), process::how_it_ended);
                        let words = output
                            .last_words(LAST_WORDS_WAIT)
                            .map(|w| format!(": {w}"))
                            .unwrap_or_default();
                        worker_failed(&format!(
                            "it ended ({how}) before it loaded the library{words}"
                        ))
                    }
                });
            }
        };
        let connection = Arc::new(Self {
            pid: child.id(),
            plugin: ready.manifest.name.clone(),
            writer: Mutex::new(channel),
            routes: Mutex::default(),
            next_id: AtomicU64::new(1),
            child: Mutex::new(Some(child)),
            stopping: Mutex::new(None),
        });
        let reading = connection.clone();
        std::thread::Builder::new()
            .name(format!("worker-{}", connection.pid))
            .spawn(move || {
                reading.read(&mut reader);
                reading.end(&output);
            })
            .map_err(|e| {
                connection.stop("the host could not start its reader");
                worker_failed(&e)
            })?;
        Ok((connection, ready))
    }

    /// Calls `ended` with how the worker ended, once it has (at once if it already has),
    /// before the calls in flight are told.
    pub fn on_end(&self, ended: impl FnOnce(&Ending) + Send + 'static) {
        let mut routes = self.routes();
        match routes.ended.clone() {
            Some(ending) => {
                drop(routes);
                ended(&ending);
            }
            None => routes.on_end = Some(Box::new(ended)),
        }
    }

    /// The worker's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the worker is still serving.
    pub fn is_alive(&self) -> bool {
        self.routes().ended.is_none() && self.stopping_reason().is_none()
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stopping_reason(&self) -> Option<String> {
        self.stopping
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stops the worker (its whole process group) for `reason`; calls in flight end with an
    /// error naming it.
    pub fn stop(&self, reason: &str) {
        self.stopping
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert_with(|| reason.to_string());
        if let Some(child) = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            process::kill_group(child);
        }
    }

    /// Asks the worker to stop its plugin and exit; stops it after `grace` if it has not.
    pub fn shut_down(&self, grace: Duration) {
        self.stopping
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert_with(|| "the host shut the plugin down".to_string());
        let _ = self.send(&ToWorker::Shutdown);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && self.routes().ended.is_none() {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stop("the host shut the plugin down");
    }

    fn send(&self, message: &ToWorker) -> std::io::Result<()> {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        write_frame(&mut *writer, message)
    }

    /// Registers a request and returns its id and where its messages arrive; an error when the
    /// worker has already ended.
    fn register(&self) -> Result<(u64, Receiver<Incoming>), Ending> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = mpsc::channel();
        let mut routes = self.routes();
        if let Some(ending) = &routes.ended {
            return Err(ending.clone());
        }
        routes.waiting.insert(id, sender);
        Ok((id, receiver))
    }

    /// Runs `op` of handler `handler` for `call`, answering its service requests with
    /// `services`; past `deadline` the call is cancelled, and its worker stopped when it does
    /// not end within [`CANCEL_GRACE`].
    pub fn call(
        &self,
        handler: usize,
        op: Op,
        call: &HandlerCall<'_>,
        services: Option<&dyn CallServices>,
        deadline: Option<Instant>,
    ) -> Result<Value, Interrupted> {
        let (id, incoming) = self.register().map_err(Interrupted::Ended)?;
        let request = ToWorker::Call {
            id,
            handler,
            op,
            call: WireCall::of(call),
        };
        if self.send(&request).is_err() {
            // The reader sees the worker end and says how.
            return self.wait(id, &incoming, None, None);
        }
        self.wait(id, &incoming, services, deadline)
    }

    /// Sends the handler extension `method`.
    pub fn extension(
        &self,
        handler: usize,
        method: &str,
        payload: &Value,
    ) -> Result<Value, Interrupted> {
        let (id, incoming) = self.register().map_err(Interrupted::Ended)?;
        let request = ToWorker::Extension {
            id,
            handler,
            method: method.to_string(),
            payload: payload.clone(),
        };
        let _ = self.send(&request);
        self.wait(id, &incoming, None, None)
    }

    /// Waits for request `id`'s result, serving its service requests; a call cancelled (or
    /// past `deadline`) that does not end within [`CANCEL_GRACE`] stops the worker.
    fn wait(
        &self,
        id: u64,
        incoming: &Receiver<Incoming>,
        services: Option<&dyn CallServices>,
        deadline: Option<Instant>,
    ) -> Result<Value, Interrupted> {
        let mut cancelled_at: Option<Instant> = None;
        let mut timed_out = false;
        loop {
            let now = Instant::now();
            if !timed_out && deadline.is_some_and(|d| now >= d) {
                timed_out = true;
                if cancelled_at.is_none() {
                    cancelled_at = Some(now);
                    let _ = self.send(&ToWorker::Cancel { id });
                }
            }
            let poll = deadline.filter(|_| !timed_out).map_or(CANCEL_POLL, |d| {
                CANCEL_POLL.min(d.saturating_duration_since(now))
            });
            match incoming.recv_timeout(poll) {
                Ok(Incoming::Done(_) | Incoming::Ended(_)) if timed_out => {
                    return Err(Interrupted::TimedOut)
                }
                Ok(Incoming::Done(result)) => return result.map_err(Interrupted::Failed),
                Ok(Incoming::Ended(ending)) => return Err(Interrupted::Ended(ending)),
                Ok(Incoming::Service {
                    id: request,
                    request: service,
                }) => {
                    let answer = super::answer::answer(services, service);
                    if request != 0 {
                        let _ = self.send(&ToWorker::Reply {
                            id: request,
                            answer,
                        });
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let Some(services) = services else { continue };
                    match cancelled_at {
                        None if timed_out => {}
                        None if services.is_cancelled() => {
                            cancelled_at = Some(Instant::now());
                            let _ = self.send(&ToWorker::Cancel { id });
                        }
                        Some(at) if at.elapsed() > CANCEL_GRACE => {
                            self.stop(
                                "a call was cancelled or ran past its timeout and did not stop",
                            );
                        }
                        _ => {}
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Interrupted::Ended(Ending {
                        how: "a lost channel".to_string(),
                        last_words: None,
                        stopped: None,
                    }))
                }
            }
        }
    }

    /// Reads the worker's messages until its channel ends.
    fn read(&self, reader: &mut BufReader<UnixStream>) {
        loop {
            let message = match read_frame::<FromWorker>(reader) {
                Ok(Some(message)) => message,
                Ok(None) => return,
                Err(e) => {
                    if self.stopping_reason().is_none() {
                        tracing::warn!(target: "toolhost::plugins", "plugin '{}': its worker broke the channel: {e}", self.plugin);
                    }
                    return;
                }
            };
            match message {
                FromWorker::Done { id, result } => {
                    if let Some(waiting) = self.routes().waiting.remove(&id) {
                        let _ = waiting.send(Incoming::Done(result));
                    }
                }
                FromWorker::Service { id, call, request } => {
                    let waiting = self.routes().waiting.get(&call).cloned();
                    let delivered =
                        waiting.is_some_and(|w| w.send(Incoming::Service { id, request }).is_ok());
                    if !delivered && id != 0 {
                        // The call is over: `null` answers nothing (the plugin treats it as
                        // an unreachable host).
                        let _ = self.send(&ToWorker::Reply {
                            id,
                            answer: Value::Null,
                        });
                    }
                }
                FromWorker::Ready { .. } | FromWorker::Refused { .. } => {
                    tracing::warn!(target: "toolhost::plugins", "plugin '{}': its worker broke the protocol", self.plugin);
                    return;
                }
            }
        }
    }

    /// The channel ended: makes sure the worker and its group are gone, learns how it ended,
    /// and tells every waiting call.
    fn end(&self, output: &Output) {
        let child = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let how = match child {
            Some(mut child) => {
                process::kill_group(&child);
                child
                    .wait()
                    .map_or_else(|e| e.to_string(), process::how_it_ended)
            }
            None => "an unknown ending".to_string(),
        };
        let ending = Ending {
            how,
            last_words: output.last_words(LAST_WORDS_WAIT),
            stopped: self.stopping_reason(),
        };
        let (waiting, on_end): (Vec<Sender<Incoming>>, _) = {
            let mut routes = self.routes();
            routes.ended = Some(ending.clone());
            (
                routes.waiting.drain().map(|(_, w)| w).collect(),
                routes.on_end.take(),
            )
        };
        // First the plugin's accounting (a crash may disable it), then the calls: a caller
        // that calls again at once finds the plugin as it now is.
        if let Some(on_end) = on_end {
            on_end(&ending);
        }
        for waiting in waiting {
            let _ = waiting.send(Incoming::Ended(ending.clone()));
        }
    }
}

/// Why a request got no result from the plugin.
#[derive(Debug)]
pub enum Interrupted {
    /// The plugin answered with an error.
    Failed(WireError),
    /// The worker ended first.
    Ended(Ending),
    /// The call ran past its deadline (and was cancelled, or its worker stopped).
    TimedOut,
}

/// The error a call gets when its worker ended.
pub fn ended_error(plugin: &str, tool: &str, ending: &Ending) -> CallError {
    let words = ending
        .last_words
        .as_deref()
        .map(|w| format!(" Its last output: {w}"))
        .unwrap_or_default();
    match &ending.stopped {
        None => CallError::new(
            ErrorKind::Crashed,
            format!(
                "The plugin '{plugin}' crashed ({}) while running {tool}, so the call did not finish.{words} The host and the other tools are unaffected; the plugin's next call starts a fresh worker process.",
                ending.how
            ),
        ),
        Some(reason) => CallError::new(
            ErrorKind::Cancelled,
            format!(
                "The plugin '{plugin}' was stopped while running {tool} ({reason}), so the call did not finish. Its next call starts a fresh worker process."
            ),
        ),
    }
}
