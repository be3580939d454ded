//! The egress proxy: a Unix socket where sandbox supervisors present a grant's token and
//! hand over their commands' connections, and an HTTP proxy (CONNECT and plain HTTP, hyper)
//! served on each of those connections.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{IoSliceMut, Read, Write};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use toolhost_sandbox::EgressLink;

use super::log::{self, Entry};
use super::rules::{Rule, Target};
use super::{addresses, answered, answers, remember, Answer, Decision, EgressError, Grant};

/// How long a registered token waits for its supervisor.
const TOKEN_LIFETIME: Duration = Duration::from_secs(300);

/// The buffers of a tunnel, each way.
const TUNNEL_BUFFER: usize = 256 * 1024;

type Body = BoxBody<Bytes, hyper::Error>;

struct Proxy {
    socket: PathBuf,
    pending: Mutex<HashMap<String, (Arc<Grant>, Instant)>>,
    runtime: tokio::runtime::Runtime,
}

static PROXY: OnceLock<Result<Proxy, String>> = OnceLock::new();

/// One at a time, so that parallel connections to one host ask once.
static ASKING: Mutex<()> = Mutex::new(());

fn start(private_dir: &Path) -> Result<Proxy, String> {
    let socket = private_dir.join("egress.sock");
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket)
        .map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("toolhost-egress")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start its runtime: {e}"))?;
    std::thread::Builder::new()
        .name("toolhost-egress-accept".into())
        .spawn(move || {
            for control in listener.incoming().flatten() {
                std::thread::spawn(move || attend(control));
            }
        })
        .map_err(|e| format!("cannot start its thread: {e}"))?;
    Ok(Proxy {
        socket,
        pending: Mutex::new(HashMap::new()),
        runtime,
    })
}

fn proxy(private_dir: &Path) -> Result<&'static Proxy, EgressError> {
    PROXY
        .get_or_init(|| start(private_dir))
        .as_ref()
        .map_err(|reason| EgressError::Proxy(reason.clone()))
}

/// See [`super::link`].
pub fn register(grant: Grant, private_dir: &Path) -> Result<EgressLink, EgressError> {
    let proxy = proxy(private_dir)?;
    let mut bytes = [0u8; 24];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut bytes);
    let token = hex::encode(bytes);
    let mut pending = proxy.pending.lock().unwrap_or_else(PoisonError::into_inner);
    pending.retain(|_, (_, made)| made.elapsed() < TOKEN_LIFETIME);
    pending.insert(token.clone(), (Arc::new(grant), Instant::now()));
    Ok(EgressLink {
        socket: proxy.socket.clone(),
        token,
    })
}

/// One command's link, from its token to its end.
struct Session {
    grant: Arc<Grant>,
    control: UnixStream,
    /// Cancelled when the supervisor is gone: every connection of the command ends.
    closed: CancellationToken,
}

impl Session {
    /// Tells the command's standard error (through its supervisor) why a connection was
    /// refused.
    fn tell(&self, line: &str) {
        let _ = (&self.control).write_all(format!("{}\n", line.replace('\n', " ")).as_bytes());
    }
}

/// Reads the token line (byte by byte: what follows it carries descriptors).
fn read_token(control: &mut UnixStream) -> Option<String> {
    control
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let mut token = Vec::new();
    let mut byte = [0u8; 1];
    while token.len() < 128 {
        control.read_exact(&mut byte).ok()?;
        if byte[0] == b'\n' {
            control.set_read_timeout(None).ok()?;
            return String::from_utf8(token).ok();
        }
        token.push(byte[0]);
    }
    None
}

/// Serves one supervisor: its token, then every socket it hands over.
fn attend(mut control: UnixStream) {
    let Some(Ok(proxy)) = PROXY.get() else { return };
    let Some(token) = read_token(&mut control) else {
        return;
    };
    let grant = proxy
        .pending
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&token)
        .map(|(grant, _)| grant);
    let Some(grant) = grant else {
        let _ = control.write_all(b"unknown or used token\n");
        return;
    };
    if writeln!(control, "{}", EgressLink::ACCEPTED).is_err() {
        return;
    }
    let session = Arc::new(Session {
        grant,
        control,
        closed: CancellationToken::new(),
    });
    while let Some(socket) = receive(&session.control) {
        let session = session.clone();
        proxy.runtime.spawn(serve(socket, session));
    }
    session.closed.cancel();
}

/// The next socket the supervisor hands over; `None` when it is gone.
fn receive(control: &UnixStream) -> Option<OwnedFd> {
    loop {
        let mut data = [0u8; 1];
        let mut buffers = [IoSliceMut::new(&mut data)];
        let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
        let message = match recvmsg::<()>(
            control.as_raw_fd(),
            &mut buffers,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(message) => message,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return None,
        };
        if message.bytes == 0 {
            return None;
        }
        let mut received = None;
        for cmsg in message.cmsgs().ok()? {
            if let ControlMessageOwned::ScmRights(fds) = cmsg {
                for fd in fds {
                    // SAFETY: the kernel just gave this process the descriptor; nothing
                    // else owns it.
                    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
                    received.get_or_insert(owned);
                }
            }
        }
        if received.is_some() {
            return received;
        }
    }
}

async fn serve(socket: OwnedFd, session: Arc<Session>) {
    let stream = std::net::TcpStream::from(socket);
    if stream.set_nonblocking(true).is_err() {
        return;
    }
    let Ok(stream) = TcpStream::from_std(stream) else {
        return;
    };
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

fn text(status: StatusCode, message: String) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(message + "\n"))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response
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
struct Refusal(String);

/// A connection made, and the rule or answer that allowed it.
struct Opened {
    stream: TcpStream,
    address: SocketAddr,
    why: String,
}

async fn handle(request: Request<Incoming>, session: Arc<Session>) -> Response<Body> {
    let target = match target_of(&request) {
        Ok(target) => target,
        Err(message) => return text(StatusCode::BAD_REQUEST, message),
    };
    let mut entry = Entry {
        time_ms: log::now_ms(),
        task: session.grant.task.clone(),
        tool: session.grant.tool.clone(),
        target: target.authority(),
        verdict: "denied".into(),
        why: String::new(),
        address: None,
        sent: 0,
        received: 0,
    };
    let opened = match open(&target, &session).await {
        Ok(opened) => opened,
        Err(Refusal(message)) => {
            entry.why = message.clone();
            write_log(&session, &entry);
            let line = format!("egress: {message}");
            session.tell(&line);
            return text(StatusCode::FORBIDDEN, line);
        }
    };
    entry.verdict = "allowed".into();
    entry.why = opened.why.clone();
    entry.address = Some(opened.address.to_string());
    if request.method() == Method::CONNECT {
        tokio::spawn(tunnel(request, opened.stream, session, entry));
        Response::new(
            Full::new(Bytes::new())
                .map_err(|never| match never {})
                .boxed(),
        )
    } else {
        forward(request, opened.stream, session, entry).await
    }
}

fn write_log(session: &Session, entry: &Entry) {
    if let Some(dir) = &session.grant.policy.log_dir {
        log::record(dir, entry);
    }
}

/// Decides on `target`, asking when the rules say so, then resolves it and connects to the
/// first address that may be reached.
async fn open(target: &Target, session: &Arc<Session>) -> Result<Opened, Refusal> {
    let grant = &session.grant;
    let tool = &grant.tool;
    let authority = target.authority();
    let why = match grant.policy.decide(target, &answers(&grant.task)) {
        Decision::Allowed(why) => why,
        Decision::Denied(why) => {
            return Err(Refusal(format!(
                "{tool} may not connect to {authority}: {why}"
            )))
        }
        Decision::Ask => {
            let grant = grant.clone();
            let asked = target.clone();
            tokio::task::spawn_blocking(move || ask(&grant, &asked))
                .await
                .map_err(|e| Refusal(format!("asking about {authority} failed: {e}")))??
        }
    };
    let candidates: Vec<SocketAddr> = match target.address {
        Some(address) => vec![SocketAddr::new(address, target.port)],
        None => tokio::net::lookup_host((target.host.as_str(), target.port))
            .await
            .map_err(|e| Refusal(format!("{authority} cannot be resolved: {e}")))?
            .collect(),
    };
    let mut refused = None;
    let mut failed = None;
    for address in candidates {
        if let Some(kind) = addresses::internal(address.ip()) {
            if grant
                .policy
                .address_rule(address.ip(), address.port())
                .is_none()
            {
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
            Err(e) => failed = Some(format!("{authority} ({address}) cannot be reached: {e}")),
        }
    }
    if let Some(message) = failed {
        return Err(Refusal(message));
    }
    let (address, kind) = refused.ok_or_else(|| Refusal(format!("{authority} has no address")))?;
    let exact = SocketAddr::new(address.ip(), target.port);
    Err(Refusal(format!(
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
                remember(file, &rule).map_err(|e| Refusal(e.to_string()))?;
            }
            answered(&grant.task, rule);
            Ok("the user's answer \"always\"".to_string())
        }
        Answer::Refused(by) => Err(Refusal(format!(
            "{} may not connect to {authority}: no rule names it, and it was refused {by}; \
             egress.allow = [\"{authority}\"] in the settings allows it",
            grant.tool
        ))),
    }
}

/// Copies both ways between the command and the host until either side ends.
async fn tunnel(
    request: Request<Incoming>,
    mut upstream: TcpStream,
    session: Arc<Session>,
    mut entry: Entry,
) {
    let Ok(upgraded) = hyper::upgrade::on(request).await else {
        return;
    };
    let mut client = TokioIo::new(upgraded);
    let copied = tokio::select! {
        copied = tokio::io::copy_bidirectional_with_sizes(&mut client, &mut upstream, TUNNEL_BUFFER, TUNNEL_BUFFER) => copied.ok(),
        _ = session.closed.cancelled() => None,
    };
    if let Some((sent, received)) = copied {
        entry.sent = sent;
        entry.received = received;
    }
    write_log(&session, &entry);
}

/// Logs the entry when the response's body is done with (its bytes counted by then).
struct LogWhenDone {
    session: Arc<Session>,
    entry: Entry,
    sent: Arc<AtomicU64>,
    received: Arc<AtomicU64>,
}

impl Drop for LogWhenDone {
    fn drop(&mut self) {
        self.entry.sent = self.sent.load(Ordering::Relaxed);
        self.entry.received = self.received.load(Ordering::Relaxed);
        write_log(&self.session, &self.entry);
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
        session,
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
