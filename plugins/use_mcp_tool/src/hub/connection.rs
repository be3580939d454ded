//! A server's connection and how it starts: spawning a stdio server or connecting to a remote
//! one (through the egress route), and the MCP handshake: 2026-07-28's `server/discover` first
//! for streamable HTTP servers, `initialize` for the others and for a streamable HTTP server
//! that does not speak 2026-07-28.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClient;
use rmcp::transport::{IntoTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use tokio::io::AsyncBufReadExt;
use tool_api::model::EgressRoute;

use crate::notices::HubClient;
use crate::remote::ServiceOrHandshake;
use crate::settings::{RemoteKind, ServerConfig, Transport};
use crate::{remote, sign_in, sse};

/// How long the list requests after connecting may take (Cline's 5 s).
pub(super) const LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection's client.
pub(super) type Client = RunningService<RoleClient, HubClient>;

/// A running server.
pub(super) struct Connection {
    /// The MCP client.
    pub(super) client: Client,
    /// The server's settings it was started with.
    pub(super) config: ServerConfig,
    /// Whether the server offers resources.
    pub(super) has_resources: bool,
    /// The tail of a stdio server's stderr.
    pub(super) stderr: Arc<Mutex<String>>,
    /// The tools whose annotations say a call may be made twice (read-only or idempotent): a
    /// call lost with its connection is made again on the new one.
    pub(super) repeatable: BTreeSet<String>,
    /// The connection was lost during a request: the next use connects again.
    pub(super) lost: bool,
    /// Which connection this is (each started one gets the next number), so that a request
    /// that failed on an earlier one does not mark this one lost.
    pub(super) generation: u64,
}

/// The number of the last connection started.
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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

/// `message`, followed by what the server last wrote to stderr, if anything.
pub(super) fn with_stderr(message: String, stderr: &Mutex<String>) -> String {
    let tail = stderr.lock().unwrap_or_else(PoisonError::into_inner);
    let tail = tail.trim();
    if tail.is_empty() {
        message
    } else {
        format!("{message}\nServer stderr:\n{tail}")
    }
}

/// How much of a server's standard error is kept for error messages.
const STDERR_TAIL: usize = 2048;

/// How long a failed start waits for the rest of the server's stderr (it ends when the server
/// exits).
const STDERR_WAIT: Duration = Duration::from_millis(500);

/// Starts (or connects to) a server and runs the MCP handshake, within the server's timeout.
/// A remote server is reached through `egress`'s route.
pub(super) async fn start(
    name: &str,
    config: &ServerConfig,
    egress: &dyn Egress,
) -> Result<Connection, StartError> {
    let failed = |why: String| StartError {
        message: format!("MCP server \"{name}\" could not be started: {why}"),
        refused: false,
    };
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
            initialize(name, transport, config.timeout, Lifecycle::Initialize, None).await
        }
        Transport::Remote {
            kind: RemoteKind::StreamableHttp,
            url,
            headers,
        } => {
            let client = remote::client(url, headers, route.as_ref()).map_err(failed)?;
            match sign_in::authorized(url, client.clone())
                .await
                .map_err(failed)?
            {
                Some(signed_in) => streamable_http(name, url, signed_in, config.timeout).await,
                None => streamable_http(name, url, client, config.timeout).await,
            }
        }
        Transport::Remote {
            kind: RemoteKind::Sse,
            url,
            headers,
        } => {
            let client = remote::client(url, headers, route.as_ref()).map_err(failed)?;
            // Opening the event stream is part of connecting: one timeout covers both.
            let connect = async {
                let worker = sse::connect(client, url).await.map_err(Handshake::Failed)?;
                initialize(
                    name,
                    worker,
                    config.timeout,
                    Lifecycle::Initialize,
                    Some(url),
                )
                .await
            };
            tokio::time::timeout(config.timeout, connect)
                .await
                .unwrap_or_else(|_| Err(Handshake::Failed(no_answer(config.timeout))))
        }
    };
    if handshake.is_err() {
        // A server that failed has usually exited: its last words are on their way.
        if let Some(reader) = tail_reader {
            let _ = tokio::time::timeout(STDERR_WAIT, reader).await;
        }
    }
    let client = handshake.map_err(|why| {
        let refused = matches!(why, Handshake::Refused(_));
        let message = explained(
            with_stderr(why.into_message(), &tail),
            route.as_ref(),
            egress,
        );
        StartError {
            refused,
            ..failed(message)
        }
    })?;
    let has_resources = client
        .peer_info()
        .is_some_and(|info| info.capabilities.resources.is_some());
    // Listed as Cline does after connecting; a failing list is not a failed start.
    let listed = tokio::time::timeout(LIST_TIMEOUT, client.list_all_tools()).await;
    let repeatable = listed
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
        .into_iter()
        .filter(|tool| {
            tool.annotations
                .as_ref()
                .is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true))
        })
        .map(|tool| tool.name.to_string())
        .collect();
    Ok(Connection {
        client,
        config: config.clone(),
        has_resources,
        stderr: tail,
        repeatable,
        lost: false,
        generation: GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
    })
}

/// How long to wait before each new attempt to reconnect a server whose connection was lost.
/// Cline reconnects in the background, doubling from 2 s over six attempts; here a call waits
/// for it, so the steps are shorter, and they end at the server's timeout.
const RECONNECT_DELAYS: [Duration; 4] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];

/// [`start`] again for a server that was connected and was lost: a server restarting is
/// given [`RECONNECT_DELAYS`] to come back (within its timeout). A refusal for want of a
/// sign-in is not tried again.
pub(super) async fn reconnect(
    name: &str,
    config: &ServerConfig,
    egress: &dyn Egress,
) -> Result<Connection, String> {
    let deadline = tokio::time::Instant::now() + config.timeout;
    let mut delays = RECONNECT_DELAYS.iter();
    loop {
        // Each attempt ends at the deadline too, so that the whole stays within the timeout.
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let attempt = tokio::time::timeout(left, start(name, config, egress)).await;
        let why = match attempt {
            Ok(Ok(connection)) => return Ok(connection),
            Ok(Err(why)) => why,
            Err(_) => {
                return Err(format!(
                    "MCP server \"{name}\" could not be started: {}",
                    no_answer(config.timeout)
                ))
            }
        };
        match delays.next() {
            Some(delay) if !why.refused && tokio::time::Instant::now() + *delay < deadline => {
                tokio::time::sleep(*delay).await;
            }
            _ => return Err(why.message),
        }
    }
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

/// The handshake with a streamable HTTP server over `client`: 2026-07-28 first, then, for a
/// server of 2025-11-25 or older (which may answer `server/discover` with anything: an HTTP
/// error, a closed stream), `initialize` on a fresh connection.
async fn streamable_http<C>(
    name: &str,
    url: &str,
    client: C,
    timeout: Duration,
) -> Result<Client, Handshake>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    let transport = || remote::streamable_http(url, client.clone());
    match initialize(name, transport(), timeout, Lifecycle::Auto, Some(url)).await {
        // A refusal for want of a sign-in is the answer, whichever version the server speaks.
        done @ (Ok(_) | Err(Handshake::Refused(_))) => done,
        Err(Handshake::Failed(_)) => {
            initialize(name, transport(), timeout, Lifecycle::Initialize, Some(url)).await
        }
    }
}

/// Why a server could not be started.
pub(super) struct StartError {
    /// What to tell the user.
    pub(super) message: String,
    /// The server refused for want of a sign-in: trying again will not help.
    pub(super) refused: bool,
}

/// Why a handshake failed.
enum Handshake {
    /// The server refused it for want of a sign-in (what to do).
    Refused(String),
    /// Anything else.
    Failed(String),
}

impl Handshake {
    fn into_message(self) -> String {
        match self {
            Handshake::Refused(why) | Handshake::Failed(why) => why,
        }
    }
}

/// How a connection starts.
enum Lifecycle {
    /// 2025-11-25 and older: `initialize`, then `initialized` (stdio and legacy SSE servers,
    /// which may ignore a method they do not know rather than refuse it).
    Initialize,
    /// 2026-07-28 first (`server/discover`, then every request self-contained), the older
    /// handshake for a server that says it does not speak it (streamable HTTP servers).
    Auto,
}

/// The MCP handshake over `transport` as Cline's client; a remote server's (at `url`) refusal
/// for want of a sign-in says what to do.
async fn initialize<T, E, A>(
    server: &str,
    transport: T,
    timeout: Duration,
    lifecycle: Lifecycle,
    url: Option<&str>,
) -> Result<Client, Handshake>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    // What the calls' users and clients can answer (see `upstream`): forms and URLs to visit,
    // messages of the client's model where a frontend relays them, the workspace's roots.
    let capabilities: ClientCapabilities = serde_json::from_value(serde_json::json!({
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
        "roots": {}
    }))
    .unwrap_or_default();
    let info = HubClient {
        info: ClientConfig::new(
            capabilities,
            Implementation::new("Cline", env!("CARGO_PKG_VERSION")),
        ),
        server: server.to_string(),
    };
    let lifecycle = match lifecycle {
        Lifecycle::Initialize => ClientLifecycleMode::Initialize,
        Lifecycle::Auto => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        },
    };
    match tokio::time::timeout(timeout, info.serve_with_lifecycle(transport, lifecycle)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(
            match (url, remote::refusal(&ServiceOrHandshake::Handshake(&e))) {
                (Some(url), Some(refusal)) => {
                    Handshake::Refused(sign_in::refused(server, url, &refusal))
                }
                _ => Handshake::Failed(remote::handshake_error(&e)),
            },
        ),
        Err(_) => Err(Handshake::Failed(no_answer(timeout))),
    }
}

/// Why a server that did not complete the handshake in time could not be started.
fn no_answer(timeout: Duration) -> String {
    format!("no answer to initialize within {} s", timeout.as_secs_f64())
}
