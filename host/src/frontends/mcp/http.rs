//! `toolhost mcp --http ADDR`: the same MCP server over streamable HTTP (rmcp's server, served
//! by hyper), for remote agents and several clients sharing one host.
//!
//! - Every request needs `Authorization: Bearer TOKEN`. The token is read from `--token-file`,
//!   else `$TOOLHOST_MCP_TOKEN` (as the process started); with neither, one is generated and
//!   printed once on stderr. A wrong or missing token is `401` before rmcp sees the request.
//! - A request with an `Origin` header is served only from the loopback origins and those
//!   given with `--allow-origin` (the MCP specification's DNS-rebinding warning); `Host` must be
//!   a loopback name unless the address is another one. rmcp enforces both.
//! - Each session (`initialize`, `Mcp-Session-Id`) is a task of its own over the shared
//!   plugins ([`crate::Host::new_task`]); `DELETE` ends it and cancels its calls (answered
//!   `200`); a session idle for `--session-idle` seconds expires.
//! - A body over `[limits] max_request_bytes` is `413`.
//! - Slow or many clients: hyper's header timeout (`[limits] header_timeout_secs`), the
//!   connection limits ([`super::http_conns`]: `503` beyond them), the session cap
//!   ([`super::http_sessions`]), and a 100 ms pause when accepting runs out of descriptors.
//! - A connection from a process that a tool call started ([`super::peer_origin`]) is `403`:
//!   approvals must come from the user. `$TOOLHOST_MCP_TOKEN` leaves the environment at start
//!   ([`take_env_token`]), so nothing the host runs inherits it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower_service::Service;

use super::http_conns::{Admitted, Connections, Refused};
use super::http_sessions::{CappedSessions, SessionError};
use super::peer_origin::{self, Origin};
use super::server::McpServer;
use crate::frontends::FrontendError;
use crate::Host;

/// How `--http` serves.
pub struct HttpOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The bearer token every request must carry.
    pub token: String,
    /// Browser origins allowed besides the loopback ones.
    pub allowed_origins: Vec<String>,
    /// How long a session may stay idle before it expires.
    pub session_idle: Duration,
}

/// The address of `--http`: `HOST:PORT`, or a port alone (on 127.0.0.1).
pub fn parse_addr(text: &str) -> Result<SocketAddr, FrontendError> {
    if let Ok(port) = text.trim_start_matches(':').parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|source| FrontendError::HttpAddr {
        text: text.to_string(),
        source,
    })
}

/// The environment variable a token may be given in.
const TOKEN_ENV: &str = "TOOLHOST_MCP_TOKEN";

/// `$TOOLHOST_MCP_TOKEN` as the process started with it ([`take_env_token`]).
static ENV_TOKEN: OnceLock<Option<String>> = OnceLock::new();

/// Takes `$TOOLHOST_MCP_TOKEN` out of the process's environment and keeps it for `--http`, so
/// that nothing the host starts (commands, hooks, MCP servers, plugin workers) inherits it.
/// Called first thing in `main`, while the process has one thread: changing the environment
/// races with any other thread reading it.
pub fn take_env_token() {
    let token = std::env::var(TOKEN_ENV).ok();
    std::env::remove_var(TOKEN_ENV);
    let _ = ENV_TOKEN.set(token);
}

/// The bearer token: the file's first line, else the environment's, else a new one (printed).
pub fn token(file: Option<&std::path::Path>) -> Result<String, FrontendError> {
    if let Some(file) = file {
        let text = std::fs::read_to_string(file).map_err(|source| FrontendError::TokenFile {
            path: file.to_path_buf(),
            source,
        })?;
        let token = text.lines().next().unwrap_or_default().trim().to_string();
        if token.is_empty() {
            return Err(FrontendError::EmptyToken {
                path: file.to_path_buf(),
            });
        }
        return Ok(token);
    }
    if let Some(token) = ENV_TOKEN
        .get()
        .and_then(Option::as_deref)
        .filter(|t| !t.trim().is_empty())
    {
        return Ok(token.trim().to_string());
    }
    let token = crate::egress::tokens::new_token();
    eprintln!("toolhost mcp: no token set (--token-file or TOOLHOST_MCP_TOKEN); clients must send: Authorization: Bearer {token}");
    Ok(token)
}

/// Serves `base`'s plugins over HTTP until the process ends; every session (and every
/// 2026-07-28 request, which has none) is served by a server `session` makes.
pub async fn serve(
    base: Arc<Host>,
    options: HttpOptions,
    session: impl Fn(&Arc<Host>) -> McpServer + Send + Sync + 'static,
) -> Result<(), FrontendError> {
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|source| FrontendError::Listen {
            addr: options.addr,
            source,
        })?;
    let bound = listener.local_addr().map_err(FrontendError::LocalAddr)?;
    eprintln!("toolhost mcp: serving MCP over streamable HTTP at http://{bound}/mcp");
    let limits = base.settings().limits.clone();
    let mut origins: Vec<String> = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
        .into_iter()
        .map(str::to_string)
        .collect();
    origins.extend(options.allowed_origins);
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    if !bound.ip().is_loopback() {
        hosts.push(bound.ip().to_string());
        hosts.push(bound.to_string());
    }
    let body_limit = usize::try_from(limits.max_request_bytes).unwrap_or(usize::MAX);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(body_limit.max(1));
    let mut local_sessions = LocalSessionManager::default();
    local_sessions.session_config.keep_alive = Some(options.session_idle);
    let sessions = Arc::new(CappedSessions::new(
        local_sessions,
        to_usize(limits.max_sessions),
    ));
    let factory_base = base.clone();
    let mcp =
        StreamableHttpService::new(move || Ok(session(&factory_base)), sessions.clone(), config);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout());
    let shared = Arc::new(Shared {
        mcp,
        sessions,
        token: options.token.into(),
        http,
        checks: tokio::sync::Semaphore::new(ORIGIN_CHECKS),
    });
    let connections = Connections::new(
        to_usize(limits.max_connections),
        to_usize(limits.max_connections_per_peer),
    );
    warn_if_few_descriptors(to_usize(limits.max_connections));
    let mut out_of_descriptors_told = false;
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            // Out of descriptors (or memory): accepting again at once would fail the same way
            // and spin; connections wait in the backlog until some close.
            Err(e) if out_of_resources(&e) => {
                if !std::mem::replace(&mut out_of_descriptors_told, true) {
                    tracing::warn!(target: "toolhost::mcp", "accepting connections failed: {e}; retrying every 100 ms (raise the open-files limit, `ulimit -n`, or lower [limits] max_connections)");
                } else {
                    tracing::debug!(target: "toolhost::mcp", "accept failed: {e}");
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Err(e) => {
                tracing::debug!(target: "toolhost::mcp", "accept failed: {e}");
                continue;
            }
        };
        let admitted = match connections.admit(peer.ip()) {
            Ok(admitted) => admitted,
            Err(refused) => {
                refuse(&stream, refused);
                continue;
            }
        };
        // An answer is written in pieces (headers, then server-sent events): with Nagle's
        // algorithm each would wait for the client's delayed ACK, 40 ms a call.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(target: "toolhost::mcp", "TCP_NODELAY not set: {e}");
        }
        let local = stream.local_addr().unwrap_or(bound);
        tokio::spawn(serve_connection(
            shared.clone(),
            stream,
            peer,
            local,
            admitted,
        ));
    }
}

/// How many peer-origin checks (each a walk of `/proc`) run at once.
const ORIGIN_CHECKS: usize = 2;

/// What every connection of the server shares.
struct Shared {
    mcp: StreamableHttpService<McpServer, CappedSessions>,
    sessions: Arc<CappedSessions>,
    token: Arc<str>,
    http: hyper::server::conn::http1::Builder,
    checks: tokio::sync::Semaphore,
}

/// Serves one admitted connection until it ends or is closed to make room for another.
async fn serve_connection(
    shared: Arc<Shared>,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    local: SocketAddr,
    admitted: Admitted,
) {
    let closed = admitted.closed.clone();
    let admitted = Arc::new(admitted);
    // Checked once per connection, on its first request (a connection that never completes
    // one costs no walk of /proc).
    let refusal = Arc::new(tokio::sync::OnceCell::new());
    let connection_shared = shared.clone();
    let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
        let (shared, admitted, refusal) =
            (connection_shared.clone(), admitted.clone(), refusal.clone());
        async move {
            let refused = refusal
                .get_or_init(|| refuse_tool_calls(&shared.checks, peer, local))
                .await;
            if let Some(text) = refused {
                return Ok::<_, std::convert::Infallible>(text_response(
                    http::StatusCode::FORBIDDEN,
                    text.clone(),
                ));
            }
            if !authorized(&request, &shared.token) {
                return Ok(unauthorized());
            }
            admitted.prove();
            let opening = request.method() == http::Method::POST
                && !request.headers().contains_key("mcp-session-id");
            if opening && shared.sessions.is_full() {
                let full = SessionError::Full(shared.sessions.cap());
                return Ok(text_response(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    format!("{full}\n"),
                ));
            }
            let ending_session = request.method() == http::Method::DELETE;
            let mut response = shared.mcp.clone().call(request).await?;
            // rmcp answers a session's DELETE `202 Accepted` once the session has ended; the
            // Python SDK takes anything but 200 or 204 for a failure and warns on every close,
            // so the answer says what happened: 200.
            if ending_session && response.status() == http::StatusCode::ACCEPTED {
                *response.status_mut() = http::StatusCode::OK;
            }
            Ok(response)
        }
    });
    let served = shared.http.serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        served = served => {
            if let Err(e) = served {
                tracing::debug!(target: "toolhost::mcp", "HTTP connection ended: {e}");
            }
        }
        // Dropping the connection closes it.
        () = closed.cancelled() => {}
    }
}

/// `None` for a peer that may open sessions; else the text of the `403` for a process that a
/// toolhost tool call started (or that cannot be told from one), which is also logged.
async fn refuse_tool_calls(
    checks: &tokio::sync::Semaphore,
    peer: SocketAddr,
    local: SocketAddr,
) -> Option<String> {
    let _permit = checks.acquire().await.ok();
    let started = std::time::Instant::now();
    let origin = tokio::task::spawn_blocking(move || peer_origin::origin(peer, local))
        .await
        .unwrap_or_else(|e| Origin::Unknown(format!("the check failed: {e}")));
    tracing::debug!(target: "toolhost::mcp", "the peer {peer} is {origin:?} (found in {:?})", started.elapsed());
    let why = match origin {
        Origin::Remote | Origin::User => return None,
        Origin::ToolCall { pid, by } => format!(
            "it comes from a process started by a toolhost tool call (pid {pid}, under {by})"
        ),
        Origin::Unknown(why) => format!(
            "it may come from a process started by a toolhost tool call, and that cannot be \
             ruled out ({why})"
        ),
    };
    let text = format!(
        "toolhost mcp refused the connection from {peer}: {why}. Processes started by tool \
         calls (sandboxed commands, plugins, the host's own commands, hooks and MCP servers) \
         may not open MCP sessions, because approvals must come from the user; no setting \
         allows it.\n"
    );
    tracing::warn!(target: "toolhost::mcp", "{}", text.trim_end());
    Some(text)
}

/// Answers a connection beyond the limits `503` at once and closes it.
fn refuse(stream: &tokio::net::TcpStream, refused: Refused) {
    static TOLD: AtomicBool = AtomicBool::new(false);
    let text = refused.text();
    if !TOLD.swap(true, Ordering::Relaxed) {
        tracing::warn!(target: "toolhost::mcp", "{}", text.trim_end());
    } else {
        tracing::debug!(target: "toolhost::mcp", "{}", text.trim_end());
    }
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
    // Written without waiting: a few hundred bytes fit any socket buffer, and a client that
    // does not read gets nothing to hold the server up with.
    let _ = stream.try_write(response.as_bytes());
    // What the client already sent is read first, so that closing does not reset the
    // connection before the answer reaches it (bounded: a client sending on and on).
    let mut sink = [0u8; 4096];
    for _ in 0..16 {
        if !matches!(stream.try_read(&mut sink), Ok(n) if n > 0) {
            break;
        }
    }
}

/// Whether an accept error is the process or system running out of descriptors or memory.
fn out_of_resources(e: &std::io::Error) -> bool {
    use nix::libc::{EMFILE, ENFILE, ENOBUFS, ENOMEM};
    matches!(e.raw_os_error(), Some(EMFILE | ENFILE | ENOBUFS | ENOMEM))
}

/// Warns when the open-files limit leaves no room for `max_connections` besides the plugins'
/// and workers' own descriptors.
fn warn_if_few_descriptors(max_connections: usize) {
    const ROOM: u64 = 128;
    let Ok((soft, _)) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
    else {
        return;
    };
    let wanted = u64::try_from(max_connections)
        .unwrap_or(u64::MAX)
        .saturating_add(ROOM);
    if soft < wanted {
        tracing::warn!(target: "toolhost::mcp", "the open-files limit ({soft}) is below [limits] max_connections ({max_connections}) plus {ROOM} for the host: connections beyond it wait (raise it with `ulimit -n {wanted}`)");
    }
}

fn to_usize(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Whether the request carries `Authorization: Bearer TOKEN` (compared in constant time).
fn authorized<B>(request: &http::Request<B>, token: &str) -> bool {
    let Some(given) = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    let (given, token) = (given.trim().as_bytes(), token.as_bytes());
    given.len() == token.len()
        && given
            .iter()
            .zip(token)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

type Body = http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>;

fn unauthorized() -> http::Response<Body> {
    let mut response = text_response(
        http::StatusCode::UNAUTHORIZED,
        "missing or wrong bearer token (Authorization: Bearer TOKEN)\n".to_string(),
    );
    response.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    response
}

/// A plain-text answer that closes the connection unless it is a `401` (a client may retry
/// with the token on the same connection).
fn text_response(status: http::StatusCode, text: String) -> http::Response<Body> {
    let mut response =
        http::Response::new(http_body_util::Full::new(bytes::Bytes::from(text)).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if status != http::StatusCode::UNAUTHORIZED {
        headers.insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    response
}
