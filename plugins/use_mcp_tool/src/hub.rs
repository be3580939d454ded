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

mod connection;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    ReadResourceRequestParams, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::{Map, Value};

use crate::notices::Listener;
use crate::{remote, settings, sign_in, texts};
use connection::{reconnect, start, with_stderr, Connection, LIST_TIMEOUT};
pub use connection::{Egress, ListingEgress};

/// How long `shutdown` waits for one connection to close before the runtime stops.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// One server's connection, when it has one. The lock is held only while connecting.
type Slot = Arc<tokio::sync::Mutex<Option<Connection>>>;

static SLOTS: Mutex<BTreeMap<(PathBuf, String), Slot>> = Mutex::new(BTreeMap::new());

/// What a call needs from a connected server.
struct Ready {
    /// The server's name.
    server: String,
    /// A remote server's URL.
    url: Option<String>,
    peer: Peer<RoleClient>,
    timeout: Duration,
    has_resources: bool,
    stderr: Arc<Mutex<String>>,
    /// The tools a call of which may be made again (see [`connection::Connection`]).
    repeatable: BTreeSet<String>,
    /// Which connection it is.
    generation: u64,
}

/// The `tools/call` result as JSON (`content`, `isError`, ...), or the error's message. What
/// the server says about the request meanwhile goes to `listener`, and so do its requests: a
/// 2026-07-28 server's result that needs input first is answered through the listener's call
/// and the request sent again with the answers, at most [`INPUT_ROUNDS`] times. Dropping the
/// future (the call was cancelled) tells the server with `notifications/cancelled`.
pub async fn call_tool(
    file: &Path,
    server: &str,
    tool: &str,
    arguments: Option<Map<String, Value>>,
    listener: &Listener,
    egress: &dyn Egress,
) -> Result<Value, String> {
    let mut ready = connect(file, server, egress).await?;
    let mut params = CallToolRequestParams::new(tool.to_string());
    // Cline sends `{}` when the model gave no arguments.
    params.arguments = Some(arguments.unwrap_or_default());
    let mut made_again = false;
    for _ in 0..INPUT_ROUNDS {
        let answer = match send_call(&ready, params.clone(), listener).await {
            Err(Sent::Failed(error)) if lost(&error) => {
                // The connection is gone; the next use reconnects. A call its tool says may be
                // made twice is made again on the new connection, once.
                let message = describe(&error, &ready);
                forget(file, server, ready.generation).await;
                if made_again || !ready.repeatable.contains(tool) {
                    return Err(message);
                }
                made_again = true;
                ready = connect(file, server, egress)
                    .await
                    .map_err(|why| format!("{message}\n{why}"))?;
                continue;
            }
            Err(Sent::Failed(error)) => return Err(describe(&error, &ready)),
            Err(Sent::TimedOut) => return Err(TIMED_OUT.to_string()),
            Ok(answer) => answer,
        };
        let result = match answer {
            ServerResult::CallToolResult(result) => result,
            ServerResult::InputRequiredResult(needed) => {
                let mut responses = BTreeMap::new();
                for (key, request) in needed.input_requests.unwrap_or_default() {
                    let request = serde_json::to_value(request).map_err(|e| e.to_string())?;
                    let method = request["method"].as_str().unwrap_or_default().to_string();
                    // A form nobody answers is declined, as a session's would be.
                    let answer = listener
                        .ask(&method, request["params"].clone())
                        .await
                        .or_else(|| {
                            (method == "elicitation/create")
                                .then(|| serde_json::json!({"action": "decline"}))
                        })
                        .ok_or_else(|| texts::unanswered(server, &method))?;
                    responses.insert(key, answer);
                }
                params.input_responses = (!responses.is_empty()).then_some(responses);
                params.request_state = needed.request_state;
                continue;
            }
            _ => return Err(describe(&ServiceError::UnexpectedResponse, &ready)),
        };
        let mut result = serde_json::to_value(result).map_err(|e| e.to_string())?;
        if let Some(items) = result["content"].as_array_mut() {
            items.iter_mut().for_each(shortest_priority);
        }
        return Ok(result);
    }
    Err(texts::too_many_rounds(server, INPUT_ROUNDS))
}

/// How many rounds of input one call answers for a server.
const INPUT_ROUNDS: usize = 8;

/// Why a request got no answer.
enum Sent {
    /// Not within the server's timeout.
    TimedOut,
    /// The request failed.
    Failed(ServiceError),
}

/// The error text of a request that timed out (the TypeScript SDK's).
const TIMED_OUT: &str = "MCP error -32001: Request timed out";

/// Whether `error` says the connection was lost (the transport closed, or a request could not
/// be sent or answered), rather than that the server answered with an error or refused for
/// want of a sign-in.
fn lost(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    ) && remote::refusal(&remote::ServiceOrHandshake::Service(error)).is_none()
}

/// Sends one `tools/call` and waits for its answer within the server's timeout, `listener`
/// hearing what the server says about it.
async fn send_call(
    ready: &Ready,
    params: CallToolRequestParams,
    listener: &Listener,
) -> Result<ServerResult, Sent> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = ready
        .peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(Sent::Failed)?;
    let _listening = listener.register(&handle.progress_token);
    let cancel_on_drop = CancelOnDrop {
        peer: Some(ready.peer.clone()),
        request: handle.id.clone(),
    };
    let answer = tokio::time::timeout(ready.timeout, handle.await_response()).await;
    cancel_on_drop.disarm();
    answer.map_err(|_| Sent::TimedOut)?.map_err(Sent::Failed)
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
        .map_err(|e| describe(&e, &ready))?;
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
    // A connection lost (rather than one whose settings changed) is reconnected with backoff.
    let lost = held
        .as_ref()
        .is_some_and(|c| c.lost || c.client.is_closed() || c.client.peer().is_transport_closed());
    let stale = lost
        || held
            .as_ref()
            .is_some_and(|c| c.config.transport != config.transport);
    if stale {
        if let Some(old) = held.take() {
            close(old).await;
        }
    }
    if held.is_none() {
        let started = if lost {
            reconnect(server, config, egress).await
        } else {
            start(server, config, egress).await.map_err(|e| e.message)
        };
        *held = Some(started?);
    }
    let Some(connection) = held.as_mut() else {
        return Err(texts::no_connection(server));
    };
    // autoApprove and timeout changes apply without a restart, as in Cline.
    connection.config = config.clone();
    let url = match &config.transport {
        settings::Transport::Remote { url, .. } => Some(url.clone()),
        settings::Transport::Stdio { .. } => None,
    };
    Ok(Ready {
        server: server.to_string(),
        url,
        peer: connection.client.peer().clone(),
        timeout: config.timeout,
        has_resources: connection.has_resources,
        stderr: connection.stderr.clone(),
        repeatable: connection.repeatable.clone(),
        generation: connection.generation,
    })
}

/// Marks the connection `generation` to `server` of `file` lost: its next use reconnects. A
/// connection started since (by another call that saw the loss first) is left alone.
async fn forget(file: &Path, server: &str, generation: u64) {
    if let Some(connection) = slot(file, server).lock().await.as_mut() {
        if connection.generation == generation {
            connection.lost = true;
        }
    }
}

/// An error's message as the TypeScript MCP SDK words it (what Cline's users see); a remote
/// server's refusal for want of a sign-in says what to do instead.
fn describe(error: &ServiceError, ready: &Ready) -> String {
    let refusal = remote::refusal(&remote::ServiceOrHandshake::Service(error));
    if let (Some(url), Some(refusal)) = (&ready.url, refusal) {
        let why = sign_in::refused(&ready.server, url, &refusal);
        return format!("MCP server \"{}\" refused the request: {why}", ready.server);
    }
    let stderr = &ready.stderr;
    match error {
        ServiceError::McpError(data) => format!("MCP error {}: {}", data.code.0, data.message),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            with_stderr("MCP error -32000: Connection closed".to_string(), stderr)
        }
        other => other.to_string(),
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
        .map_err(|e| describe(&e, &ready))
}
