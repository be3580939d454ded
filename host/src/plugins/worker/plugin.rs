//! An isolated plugin: its handlers served by a worker process, started on first use and
//! again after it ended, behind the same [`HandlerApi`] as an in-process library.
//!
//! Every worker of one plugin generation loads the same sealed copy of the library, so a
//! worker started after a crash runs the build the host checked, even if the file has been
//! replaced since (a replaced file is a new generation: hot swap). Crashes are counted: after
//! [`CRASHES_TO_DISABLE`] within [`CRASH_WINDOW`] the plugin is disabled until a new build of
//! its library is loaded or the host restarts.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::error::{CallError, ErrorKind};
use serde_json::Value;
use tool_api::model::{
    ContentBlock, ToolContent, ToolSpec, CLOSE_SESSION_METHOD, TASK_ENDED_METHOD,
};

use super::connection::{ended_error, Connection, Ending, Interrupted, Ready};
use super::process::Launch;
use super::protocol::Op;
use crate::plugins::abi::library::Manifest;
use crate::plugins::access;
use crate::plugins::error::LoadError;
use crate::plugins::handler::{CallServices, HandlerApi, InvalidSpecs, OpenedPlugin};
use crate::plugins::handler_call::{HandlerCall, Ran, Watch};
use crate::plugins::sealed::SealedLibrary;

/// Crashes within [`CRASH_WINDOW`] that disable a plugin.
pub const CRASHES_TO_DISABLE: usize = 3;

/// The window crashes are counted in.
pub const CRASH_WINDOW: Duration = Duration::from_secs(60);

/// Workers of one plugin at once (one per set of workspace roots); a new set beyond it stops
/// the oldest.
const MAX_WORKERS: usize = 8;

/// How long a worker may take to stop its plugin when the host shuts down.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// An isolated plugin generation.
pub struct WorkerPlugin {
    shared: Arc<Shared>,
    handlers: Vec<Arc<dyn HandlerApi>>,
}

struct Shared {
    name: String,
    launch: Launch,
    specs: Vec<Result<Vec<ToolSpec>, InvalidSpecs>>,
    /// The running workers, by the workspace roots their sandbox grants: a task over other
    /// roots than the host's (an MCP session following its client's roots) gets a worker of
    /// its own, granted its roots.
    live: Mutex<Vec<(Vec<PathBuf>, Arc<Connection>)>>,
    crashes: Mutex<VecDeque<Instant>>,
    disabled: Mutex<Option<String>>,
}

impl WorkerPlugin {
    /// Copies `library` privately and starts a first worker on the copy with `first`;
    /// `configure` then gives, from the plugin's name, how its workers start (when that
    /// differs, the first worker is stopped and the next call starts one so). The plugin's
    /// manifest and the plugin.
    pub fn start(
        library: &Path,
        mut first: Launch,
        configure: impl FnOnce(&Manifest) -> Result<Launch, LoadError>,
    ) -> Result<(Manifest, Self), LoadError> {
        let image = Arc::new(SealedLibrary::copy(library)?);
        first.image = Some(image.clone());
        first.config.library_sha256 = image.sha256().to_string();
        let (connection, ready) = Connection::start(&first)?;
        let Ready { manifest, specs } = ready;
        let mut launch = match configure(&manifest) {
            Ok(launch) => launch,
            Err(e) => {
                connection.stop("the host could not configure it");
                return Err(e);
            }
        };
        launch.config.library_sha256 = image.sha256().to_string();
        launch.image = Some(image);
        launch.plugin = manifest.name.clone();
        if launch.config != first.config || launch.env != first.env {
            connection.stop("restarted with the plugin's own settings");
        }
        let shared = Arc::new(Shared {
            name: manifest.name.clone(),
            launch,
            specs,
            live: Mutex::new(Vec::new()),
            crashes: Mutex::default(),
            disabled: Mutex::new(None),
        });
        Shared::watch(&shared, &connection);
        let roots = shared.launch.workspace_roots.clone();
        shared
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((roots, connection));
        let handlers = (0..shared.specs.len())
            .map(|index| {
                Arc::new(WorkerHandler {
                    shared: shared.clone(),
                    index,
                }) as Arc<dyn HandlerApi>
            })
            .collect();
        Ok((manifest, Self { shared, handlers }))
    }

    /// How its workers start.
    pub fn launch(&self) -> Launch {
        self.shared.launch.clone()
    }

    /// The process id of a running worker (the first started of those alive).
    pub fn worker_pid(&self) -> Option<u32> {
        self.shared
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(_, c)| c.is_alive())
            .map(|(_, c)| c.pid())
    }
}

impl OpenedPlugin for WorkerPlugin {
    fn handlers(&self) -> &[Arc<dyn HandlerApi>] {
        &self.handlers
    }

    fn shutdown(&self) {
        let live = std::mem::take(
            &mut *self
                .shared
                .live
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for (_, connection) in live {
            connection.shut_down(SHUTDOWN_GRACE);
        }
    }

    fn worker_pid(&self) -> Option<u32> {
        WorkerPlugin::worker_pid(self)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        for (_, connection) in self
            .live
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            connection.stop("the plugin generation was replaced");
        }
    }
}

impl Shared {
    /// Counts `connection`'s ending (through a weak reference: a worker does not keep its
    /// generation alive).
    fn watch(shared: &Arc<Self>, connection: &Connection) {
        let me: Weak<Self> = Arc::downgrade(shared);
        connection.on_end(move |ending| {
            if let Some(me) = me.upgrade() {
                me.ended(ending);
            }
        });
    }

    /// The running worker for a task over `roots` (`None`: the host's), started when there is
    /// none.
    fn connection(
        self: &Arc<Self>,
        roots: Option<Vec<PathBuf>>,
    ) -> Result<Arc<Connection>, CallError> {
        if let Some(reason) = self
            .disabled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            return Err(CallError::new(ErrorKind::Unavailable, reason));
        }
        // A plugin granted no workspace has one worker for every task.
        let roots = roots
            .filter(|_| !self.launch.workspace_roots.is_empty())
            .unwrap_or_else(|| self.launch.workspace_roots.clone());
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|(_, c)| c.is_alive());
        if let Some((_, connection)) = live.iter().find(|(granted, _)| *granted == roots) {
            return Ok(connection.clone());
        }
        if live.len() >= MAX_WORKERS {
            let (_, oldest) = live.remove(0);
            oldest.stop("too many workers: the oldest set of workspace roots gave way");
        }
        let launch = if roots == self.launch.workspace_roots {
            self.launch.clone()
        } else {
            self.launch.for_roots(&roots)
        };
        let (connection, ready) = Connection::start(&launch).map_err(|e| {
            CallError::new(
                ErrorKind::Unavailable,
                format!("The plugin '{}' could not be started: {e}", self.name),
            )
        })?;
        if ready.manifest.name != self.name {
            connection.stop("it is another plugin");
            return Err(CallError::new(
                ErrorKind::Unavailable,
                format!(
                    "The plugin '{}' could not be started: its library now holds '{}'",
                    self.name, ready.manifest.name
                ),
            ));
        }
        Self::watch(self, &connection);
        live.push((roots, connection.clone()));
        Ok(connection)
    }

    /// Counts a crash; disables the plugin after too many.
    fn ended(&self, ending: &Ending) {
        if !ending.is_crash() {
            return;
        }
        let now = Instant::now();
        let mut crashes = self.crashes.lock().unwrap_or_else(PoisonError::into_inner);
        crashes.push_back(now);
        while crashes
            .front()
            .is_some_and(|&at| now.duration_since(at) > CRASH_WINDOW)
        {
            crashes.pop_front();
        }
        if crashes.len() >= CRASHES_TO_DISABLE {
            let reason = format!(
                "The plugin '{}' was disabled after {} crashes within a minute (the last: {}). A new build of its library (hot swap) or a restart of toolhost enables it again.",
                self.name,
                crashes.len(),
                ending.how
            );
            tracing::error!(target: "toolhost::plugins", "{reason}");
            *self.disabled.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
        }
    }

    /// A panic leaves the plugin's state unknown: its worker is replaced (and it counts as a
    /// crash); the error keeps the plugin's message.
    fn panicked(&self, connection: &Connection, error: CallError) -> CallError {
        connection.stop("it panicked");
        self.ended(&Ending {
            how: "a panic".to_string(),
            last_words: None,
            stopped: None,
        });
        CallError::new(
            ErrorKind::Crashed,
            format!(
                "{} (The plugin '{}' runs in a worker process, which was replaced; its next call starts afresh.)",
                error.message, self.name
            ),
        )
    }
}

/// One handler of an isolated plugin.
struct WorkerHandler {
    shared: Arc<Shared>,
    index: usize,
}

impl WorkerHandler {
    fn request(
        &self,
        op: Op,
        call: &HandlerCall<'_>,
        services: Option<&dyn CallServices>,
    ) -> Result<Value, CallError> {
        self.request_until(op, call, services, None)
            .unwrap_or_else(|| Err(CallError::new(ErrorKind::Timeout, "timed out")))
    }

    /// A request; `None` when it ran past `deadline`.
    fn request_until(
        &self,
        op: Op,
        call: &HandlerCall<'_>,
        services: Option<&dyn CallServices>,
        deadline: Option<Instant>,
    ) -> Option<Result<Value, CallError>> {
        let connection = match self.shared.connection(task_roots(call)) {
            Ok(connection) => connection,
            Err(e) => return Some(Err(e)),
        };
        Some(
            match connection.call(self.index, op, call, services, deadline) {
                Ok(value) => Ok(value),
                Err(Interrupted::Failed(error)) => {
                    let error = CallError::from(error);
                    if error.kind == ErrorKind::Panic {
                        Err(self.shared.panicked(&connection, error))
                    } else {
                        Err(error)
                    }
                }
                Err(Interrupted::Ended(ending)) => {
                    Err(ended_error(&self.shared.name, call.tool_name, &ending))
                }
                Err(Interrupted::TimedOut) => return None,
            },
        )
    }

    /// An execute answer: the content and the description.
    fn described(
        answer: Result<Value, CallError>,
    ) -> (Result<ToolContent, CallError>, Option<String>) {
        let mut answer = match answer {
            Ok(answer) => answer,
            Err(e) => return (Err(e), None),
        };
        let description = answer["description"].as_str().map(str::to_string);
        let content = serde_json::from_value(answer["content"].take()).map_err(|e| malformed(&e));
        (content, description)
    }
}

fn malformed(e: &serde_json::Error) -> CallError {
    CallError::new(
        ErrorKind::Internal,
        format!("the tool returned malformed content: {e}"),
    )
}

impl WorkerHandler {
    /// `result`, with the reason when it failed as the worker's sandbox refuses (what the
    /// plugin declares, what it is granted, the setting that grants it).
    fn explained(&self, result: Result<ToolContent, CallError>) -> Result<ToolContent, CallError> {
        let (name, report) = (&self.shared.name, &self.shared.launch.access);
        let explain = |text: &str| access::explain_refusal(name, report, text);
        match result {
            Err(mut error) => {
                if let Some(why) = explain(&error.message) {
                    error.message = format!("{}\n\n{why}", error.message);
                }
                Err(error)
            }
            Ok(mut content) if content.is_error => {
                let why = content.content.iter().find_map(|block| match block {
                    ContentBlock::Text { text } => explain(text),
                    _ => None,
                });
                content
                    .content
                    .extend(why.map(|text| ContentBlock::Text { text }));
                Ok(content)
            }
            ok => ok,
        }
    }
}

impl HandlerApi for WorkerHandler {
    fn specs(&self) -> Result<Vec<ToolSpec>, InvalidSpecs> {
        self.shared
            .specs
            .get(self.index)
            .cloned()
            .unwrap_or_else(|| {
                Err(InvalidSpecs {
                    reason: "no such handler".to_string(),
                })
            })
    }

    fn describe(&self, call: &HandlerCall<'_>) -> String {
        match self.request(Op::Describe, call, None) {
            Ok(Value::String(text)) => text,
            _ => format!("[{}]", call.tool_name),
        }
    }

    /// One round trip: the worker describes the call with its result, and keeps the
    /// deadline, stopping the work past it; no host thread waits to be abandoned (`watch` is
    /// not marked).
    fn run(
        &self,
        call: &HandlerCall<'_>,
        services: &dyn CallServices,
        timeout: Duration,
        _watch: &dyn Watch,
    ) -> Ran {
        let deadline = Instant::now() + timeout;
        match self.request_until(Op::Execute, call, Some(services), Some(deadline)) {
            None => Ran::TimedOut,
            Some(answer) => {
                let (result, description) = Self::described(answer);
                Ran::Ended(self.explained(result), description)
            }
        }
    }

    fn partial(
        &self,
        call: &HandlerCall<'_>,
        services: &dyn CallServices,
    ) -> Result<(), CallError> {
        self.request(Op::Partial, call, Some(services)).map(|_| ())
    }

    fn extension(&self, method: &str, payload: &Value) -> Result<Value, CallError> {
        // A notification to a plugin without a running worker: nothing is kept to notify.
        // To every running worker: the task's state is in the one that served it.
        if method == CLOSE_SESSION_METHOD || method == TASK_ENDED_METHOD {
            let live: Vec<Arc<Connection>> = self
                .shared
                .live
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .filter(|(_, c)| c.is_alive())
                .map(|(_, c)| c.clone())
                .collect();
            for connection in live {
                connection
                    .extension(self.index, method, payload)
                    .map_err(|e| interrupted(&self.shared.name, method, e))?;
            }
            return Ok(Value::Null);
        }
        let connection = self.shared.connection(None)?;
        connection
            .extension(self.index, method, payload)
            .map_err(|e| interrupted(&self.shared.name, method, e))
    }
}

/// The workspace roots of the task a call runs in (from its context), when it names them.
fn task_roots(call: &HandlerCall<'_>) -> Option<Vec<PathBuf>> {
    let roots: Vec<PathBuf> = (call.context.value()?.workspace_roots.iter())
        .map(|root| PathBuf::from(&root.path))
        .collect();
    (!roots.is_empty()).then_some(roots)
}

fn interrupted(plugin: &str, what: &str, error: Interrupted) -> CallError {
    match error {
        Interrupted::Failed(error) => error.into(),
        Interrupted::Ended(ending) => ended_error(plugin, what, &ending),
        Interrupted::TimedOut => CallError::new(ErrorKind::Timeout, "timed out"),
    }
}
