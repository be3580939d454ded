//! The HTTP proxy served on each connection a command hands over (hyper): CONNECT and plain
//! HTTP, each decided by the grant's policy, asked about when no rule names it, resolved and
//! checked against the internal addresses, connected and logged.

use std::borrow::Cow;
use std::convert::Infallible;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::connect::{connect, write_log, Refusal};
use super::grant::Grant;
use super::log::Entry;
use super::rules::Target;
use super::session::{Session, TOKEN_SCHEME};
use super::{socks, splice};

/// The buffers of a tunnel, each way.
const TUNNEL_BUFFER: usize = 256 * 1024;

type Body = BoxBody<Bytes, hyper::Error>;

/// Serves the proxy on `socket`, a connection a command made, until it or the command's
/// link closes: SOCKS5 when its first byte says so ([`socks`]), else HTTP.
pub async fn serve_socket(socket: OwnedFd, session: Arc<Session>) {
    let stream = std::net::TcpStream::from(socket);
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    let Ok(stream) = TcpStream::from_std(stream) else {
        return;
    };
    let mut first = [0u8; 1];
    if stream.peek(&mut first).await.is_ok_and(|n| n == 1) && first[0] == socks::VERSION {
        socks::serve(stream, session).await;
    } else {
        serve(stream, session).await;
    }
}

/// Serves the HTTP proxy on `stream` until it or the session closes.
pub async fn serve(stream: TcpStream, session: Arc<Session>) {
    let closed = session.closed.clone();
    let service = service_fn(move |request| {
        let session = session.clone();
        async move { Ok::<_, Infallible>(handle(request, session).await) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::select! {
        _ = connection => {}
        _ = closed.cancelled() => {}
    }
}

/// A response of `status` whose body is `body`.
fn respond(status: StatusCode, body: Bytes) -> Response<Body> {
    let mut response = Response::new(Full::new(body).map_err(|never| match never {}).boxed());
    *response.status_mut() = status;
    response
}

/// A response of `status` whose body is the line `message`.
fn text(status: StatusCode, message: String) -> Response<Body> {
    respond(status, Bytes::from(message + "\n"))
}

/// Where a request goes: CONNECT's authority, or a plain request's absolute URL.
fn target_of(request: &Request<Incoming>) -> Result<Target, String> {
    let uri = request.uri();
    let connect = request.method() == Method::CONNECT;
    if !connect && uri.scheme_str() != Some("http") {
        return Err(format!(
            "the egress proxy forwards CONNECT and plain http:// requests, not {uri}"
        ));
    }
    let authority = uri
        .authority()
        .ok_or_else(|| format!("the request names no host: {uri}"))?;
    let port = authority
        .port_u16()
        .unwrap_or(if connect { 443 } else { 80 });
    Ok(Target::new(authority.host(), port))
}

async fn handle(request: Request<Incoming>, session: Arc<Session>) -> Response<Body> {
    let authorization = request
        .headers()
        .get(http::header::PROXY_AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    let Some((grant, endpoint)) = session.grant(authorization) else {
        let mut refused = text(
            StatusCode::PROXY_AUTHENTICATION_REQUIRED,
            "the egress proxy serves toolhost's own tool calls only".to_string(),
        );
        refused.headers_mut().insert(
            http::header::PROXY_AUTHENTICATE,
            http::HeaderValue::from_static(TOKEN_SCHEME),
        );
        return refused;
    };
    let target = match target_of(&request) {
        Ok(target) => target,
        Err(message) => return text(StatusCode::BAD_REQUEST, message),
    };
    let policy = match endpoint {
        Some(endpoint) => Cow::Owned(grant.policy.clone().with_configured([endpoint.as_str()])),
        None => Cow::Borrowed(&grant.policy),
    };
    let (opened, entry) = match connect(&session, &grant, &policy, &target).await {
        Ok(connected) => connected,
        Err(Refusal::Denied(message)) => {
            return text(StatusCode::FORBIDDEN, format!("egress: {message}"))
        }
        Err(Refusal::Failed(message)) => {
            return text(StatusCode::BAD_GATEWAY, format!("egress: {message}"))
        }
    };
    if request.method() == Method::CONNECT {
        tokio::spawn(tunnel(request, opened.stream, session, grant, entry));
        respond(StatusCode::OK, Bytes::new())
    } else {
        forward(request, opened.stream, session, grant, entry).await
    }
}

/// Joins the client and the host until both sides end: in the kernel ([`splice`]) when the
/// client's connection is a plain socket (what hyper hands back after the upgrade), else
/// through a buffer.
async fn tunnel(
    request: Request<Incoming>,
    mut upstream: TcpStream,
    session: Arc<Session>,
    grant: Arc<Grant>,
    mut entry: Entry,
) {
    let Ok(upgraded) = hyper::upgrade::on(request).await else {
        return;
    };
    let copied = match upgraded.downcast::<TokioIo<TcpStream>>() {
        Ok(parts) => {
            // What the client sent after its CONNECT, already read by hyper, goes first.
            let early = parts.read_buf.len() as u64;
            let written = upstream.write_all(&parts.read_buf).await.is_ok();
            let client = parts.io.into_inner().into_std();
            match (written, client, upstream.into_std()) {
                (true, Ok(client), Ok(upstream)) => {
                    splice::tunnel(client, upstream, &session.closed)
                        .await
                        .map(|(sent, received)| (sent + early, received))
                }
                _ => None,
            }
        }
        Err(upgraded) => {
            let mut client = TokioIo::new(upgraded);
            tokio::select! {
                copied = tokio::io::copy_bidirectional_with_sizes(&mut client, &mut upstream, TUNNEL_BUFFER, TUNNEL_BUFFER) => copied.ok(),
                _ = session.closed.cancelled() => None,
            }
        }
    };
    if let Some((sent, received)) = copied {
        entry.sent = sent;
        entry.received = received;
    }
    write_log(&grant, &entry);
}

/// Logs the entry when the response's body is done with (its bytes counted by then).
struct LogWhenDone {
    grant: Arc<Grant>,
    entry: Entry,
    sent: Arc<AtomicU64>,
    received: Arc<AtomicU64>,
}

impl Drop for LogWhenDone {
    fn drop(&mut self) {
        self.entry.sent = self.sent.load(Ordering::Relaxed);
        self.entry.received = self.received.load(Ordering::Relaxed);
        write_log(&self.grant, &self.entry);
    }
}

fn counted<B>(body: B, counter: Arc<AtomicU64>) -> BoxBody<Bytes, B::Error>
where
    B: hyper::body::Body<Data = Bytes> + Send + Sync + 'static,
{
    body.map_frame(move |frame| {
        if let Some(data) = frame.data_ref() {
            counter.fetch_add(data.len() as u64, Ordering::Relaxed);
        }
        frame
    })
    .boxed()
}

/// Sends a plain HTTP request on to the host, in origin form, without the proxy's headers.
async fn forward(
    request: Request<Incoming>,
    upstream: TcpStream,
    session: Arc<Session>,
    grant: Arc<Grant>,
    entry: Entry,
) -> Response<Body> {
    let failed = |e: hyper::Error| text(StatusCode::BAD_GATEWAY, format!("egress: {e}"));
    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await {
            Ok(pair) => pair,
            Err(e) => return failed(e),
        };
    let closed = session.closed.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = connection => {}
            _ = closed.cancelled() => {}
        }
    });
    let (mut parts, body) = request.into_parts();
    parts.uri = parts
        .uri
        .path_and_query()
        .map_or(Uri::from_static("/"), |p| {
            Uri::try_from(p.as_str()).unwrap_or(Uri::from_static("/"))
        });
    for header in ["proxy-connection", "proxy-authorization"] {
        parts.headers.remove(header);
    }
    let sent = Arc::new(AtomicU64::new(0));
    let received = Arc::new(AtomicU64::new(0));
    let body = counted(body, sent.clone());
    let response = match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(response) => response,
        Err(e) => return failed(e),
    };
    let done = LogWhenDone {
        grant,
        entry,
        sent,
        received: received.clone(),
    };
    response.map(move |body| {
        let counted = counted(body, received);
        counted
            .map_frame(move |frame| {
                let _log_when_done = &done;
                frame
            })
            .boxed()
    })
}
