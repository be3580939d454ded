//! The McpHub: the plugin's MCP client connections, one per configured server, shared by every
//! task and call of this plugin image.
//!
//! A server is started on its first use (not when the plugin loads: a host that never calls an
//! MCP tool should not spawn anything), and started again on the next call after it exited. The
//! settings file is read again on every call, standing in for Cline's file watcher: a server
//! whose command changed is restarted, a removed one is no longer reachable. Connections are
//! keyed by settings file and server name, so hosts with different settings files in one process
//! do not mix their servers. Only the plugin's `shutdown` stops them (servers are shared across
//! tasks, so a task's end is no trigger).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, Implementation, ReadResourceRequestParams, RequestId,
    ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::transport::{IntoTransport, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::{Map, Value};
use tokio::io::AsyncBufReadExt;
use tool_api::model::EgressRoute;

use crate::notices::{HubClient, Listener};
use crate::settings::{self, RemoteKind, ServerConfig, Transport};
use crate::{remote, sse, texts};

/// How long the list requests after connecting may take (Cline's 5 s).
const LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// How much of a server's standard error is kept for error messages.
const STDERR_TAIL: usize = 2048;

/// How long a failed start waits for the rest of the server's stderr (it ends when the server
/// exits).
const STDERR_WAIT: Duration = Duration::from_millis(500);

/// How long `shutdown` waits for one connection to close before the runtime stops.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

type Client = RunningService<RoleClient, HubClient>;

/// A running server.
struct Connection {
    client: Client,
    config: ServerConfig,
    has_resources: bool,
    stderr: Arc<Mutex<String>>,
}

/// How the hub reaches the host's egress proxy for a remote server's connection: through a
/// call's services (asked as the call's user, logged under its task) or a listing's route
/// (asking nobody). The connection keeps the route it was made with for its whole life, so
/// the calls of later tasks go through it too.
pub trait Egress {
    /// The route of a new remote connection; `None`: the host has no egress proxy.
    fn route(&self) -> Result<Option<EgressRoute>, String>;

    /// Why the proxy refused or could not make the connections of `route` lately (none
    /// when they cannot be asked for).
    fn refusals(&self, route: &EgressRoute) -> Vec<String>;
}

/// A listing's access to the egress proxy: the route the host gave its query.
pub struct ListingEgress(pub Option<EgressRoute>);

impl Egress for ListingEgress {
    fn route(&self) -> Result<Option<EgressRoute>, String> {
        Ok(self.0.clone())
    }

    fn refusals(&self, _route: &EgressRoute) -> Vec<String> {
        Vec::new()
    }
}

/// One server's connection, when it has one. The lock is held only while connecting.
type Slot = Arc<tokio::sync::Mutex<Option<Connection>>>;

static SLOTS: Mutex<BTreeMap<(PathBuf, String), Slot>> = Mutex::new(BTreeMap::new());

/// What a call needs from a connected server.
struct Ready {
    peer: Peer<RoleClient>,
    timeout: Duration,
    has_resources: bool,
    stderr: Arc<Mutex<String>>,
}

/// `message` (why a remote server could not be started) with the egress refusals of its
/// route added, unless the message already quotes them: through the proxy, a refused or
/// failed connection reaches the client as an HTTP status whose body it may not show. (Once
/// a server runs, its errors are its own: the refusals of its later requests stay with the
/// route.)
fn explained(mut message: String, route: Option<&EgressRoute>, egress: &dyn Egress) -> String {
    for refusal in route
        .map(|route| egress.refusals(route))
        .unwrap_or_default()
    {
        if !message.contains(&refusal) {
            message.push('\n');
            message.push_str(&refusal);
        }
    }
    message
}

/// The `tools/call` result as JSON (`content`, `isError`, ...), or the error's message. What
/// the server says about the request meanwhile goes to `listener`. Dropping the future (the
/// call was cancelled) tells the server with `notifications/cancelled`.
pub async fn call_tool(
    file: &Path,
    server: &str,
    tool: &str,
    arguments: Option<Map<String, Value>>,
    listener: &Listener,
    egress: &dyn Egress,
) -> Result<Value, String> {
    let ready = connect(file, server, egress).await?;
    let mut params = CallToolRequestParams::new(tool.to_string());
    // Cline sends `{}` when the model gave no arguments.
    params.arguments = Some(arguments.unwrap_or_default());
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = ready
        .peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(|e| describe(&e, &ready.stderr))?;
    let _listening = listener.register(&handle.progress_token);
    let cancel_on_drop = CancelOnDrop {
        peer: Some(ready.peer.clone()),
        request: handle.id.clone(),
    };
    let answer = tokio::time::timeout(ready.timeout, handle.await_response()).await;
    cancel_on_drop.disarm();
    let answer = answer
        .map_err(|_| "MCP error -32001: Request timed out".to_string())?
        .map_err(|e| describe(&e, &ready.stderr))?;
    let ServerResult::CallToolResult(result) = answer else {
        return Err(describe(&ServiceError::UnexpectedResponse, &ready.stderr));
    };
    let mut result = serde_json::to_value(result).map_err(|e| e.to_string())?;
    if let Some(items) = result["content"].as_array_mut() {
        items.iter_mut().for_each(shortest_priority);
    }
    Ok(result)
}

/// Tells the server that a request is no longer awaited, unless disarmed: rmcp's own
/// `call_tool` does so, but it hides the request's progress token, which the listener needs.
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    request: RequestId,
}

impl CancelOnDrop {
    fn disarm(mut self) {
        self.peer = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(peer), Ok(runtime)) = (self.peer.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let cancelled = CancelledNotificationParam::new(
            Some(self.request.clone()),
            Some("the call was cancelled".to_string()),
        );
        runtime.spawn(async move {
            let _ = peer.notify_cancelled(cancelled).await;
        });
    }
}

/// rmcp holds an annotation's priority as an `f32`, which becomes an `f64` digit for digit in
/// JSON values (0.9 reads 0.8999999761581421): written again as the `f32` it is, the number
/// the server sent.
fn shortest_priority(item: &mut Value) {
    let Some(priority) = item.pointer_mut("/annotations/priority") else {
        return;
    };
    #[allow(clippy::cast_possible_truncation)] // the value came from an `f32`
    let narrow = priority.as_f64().map(|wide| wide as f32);
    if let Some(shortest) = narrow.and_then(|n| n.to_string().parse::<serde_json::Number>().ok()) {
        *priority = Value::Number(shortest);
    }
}

/// The `resources/read` result's `contents`, or the error's message.
pub async fn read_resource(
    file: &Path,
    server: &str,
    uri: &str,
    egress: &dyn Egress,
) -> Result<Vec<Value>, String> {
    let ready = connect(file, server, egress).await?;
    if !ready.has_resources {
        return Err(format!(
            "MCP server \"{server}\" does not provide resources"
        ));
    }
    let result = ready
        .peer
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map_err(|e| describe(&e, &ready.stderr))?;
    let value = serde_json::to_value(result).map_err(|e| e.to_string())?;
    Ok(value["contents"].as_array().cloned().unwrap_or_default())
}

/// Whether `tool` of `server` is listed in the server's `autoApprove`.
pub fn auto_approved(file: &Path, server: &str, tool: &str) -> bool {
    settings::load(file)
        .ok()
        .and_then(|servers| servers.get(server).cloned())
        .is_some_and(|config| config.auto_approve.iter().any(|t| t == tool))
}

/// The names of the servers of `file` that are running now.
pub fn connected(file: &Path) -> Vec<String> {
    let slots: Vec<(String, Slot)> = SLOTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter(|((f, _), _)| f == file)
        .map(|((_, name), slot)| (name.clone(), slot.clone()))
        .collect();
    slots
        .into_iter()
        .filter(|(_, slot)| {
            slot.try_lock().is_ok_and(|held| {
                held.as_ref().is_some_and(|c| {
                    !c.client.is_closed() && !c.client.peer().is_transport_closed()
                })
            })
        })
        .map(|(name, _)| name)
        .collect()
}

/// Stops every server (the plugin's shutdown, from a plain thread, before the runtime stops).
pub fn shutdown() {
    let slots: Vec<Slot> =
        std::mem::take(&mut *SLOTS.lock().unwrap_or_else(PoisonError::into_inner))
            .into_values()
            .collect();
    let _ = tool_api::sdk::runtime::block_on(async move {
        for slot in slots {
            // A slot still locked is connecting; dropping the runtime drops that future and
            // with it the child (spawned with kill_on_drop).
            let Ok(mut held) = slot.try_lock() else {
                continue;
            };
            if let Some(connection) = held.take() {
                close(connection).await;
            }
        }
    });
}

/// Closes a connection: ends the session, which drops the transport and kills the child.
async fn close(connection: Connection) {
    let mut client = connection.client;
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, client.close()).await;
}

/// The slot of `server` in `file`, created empty on first use.
fn slot(file: &Path, server: &str) -> Slot {
    SLOTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry((file.to_path_buf(), server.to_string()))
        .or_default()
        .clone()
}

/// The server's connection, started (or restarted) when needed.
async fn connect(file: &Path, server: &str, egress: &dyn Egress) -> Result<Ready, String> {
    let configs = settings::load(file)?;
    let Some(config) = configs.get(server) else {
        return Err(texts::no_connection(server));
    };
    if config.disabled {
        return Err(texts::disabled(server));
    }
    let slot = slot(file, server);
    let mut held = slot.lock().await;
    let stale = held.as_ref().is_some_and(|c| {
        c.client.is_closed()
            || c.client.peer().is_transport_closed()
            || c.config.transport != config.transport
    });
    if stale {
        if let Some(old) = held.take() {
            close(old).await;
        }
    }
    if held.is_none() {
        *held = Some(start(server, config, egress).await?);
    }
    let Some(connection) = held.as_mut() else {
        return Err(texts::no_connection(server));
    };
    // autoApprove and timeout changes apply without a restart, as in Cline.
    connection.config = config.clone();
    Ok(Ready {
        peer: connection.client.peer().clone(),
        timeout: config.timeout,
        has_resources: connection.has_resources,
        stderr: connection.stderr.clone(),
    })
}

/// Starts (or connects to) a server and runs the MCP handshake, within the server's timeout.
/// A remote server is reached through `egress`'s route.
async fn start(
    name: &str,
    config: &ServerConfig,
    egress: &dyn Egress,
) -> Result<Connection, String> {
    let failed = |why: String| format!("MCP server \"{name}\" could not be started: {why}");
    let tail = Arc::new(Mutex::new(String::new()));
    let mut tail_reader = None;
    let route = match &config.transport {
        Transport::Stdio { .. } => None,
        Transport::Remote { .. } => egress.route().map_err(failed)?,
    };
    let handshake = match &config.transport {
        Transport::Stdio {
            command,
            args,
            cwd,
            env,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).envs(env).kill_on_drop(true);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            // The server's stderr must not reach the host's terminal (or a protocol stream); its
            // tail explains failures.
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| failed(e.to_string()))?;
            if let Some(stderr) = stderr {
                tail_reader = Some(keep_tail(stderr, tail.clone()));
            }
            initialize(name, transport, config.timeout).await
        }
        Transport::Remote {
            kind: RemoteKind::StreamableHttp,
            url,
            headers,
        } => {
            let transport =
                remote::streamable_http(url, headers, route.as_ref()).map_err(failed)?;
            initialize(name, transport, config.timeout).await
        }
        Transport::Remote {
            kind: RemoteKind::Sse,
            url,
            headers,
        } => {
            let client = remote::client(url, headers, route.as_ref()).map_err(failed)?;
            // Opening the event stream is part of connecting: one timeout covers both.
            let connect = async {
                let worker = sse::connect(client, url).await?;
                initialize(name, worker, config.timeout).await
            };
            tokio::time::timeout(config.timeout, connect)
                .await
                .unwrap_or_else(|_| Err(no_answer(config.timeout)))
        }
    };
    if handshake.is_err() {
        // A server that failed has usually exited: its last words are on their way.
        if let Some(reader) = tail_reader {
            let _ = tokio::time::timeout(STDERR_WAIT, reader).await;
        }
    }
    let client = handshake
        .map_err(|why| failed(explained(with_stderr(why, &tail), route.as_ref(), egress)))?;
    let has_resources = client
        .peer_info()
        .is_some_and(|info| info.capabilities.resources.is_some());
    // Listed as Cline does after connecting; a failing list is not a failed start.
    let _ = tokio::time::timeout(LIST_TIMEOUT, client.list_all_tools()).await;
    Ok(Connection {
        client,
        config: config.clone(),
        has_resources,
        stderr: tail,
    })
}

/// Keeps the last [`STDERR_TAIL`] bytes a server writes to stderr in `tail`.
fn keep_tail(
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<String>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut kept = tail.lock().unwrap_or_else(PoisonError::into_inner);
            kept.push_str(&line);
            kept.push('\n');
            if kept.len() > STDERR_TAIL {
                let mut cut = kept.len() - STDERR_TAIL;
                while !kept.is_char_boundary(cut) {
                    cut += 1;
                }
                kept.drain(..cut);
            }
        }
    })
}

/// The MCP handshake over `transport` as Cline's client (`initialize`, then `initialized`).
async fn initialize<T, E, A>(
    server: &str,
    transport: T,
    timeout: Duration,
) -> Result<Client, String>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let info = HubClient {
        info: ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("Cline", env!("CARGO_PKG_VERSION")),
        ),
        server: server.to_string(),
    };
    match tokio::time::timeout(timeout, info.serve(transport)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(remote::handshake_error(&e)),
        Err(_) => Err(no_answer(timeout)),
    }
}

/// Why a server that did not complete the handshake in time could not be started.
fn no_answer(timeout: Duration) -> String {
    format!("no answer to initialize within {} s", timeout.as_secs_f64())
}

/// An error's message as the TypeScript MCP SDK words it (what Cline's users see).
fn describe(error: &ServiceError, stderr: &Mutex<String>) -> String {
    match error {
        ServiceError::McpError(data) => format!("MCP error {}: {}", data.code.0, data.message),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            with_stderr("MCP error -32000: Connection closed".to_string(), stderr)
        }
        other => other.to_string(),
    }
}

/// `message`, followed by what the server last wrote to stderr, if anything.
fn with_stderr(message: String, stderr: &Mutex<String>) -> String {
    let tail = stderr.lock().unwrap_or_else(PoisonError::into_inner);
    let tail = tail.trim();
    if tail.is_empty() {
        message
    } else {
        format!("{message}\nServer stderr:\n{tail}")
    }
}

/// The tools `server` of `file` offers now (`tools/list`), starting it when needed.
pub async fn list_tools(
    file: &Path,
    server: &str,
    egress: &dyn Egress,
) -> Result<Vec<rmcp::model::Tool>, String> {
    let ready = connect(file, server, egress).await?;
    tokio::time::timeout(LIST_TIMEOUT, ready.peer.list_all_tools())
        .await
        .map_err(|_| format!("MCP server \"{server}\" did not list its tools within 5 s"))?
        .map_err(|e| describe(&e, &ready.stderr))
}
