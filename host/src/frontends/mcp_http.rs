//! `toolhost mcp --http ADDR`: the same MCP server over streamable HTTP (rmcp's server, served
//! by hyper), for remote agents and several clients sharing one host.
//!
//! - Every request needs `Authorization: Bearer TOKEN`. The token is read from `--token-file`,
//!   else `$TOOLHOST_MCP_TOKEN`; with neither, one is generated and printed once on stderr.
//!   A wrong or missing token is `401` before rmcp sees the request.
//! - A request with an `Origin` header is served only from the loopback origins and those
//!   given with `--allow-origin` (the MCP specification's DNS-rebinding warning); `Host` must be
//!   a loopback name unless the address is another one. rmcp enforces both.
//! - Each session (`initialize`, `Mcp-Session-Id`) is a task of its own over the shared
//!   plugins ([`crate::Host::new_task`]); `DELETE` ends it and cancels its calls (answered
//!   `200`); a session idle for `--session-idle` seconds expires.
//! - A body over `[limits] max_request_bytes` is `413`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower_service::Service;

use super::mcp::McpServer;
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
pub fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.trim_start_matches(':').parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|e| format!("--http {text}: not an address (HOST:PORT or PORT): {e}"))
}

/// The bearer token: the file's first line, else the environment's, else a new one (printed).
pub fn token(file: Option<&std::path::Path>) -> Result<String, String> {
    if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read the token file {}: {e}", file.display()))?;
        let token = text.lines().next().unwrap_or_default().trim().to_string();
        if token.is_empty() {
            return Err(format!("the token file {} is empty", file.display()));
        }
        return Ok(token);
    }
    if let Some(token) = std::env::var("TOOLHOST_MCP_TOKEN")
        .ok()
        .filter(|t| !t.trim().is_empty())
    {
        return Ok(token.trim().to_string());
    }
    let mut bytes = [0u8; 32];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut bytes);
    let token = hex::encode(bytes);
    eprintln!("toolhost mcp: no token set (--token-file or TOOLHOST_MCP_TOKEN); clients must send: Authorization: Bearer {token}");
    Ok(token)
}

/// Serves `base`'s plugins over HTTP until the process ends; every session is a new task of
/// `base` built by `session`.
pub async fn serve(
    base: Arc<Host>,
    options: HttpOptions,
    session: impl Fn(&Host) -> std::io::Result<McpServer> + Send + Sync + 'static,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", options.addr))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("toolhost mcp: serving MCP over streamable HTTP at http://{bound}/mcp");
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
    let limit = usize::try_from(base.settings().limits.max_request_bytes).unwrap_or(usize::MAX);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(limit.max(1));
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.session_idle);
    let factory_base = base.clone();
    let mcp =
        StreamableHttpService::new(move || session(&factory_base), Arc::new(sessions), config);
    let token: Arc<str> = options.token.into();
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(target: "toolhost::mcp", "accept failed: {e}");
                continue;
            }
        };
        // An answer is written in pieces (headers, then server-sent events): with Nagle's
        // algorithm each would wait for the client's delayed ACK, 40 ms a call.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(target: "toolhost::mcp", "TCP_NODELAY not set: {e}");
        }
        let mcp = mcp.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
                let mut mcp = mcp.clone();
                let token = token.clone();
                async move {
                    if !authorized(&request, &token) {
                        return Ok::<_, std::convert::Infallible>(unauthorized());
                    }
                    let ending_session = request.method() == http::Method::DELETE;
                    let mut response = mcp.call(request).await?;
                    // rmcp answers a session's DELETE `202 Accepted` once the session has
                    // ended; the Python SDK takes anything but 200 or 204 for a failure and
                    // warns on every close, so the answer says what happened: 200.
                    if ending_session && response.status() == http::StatusCode::ACCEPTED {
                        *response.status_mut() = http::StatusCode::OK;
                    }
                    Ok(response)
                }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                tracing::debug!(target: "toolhost::mcp", "HTTP connection ended: {e}");
            }
        });
    }
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
    let body = http_body_util::Full::new(bytes::Bytes::from_static(
        b"missing or wrong bearer token (Authorization: Bearer TOKEN)\n",
    ));
    let mut response = http::Response::new(body.boxed());
    *response.status_mut() = http::StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    response
}
