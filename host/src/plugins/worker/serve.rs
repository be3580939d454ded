//! The worker side: `toolhost __plugin-worker`, a process that confines itself, loads one
//! plugin library with the host's checks and serves its handlers over the channel it finds on
//! its standard input.
//!
//! Before the library is opened (its static constructors run at load) the worker takes the
//! channel off standard input, ties its life to the host's (`PR_SET_PDEATHSIG`, and a check
//! that the host is still its parent), sets its resource limits and applies its sandbox. Then
//! it opens the library, reports the manifest and the specs ([`FromWorker::Ready`]), and serves
//! requests: each call on the thread that read it, host services as requests back to the
//! host, cancellation answered locally.

use std::fs::File;
use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::error::{CallError, ErrorKind};
use serde_json::Value;

use super::config::WorkerConfig;
use super::process::WORKER_MODE;
use super::protocol::{read_frame, FromWorker, Op, ToWorker};
use super::remote::{Link, RemoteServices};
use crate::plugins::error::LoadError;
use crate::plugins::handler::{Cancellation, HandlerApi, OpenedPlugin};
use crate::plugins::handler_call::{HandlerCall, Ran, Unwatched};
use crate::plugins::loader;
use crate::plugins::sealed::ReceivedLibrary;

/// Runs the worker when the process was started in [`WORKER_MODE`] (never returns then).
pub fn run_worker_if_asked() {
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|mode| mode == WORKER_MODE) {
        let code = main(args.collect());
        std::process::exit(if code == ExitCode::SUCCESS { 0 } else { 1 });
    }
}

/// `__plugin-worker <library> <config json>`.
fn main(args: Vec<std::ffi::OsString>) -> ExitCode {
    let [library, config] = args.as_slice() else {
        eprintln!("toolhost plugin worker: expected <library> <config>");
        return ExitCode::FAILURE;
    };
    let config: WorkerConfig = match serde_json::from_str(&config.to_string_lossy()) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("toolhost plugin worker: invalid configuration: {e}");
            return ExitCode::FAILURE;
        }
    };
    let channel = match take_channel() {
        Ok(channel) => channel,
        Err(e) => {
            eprintln!("toolhost plugin worker: no channel on standard input: {e}");
            return ExitCode::FAILURE;
        }
    };
    let link = Arc::new(Link::new(channel.try_clone().ok()));
    let image = match ReceivedLibrary::receive(&channel, &config.library_sha256) {
        Ok(image) => image,
        Err(error) => {
            link.send(&FromWorker::Refused { error });
            return ExitCode::FAILURE;
        }
    };
    if let Err(error) = prepare(&config) {
        link.send(&FromWorker::Refused { error });
        return ExitCode::FAILURE;
    }
    let plugin = match loader::open_in_worker(&image.path(), std::path::Path::new(library)) {
        Ok(plugin) => plugin,
        Err(error) => {
            link.send(&FromWorker::Refused { error });
            return ExitCode::FAILURE;
        }
    };
    let (manifest, plugin) = plugin;
    let specs = plugin.handlers().iter().map(|h| h.specs()).collect();
    if !link.send(&FromWorker::Ready { manifest, specs }) {
        return ExitCode::FAILURE;
    }
    serve(&link, &plugin, channel);
    plugin.shutdown();
    ExitCode::SUCCESS
}

/// The channel: the socket the host passed as standard input, moved to a descriptor of its
/// own (closed on exec, so that nothing the plugin starts inherits it), with `/dev/null`
/// taking its place.
fn take_channel() -> std::io::Result<UnixStream> {
    let socket = rustix::io::fcntl_dupfd_cloexec(std::io::stdin(), 3)?;
    rustix::stdio::dup2_stdin(File::open("/dev/null")?)?;
    Ok(UnixStream::from(socket))
}

/// Everything before the library is opened: the host's death ends the worker, the limits,
/// the sandbox.
fn prepare(config: &WorkerConfig) -> Result<(), LoadError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| LoadError::Worker(format!("{what}: {e}"));
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(|e| failed("cannot tie the worker to the host", &e))?;
    // The host may have died before the death signal was set.
    if rustix::process::getppid().map(|p| p.as_raw_nonzero().get()) != Some(config.host_pid) {
        return Err(LoadError::Worker("the host is gone".to_string()));
    }
    config
        .limits
        .apply()
        .map_err(|e| failed("cannot set the worker's limits", &e))?;
    config.apply_sandbox().map_err(LoadError::Worker)
}

/// The request loop's shared state: the channel's reading end, taken in turns.
///
/// Every thread of the worker reads the next request itself (holding `input`), lets go of the
/// channel, and handles what it read: a call runs on the thread that read it, so no handoff
/// to another thread stands between a request and its work; the next idle thread (queued on
/// `input`) reads on meanwhile. A thread that is about to run a call with no other thread
/// queued starts one first, so a request (and the answers to the running calls' service
/// requests) is always being read.
struct Serving {
    input: Mutex<BufReader<UnixStream>>,
    /// Threads waiting to read (queued on `input`).
    queued: AtomicUsize,
    link: Arc<Link>,
    plugin: Arc<dyn OpenedPlugin>,
}

/// Reads and serves requests until the host closes the channel or asks the worker to stop.
fn serve(link: &Arc<Link>, plugin: &Arc<dyn OpenedPlugin>, channel: UnixStream) {
    let serving = Arc::new(Serving {
        input: Mutex::new(BufReader::new(channel)),
        queued: AtomicUsize::new(0),
        link: link.clone(),
        plugin: plugin.clone(),
    });
    serving.take_turns();
}

impl Serving {
    /// Reads a request and handles it, again and again; returns at the end of the channel.
    fn take_turns(self: &Arc<Self>) {
        loop {
            self.queued.fetch_add(1, Ordering::SeqCst);
            let message = {
                let mut input = self.input.lock().unwrap_or_else(PoisonError::into_inner);
                self.queued.fetch_sub(1, Ordering::SeqCst);
                read_frame::<ToWorker>(&mut *input)
            };
            match message {
                Ok(Some(ToWorker::Shutdown)) | Ok(None) | Err(_) => return,
                Ok(Some(message)) => self.handle(message),
            }
        }
    }

    /// Makes sure another thread reads while this one works.
    fn keep_reading(self: &Arc<Self>) {
        if self.queued.load(Ordering::SeqCst) > 0 {
            return;
        }
        let serving = self.clone();
        let started = std::thread::Builder::new()
            .name("worker-call".into())
            .spawn(move || {
                serving.take_turns();
                // The channel ended on this thread: the host is gone or asked to stop.
                serving.plugin.shutdown();
                std::process::exit(0);
            });
        if let Err(e) = started {
            eprintln!("toolhost plugin worker: cannot start a call thread: {e}");
            std::process::exit(1);
        }
    }

    fn handle(self: &Arc<Self>, message: ToWorker) {
        let link = &self.link;
        match message {
            ToWorker::Call {
                id,
                handler,
                op,
                call,
            } => {
                let cancellation = Arc::new(Cancellation::default());
                link.calls().insert(id, cancellation.clone());
                self.keep_reading();
                let services = RemoteServices {
                    link: link.clone(),
                    call: id,
                    cancellation,
                };
                let handler = self.plugin.handlers().get(handler).cloned();
                let call = call.received();
                let result = perform(handler.as_deref(), op, &call.call(), &services);
                link.calls().remove(&id);
                link.send(&FromWorker::Done {
                    id,
                    result: result.map_err(|e| (&e).into()),
                });
            }
            ToWorker::Extension {
                id,
                handler,
                method,
                payload,
            } => {
                self.keep_reading();
                let result = match self.plugin.handlers().get(handler) {
                    Some(handler) => handler.extension(&method, &payload),
                    None => Err(no_handler()),
                };
                link.send(&FromWorker::Done {
                    id,
                    result: result.map_err(|e| (&e).into()),
                });
            }
            ToWorker::Reply { id, answer } => {
                let waiting = link
                    .replies
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
                if let Some(waiting) = waiting {
                    let _ = waiting.send(answer);
                }
            }
            ToWorker::Cancel { id } => {
                if let Some(cancellation) = link.calls().get(&id) {
                    cancellation.cancel();
                }
            }
            ToWorker::Shutdown => {}
        }
    }
}

fn no_handler() -> CallError {
    CallError::new(ErrorKind::Internal, "the plugin has no such handler")
}

/// One request of a call, answered as JSON.
fn perform(
    handler: Option<&dyn HandlerApi>,
    op: Op,
    call: &HandlerCall<'_>,
    services: &RemoteServices,
) -> Result<Value, CallError> {
    let handler = handler.ok_or_else(no_handler)?;
    match op {
        Op::Execute => {
            // The host keeps the call's deadline, and stops this process past it.
            let (content, description) =
                match handler.run(call, services, Duration::MAX, &Unwatched) {
                    Ran::Ended(result, description) => (result?, description),
                    Ran::TimedOut | Ran::GivenUp => {
                        return Err(CallError::new(ErrorKind::Timeout, "timed out"))
                    }
                };
            let content = serde_json::to_value(content)
                .map_err(|e| CallError::new(ErrorKind::Internal, e.to_string()))?;
            Ok(serde_json::json!({"content": content, "description": description}))
        }
        Op::Partial => handler.partial(call, services).map(|()| Value::Null),
        Op::Describe => Ok(Value::String(handler.describe(call))),
    }
}
