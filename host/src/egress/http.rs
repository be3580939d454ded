//! The HTTP proxy served on each connection a command hands over (hyper): CONNECT and plain
//! HTTP, each decided by the grant's policy, asked about when no rule names it, resolved and
//! checked against the internal addresses, connected and logged.

use std::borrow::Cow;
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use super::addresses;
use super::answers::{answered, answers, remember};
use super::grant::{Answer, Grant};
use super::log::{self, Entry};
use super::policy::{Decision, Policy};
use super::rules::{Rule, Target};
use super::{splice, tokens};

/// The buffers of a tunnel, each way.
const TUNNEL_BUFFER: usize = 256 * 1024;

type Body = BoxBody<Bytes, hyper::Error>;

/// One at a time, so that parallel connections to one host ask once.
static ASKING: Mutex<()> = Mutex::new(());

/// Where the connections served come from.
pub struct Session {
    /// A command's link (its grant, and the supervisor to tell of refusals); `None` for the
    /// host's own clients, whose every request names its grant by token
    /// (`Proxy-Authorization: Toolhost TOKEN`).
    pub link: Option<(Arc<Grant>, UnixStream)>,
    /// The grant of every connection of a port dedicated to one client (a browser, which
    /// cannot send a token), when the session is such a port's.
    pub dedicated: Option<Arc<Grant>>,
    /// Cancelled when the supervisor is gone: every connection of the command ends.
    pub closed: CancellationToken,
}

/// The scheme of the `Proxy-Authorization` header a host client sends its token in.
pub const TOKEN_SCHEME: &str = "Toolhost";

/// What a host client's `Proxy-Authorization` says: `Toolhost TOKEN`, or `Toolhost TOKEN
/// ENDPOINT` for a client whose every request goes to one endpoint the user configured for
/// the tool (an MCP server's URL), which then counts as allowed exactly. The plugin vouches
/// for that endpoint as it does for the `configured` URLs of its route: it read them from
/// the user's configuration, and only the plugin holds the token.
pub fn client_credentials(authorization: &str) -> Option<(&str, Option<&str>)> {
    let mut words = authorization.strip_prefix(TOKEN_SCHEME)?.split_whitespace();
    let token = words.next()?;
    let endpoint = words.next();
    match words.next() {
        None => Some((token, endpoint)),
        Some(_) => None,
    }
}

impl Session {
    /// The grant `request` is decided under, and the configured endpoint its client named.
    fn grant(&self, request: &Request<Incoming>) -> Option<(Arc<Grant>, Option<String>)> {
        if let Some((grant, _)) = &self.link {
            return Some((grant.clone(), None));
        }
        if let Some(grant) = &self.dedicated {
            return Some((grant.clone(), None));
        }
        let header = request.headers().get(http::header::PROXY_AUTHORIZATION)?;
        let (token, endpoint) = client_credentials(header.to_str().ok()?)?;
        Some((tokens::client(token)?, endpoint.map(str::to_string)))
    }

    /// Keeps why a connection was refused for the grant's tool, and tells a command's
    /// standard error (through its supervisor).
    fn tell(&self, grant: &Grant, line: &str) {
        grant.refused(line);
        if let Some((_, control)) = &self.link {
            let _ = (&*control).write_all(format!("{}\n", line.replace('\n', " ")).as_bytes());
        }
    }
}

/// Serves the HTTP proxy on `socket`, a connection a command made, until it or the
/// command's link closes.
pub async fn serve_socket(socket: OwnedFd, session: Arc<Session>) {
    let stream = std::net::TcpStream::from(socket);
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    let Ok(stream) = TcpStream::from_std(stream) else {
        return;
    };
    serve(stream, session).await;
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

/// Why a connection was not made: who refused, and what would allow it.
enum Refusal {
    /// A rule, the user, nobody to ask or the address check refused it.
    Denied(String),
    /// It was allowed, and could not be made (no address, nobody listening).
    Failed(String),
}

/// A connection made, and the rule or answer that allowed it.
struct Opened {
    stream: TcpStream,
    address: SocketAddr,
    why: String,
}

async fn handle(request: Request<Incoming>, session: Arc<Session>) -> Response<Body> {
    let Some((grant, endpoint)) = session.grant(&request) else {
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
    let mut entry = Entry {
        time_ms: log::now_ms(),
        task: grant.task.clone(),
        tool: grant.tool.clone(),
        target: target.authority(),
        verdict: "denied".into(),
        why: String::new(),
        address: None,
        sent: 0,
        received: 0,
    };
    let policy = match endpoint {
        Some(endpoint) => Cow::Owned(grant.policy.clone().with_configured([endpoint.as_str()])),
        None => Cow::Borrowed(&grant.policy),
    };
    let opened = match open(&target, &grant, &policy).await {
        Ok(opened) => opened,
        Err(refusal) => {
            let (verdict, message, status) = match refusal {
                Refusal::Denied(message) => ("denied", message, StatusCode::FORBIDDEN),
                Refusal::Failed(message) => ("failed", message, StatusCode::BAD_GATEWAY),
            };
            entry.verdict = verdict.into();
            entry.why = message.clone();
            write_log(&grant, &entry);
            let line = format!("egress: {message}");
            session.tell(&grant, &line);
            return text(status, line);
        }
    };
    entry.verdict = "allowed".into();
    entry.why = opened.why.clone();
    entry.address = Some(opened.address.to_string());
    if request.method() == Method::CONNECT {
        tokio::spawn(tunnel(request, opened.stream, session, grant, entry));
        respond(StatusCode::OK, Bytes::new())
    } else {
        forward(request, opened.stream, session, grant, entry).await
    }
}

fn write_log(grant: &Grant, entry: &Entry) {
    if let Some(dir) = &grant.policy.log_dir {
        log::record(dir, entry);
    }
}

/// Decides on `target` under `policy` (the grant's, with the client's configured endpoint),
/// asking when the rules say so, then resolves it and connects to the first address that
/// may be reached.
async fn open(target: &Target, grant: &Arc<Grant>, policy: &Policy) -> Result<Opened, Refusal> {
    let tool = &grant.tool;
    let authority = target.authority();
    let why = match policy.decide(target, &answers(&grant.task)) {
        Decision::Allowed(why) => why,
        Decision::Denied(why) => {
            return Err(Refusal::Denied(format!(
                "{tool} may not connect to {authority}: {why}"
            )))
        }
        Decision::Ask => {
            let grant = grant.clone();
            let asked = target.clone();
            tokio::task::spawn_blocking(move || ask(&grant, &asked))
                .await
                .map_err(|e| Refusal::Denied(format!("asking about {authority} failed: {e}")))??
        }
    };
    let candidates: Vec<SocketAddr> = match target.address {
        Some(address) => vec![SocketAddr::new(address, target.port)],
        None => tokio::net::lookup_host((target.host.as_str(), target.port))
            .await
            .map_err(|e| Refusal::Failed(format!("{authority} cannot be resolved: {e}")))?
            .collect(),
    };
    let mut refused = None;
    let mut failed = None;
    for address in candidates {
        if let Some(kind) = addresses::internal(address.ip()) {
            if policy.address_rule(address.ip(), address.port()).is_none() {
                refused.get_or_insert((address, kind));
                continue;
            }
        }
        match TcpStream::connect(address).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(Opened {
                    stream,
                    address,
                    why,
                });
            }
            Err(e) if target.address.is_some() => {
                failed = Some(format!("{authority} cannot be reached: {e}"));
            }
            Err(e) => failed = Some(format!("{authority} ({address}) cannot be reached: {e}")),
        }
    }
    if let Some(message) = failed {
        return Err(Refusal::Failed(message));
    }
    let (address, kind) =
        refused.ok_or_else(|| Refusal::Failed(format!("{authority} has no address")))?;
    let exact = SocketAddr::new(address.ip(), target.port);
    Err(Refusal::Denied(format!(
        "{tool} may not connect to {authority}: it leads to {address}, a {kind} address, \
         which only a rule naming that exact address reaches (egress.allow = [\"{exact}\"])"
    )))
}

/// Asks the user about `target` (one question at a time; an answer given meanwhile counts).
fn ask(grant: &Grant, target: &Target) -> Result<String, Refusal> {
    let _one_at_a_time = ASKING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Decision::Allowed(why) = grant.policy.decide(target, &answers(&grant.task)) {
        return Ok(why);
    }
    let authority = target.authority();
    let file = grant
        .policy
        .allowed_file
        .as_ref()
        .map_or("the allowed file".to_string(), |f| f.display().to_string());
    let question = format!(
        "{} wants to connect to {authority}, which no egress rule names. Allow it? \
         (yes: for this task; always: from now on, written to {file}; no: refuse)",
        grant.tool
    );
    let rule = Rule::exactly(target);
    match grant.asker.ask(&question) {
        Answer::ThisTask(by) => {
            answered(&grant.task, rule);
            Ok(format!("allowed for this task {by}"))
        }
        Answer::Always => {
            if let Some(file) = &grant.policy.allowed_file {
                remember(file, &rule).map_err(|e| Refusal::Denied(e.to_string()))?;
            }
            answered(&grant.task, rule);
            Ok("the user's answer \"always\"".to_string())
        }
        Answer::Refused(by) => Err(Refusal::Denied(format!(
            "{} may not connect to {authority}: no rule names it, and it was refused {by}; \
             egress.allow = [\"{authority}\"] in the settings allows it",
            grant.tool
        ))),
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

#[cfg(test)]
mod tests {
    use super::client_credentials;

    #[test]
    fn a_clients_authorization_is_its_token_and_perhaps_one_endpoint() {
        assert_eq!(client_credentials("Toolhost abc"), Some(("abc", None)));
        assert_eq!(
            client_credentials("Toolhost abc http://127.0.0.1:8/mcp"),
            Some(("abc", Some("http://127.0.0.1:8/mcp")))
        );
        assert_eq!(client_credentials("Toolhost abc one two"), None);
        assert_eq!(client_credentials("Basic abc"), None);
        assert_eq!(client_credentials("Toolhost"), None);
    }
}
