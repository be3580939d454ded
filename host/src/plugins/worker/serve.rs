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

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::model::{ApprovalDecision, ApprovalRequest, AskReply, PathVerdict, ToolContent};

use super::config::WorkerConfig;
use super::protocol::{read_frame, write_frame, FromWorker, Op, ServiceRequest, ToWorker};
use crate::plugins::error::LoadError;
use crate::plugins::handler::{refused_verdict, Cancellation, HandlerApi, OpenedPlugin};
use crate::plugins::{loader, CallServices};

/// The hidden mode of the `toolhost` binary.
pub const WORKER_MODE: &str = "__plugin-worker";

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
    if let Err(error) = prepare(&config) {
        link.send(&FromWorker::Refused { error });
        return ExitCode::FAILURE;
    }
    let plugin = match loader::open_in_worker(std::path::Path::new(library)) {
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
                let result = perform(handler.as_deref(), op, &call.data(), &services);
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

fn no_handler() -> ToolError {
    ToolError::new(ToolErrorKind::INTERNAL, "the plugin has no such handler")
}

/// One request of a call, answered as JSON.
fn perform(
    handler: Option<&dyn HandlerApi>,
    op: Op,
    call: &crate::plugins::CallData<'_>,
    services: &RemoteServices,
) -> Result<Value, ToolError> {
    let handler = handler.ok_or_else(no_handler)?;
    match op {
        Op::Execute => {
            let description = handler.describe(call);
            let content = handler.execute(call, services)?;
            let content = serde_json::to_value(content)
                .map_err(|e| ToolError::new(ToolErrorKind::INTERNAL, e.to_string()))?;
            Ok(serde_json::json!({"content": content, "description": description}))
        }
        Op::Partial => handler.partial(call, services).map(|()| Value::Null),
        Op::Describe => Ok(Value::String(handler.describe(call))),
    }
}

/// The worker's end of the channel: frames out, answers to service requests in.
struct Link {
    /// `None` when the socket could not be cloned for writing: every send then fails.
    writer: Mutex<Option<UnixStream>>,
    replies: Mutex<HashMap<u64, SyncSender<Value>>>,
    calls: Mutex<HashMap<u64, Arc<Cancellation>>>,
    next_request: AtomicU64,
    /// The settings asked for so far. A host's settings do not change while it runs (they are
    /// read once at its start, and every task it serves shares them), so each is asked once.
    settings: Mutex<HashMap<String, Option<Value>>>,
}

impl Link {
    fn new(writer: Option<UnixStream>) -> Self {
        Self {
            writer: Mutex::new(writer),
            replies: Mutex::default(),
            calls: Mutex::default(),
            next_request: AtomicU64::new(1),
            settings: Mutex::default(),
        }
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Cancellation>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends one frame; whether it went out.
    fn send(&self, message: &FromWorker) -> bool {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        writer
            .as_mut()
            .is_some_and(|out| write_frame(out, message).is_ok())
    }

    /// Sends a service request of call `call`; its answer, when it expects one (`None` when the
    /// host did not answer).
    fn request(&self, call: u64, request: ServiceRequest) -> Option<Value> {
        if !request.expects_answer() {
            self.send(&FromWorker::Service {
                id: 0,
                call,
                request,
            });
            return None;
        }
        let id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (answer, receiver) = mpsc::sync_channel(1);
        self.replies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, answer);
        if !self.send(&FromWorker::Service { id, call, request }) {
            return None;
        }
        receiver.recv().ok()
    }
}

/// The host services of one call, reached over the channel.
struct RemoteServices {
    link: Arc<Link>,
    call: u64,
    cancellation: Arc<Cancellation>,
}

fn host_unreachable() -> ToolError {
    ToolError::new(
        ToolErrorKind::UNAVAILABLE,
        "the host did not answer the plugin's request",
    )
}

impl RemoteServices {
    /// A request whose answer is a `Result` on the wire.
    fn fallible<T: DeserializeOwned>(&self, request: ServiceRequest) -> Result<T, ToolError> {
        let answer = self
            .link
            .request(self.call, request)
            .ok_or_else(host_unreachable)?;
        let answer: Result<T, super::protocol::WireError> =
            serde_json::from_value(answer).map_err(|_| host_unreachable())?;
        answer.map_err(Into::into)
    }

    /// A request whose answer is a plain value.
    fn plain<T: DeserializeOwned>(&self, request: ServiceRequest) -> Option<T> {
        serde_json::from_value(self.link.request(self.call, request)?).ok()
    }
}

impl CallServices for RemoteServices {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        self.link.request(
            self.call,
            ServiceRequest::Say {
                kind: kind.to_string(),
                text: text.to_string(),
                partial,
            },
        );
    }

    fn ask(&self, kind: &str, text: &str, partial: bool) -> Result<AskReply, ToolError> {
        self.fallible(ServiceRequest::Ask {
            kind: kind.to_string(),
            text: text.to_string(),
            partial,
        })
    }

    fn request_approval(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, ToolError> {
        self.fallible(ServiceRequest::Approval {
            request: request.clone(),
        })
    }

    fn check_path(&self, path: &str) -> PathVerdict {
        self.plain(ServiceRequest::CheckPath {
            path: path.to_string(),
        })
        .unwrap_or_else(|| refused_verdict(path))
    }

    fn record_file_read(&self, absolute_path: &str, mtime_ms: u64) -> u32 {
        self.plain(ServiceRequest::RecordFileRead {
            absolute_path: absolute_path.to_string(),
            mtime_ms,
        })
        .unwrap_or(1)
    }

    fn forget_file_reads(&self, absolute_path: &str) {
        self.link.request(
            self.call,
            ServiceRequest::ForgetFileReads {
                absolute_path: absolute_path.to_string(),
            },
        );
    }

    fn mistake_count(&self) -> u32 {
        self.plain(ServiceRequest::MistakeCount).unwrap_or(0)
    }

    fn setting(&self, key: &str) -> Option<Value> {
        let known = (self.link.settings.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned();
        if let Some(value) = known {
            return value;
        }
        // No answer (the host is unreachable) is not remembered; an absent setting is.
        let value = self.plain::<Option<Value>>(ServiceRequest::Setting {
            key: key.to_string(),
        })?;
        self.link
            .settings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_string(), value.clone());
        value
    }

    fn log(&self, level: u8, target: &str, message: &str) {
        self.link.request(
            self.call,
            ServiceRequest::Log {
                level,
                target: target.to_string(),
                message: message.to_string(),
            },
        );
    }

    fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    fn wait_cancelled(&self, timeout_ms: u64) -> bool {
        self.cancellation.wait(Duration::from_millis(timeout_ms))
    }

    fn invoke_tool(&self, name: &str, params_json: &str) -> Result<ToolContent, ToolError> {
        self.fallible(ServiceRequest::InvokeTool {
            name: name.to_string(),
            params_json: params_json.to_string(),
        })
    }

    fn call_service(
        &self,
        service: &str,
        method: &str,
        payload: &Value,
    ) -> Result<Value, ToolError> {
        self.fallible(ServiceRequest::CallService {
            service: service.to_string(),
            method: method.to_string(),
            payload: payload.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn each_setting_is_asked_of_the_host_once() {
        let (worker_end, host_end) = UnixStream::pair().unwrap();
        let link = Arc::new(Link::new(worker_end.try_clone().ok()));
        // The host answers each setting request with how many it has had (`null`: absent).
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = asked.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(host_end.try_clone().unwrap());
            let mut writer = host_end;
            while let Ok(Some(FromWorker::Service {
                id,
                request: ServiceRequest::Setting { key },
                ..
            })) = read_frame(&mut reader)
            {
                let count = counted.fetch_add(1, Ordering::SeqCst) + 1;
                let answer = if key == "absent" {
                    Value::Null
                } else {
                    Value::from(count)
                };
                write_frame(&mut writer, &ToWorker::Reply { id, answer }).unwrap();
            }
        });
        // The worker's reader hands the replies to the waiting call.
        let routing = link.clone();
        let mut input = BufReader::new(worker_end);
        std::thread::spawn(move || {
            while let Ok(Some(ToWorker::Reply { id, answer })) = read_frame(&mut input) {
                if let Some(waiting) = routing.replies.lock().unwrap().remove(&id) {
                    let _ = waiting.send(answer);
                }
            }
        });
        let services = RemoteServices {
            link,
            call: 1,
            cancellation: Arc::default(),
        };
        assert_eq!(services.setting("model.a"), Some(Value::from(1)));
        assert_eq!(services.setting("model.a"), Some(Value::from(1)));
        assert_eq!(services.setting("absent"), None);
        assert_eq!(services.setting("absent"), None);
        assert_eq!(services.setting("model.b"), Some(Value::from(3)));
        assert_eq!(asked.load(Ordering::SeqCst), 3);
    }
}
