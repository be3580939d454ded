//! The egress proxy's listeners: a Unix socket where sandbox supervisors present a grant's
//! token and hand over their commands' connections, and a port on the host's loopback for
//! its own clients (each request with a token of [`super::tokens`]); every connection is
//! served by [`super::http`].

use std::collections::HashMap;
use std::io::{IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
use tokio_util::sync::CancellationToken;
use tool_api::model::EgressRoute;
use toolhost_sandbox::EgressLink;

use super::error::EgressError;
use super::grant::Grant;
use super::http::{serve, serve_socket};
use super::session::{client_credentials, Session, TOKEN_SCHEME};
use super::tokens;

/// How long a registered token waits for its supervisor.
const TOKEN_LIFETIME: Duration = Duration::from_secs(300);

/// How long a dedicated port stays open without a connection.
const DEDICATED_IDLE: Duration = Duration::from_secs(3600);

struct Proxy {
    socket: PathBuf,
    /// The loopback port of the host's own clients.
    port: u16,
    pending: Mutex<HashMap<String, (Arc<Grant>, Instant)>>,
    runtime: tokio::runtime::Runtime,
}

static PROXY: OnceLock<Result<Proxy, String>> = OnceLock::new();

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
    let port = serve_on_loopback(&runtime, None, None)?;
    Ok(Proxy {
        socket,
        port,
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

/// Registers `grant` with the proxy (started on first use, its socket in `private_dir`) and
/// returns the link a sandbox policy carries to reach it. The token is good for one
/// connection.
pub fn link(grant: Grant, private_dir: &Path) -> Result<EgressLink, EgressError> {
    let proxy = proxy(private_dir)?;
    let token = tokens::new_token();
    let mut pending = proxy.pending.lock().unwrap_or_else(PoisonError::into_inner);
    pending.retain(|_, (_, made)| made.elapsed() < TOKEN_LIFETIME);
    pending.insert(token.clone(), (Arc::new(grant), Instant::now()));
    Ok(EgressLink {
        socket: proxy.socket.clone(),
        token,
    })
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
    let Ok(reader) = control.try_clone() else {
        return;
    };
    let session = Arc::new(Session {
        link: Some((grant, control)),
        dedicated: None,
        closed: CancellationToken::new(),
    });
    while let Some(socket) = receive(&reader) {
        let session = session.clone();
        proxy.runtime.spawn(serve_socket(socket, session));
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

/// Registers `grant` for a host client (the proxy started on first use) and returns where
/// its requests go.
pub fn client_route(grant: Grant, private_dir: &Path) -> Result<EgressRoute, EgressError> {
    let proxy = proxy(private_dir)?;
    let token = tokens::register_client(Arc::new(grant));
    Ok(EgressRoute {
        url: format!("http://127.0.0.1:{}", proxy.port),
        authorization: format!("{TOKEN_SCHEME} {token}"),
    })
}

/// The refusals of the grant whose route has `authorization`, since the last call.
pub fn refusals(authorization: &str) -> Vec<String> {
    client_credentials(authorization)
        .and_then(|(token, _)| tokens::client(token))
        .map(|grant| grant.take_refusals())
        .unwrap_or_default()
}

/// Opens a port of the host's loopback whose every connection is decided under `grant`
/// (for a client that cannot send a token: Chromium takes a proxy's address only); it closes
/// after [`DEDICATED_IDLE`] without a connection. Returns the proxy's URL.
pub fn dedicated_route(grant: Grant, private_dir: &Path) -> Result<String, EgressError> {
    let proxy = proxy(private_dir)?;
    let port = serve_on_loopback(&proxy.runtime, Some(Arc::new(grant)), Some(DEDICATED_IDLE))
        .map_err(EgressError::Proxy)?;
    Ok(format!("http://127.0.0.1:{port}"))
}

/// Serves the proxy on a new port of the host's loopback: every connection under `dedicated`
/// (else each request names its grant by token), until `idle` passes without a connection
/// (`None`: for the life of the process). Returns the port.
fn serve_on_loopback(
    runtime: &tokio::runtime::Runtime,
    dedicated: Option<Arc<Grant>>,
    idle: Option<Duration>,
) -> Result<u16, String> {
    let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
        .map_err(|e| format!("cannot listen on the loopback: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot read its port: {e}"))?
        .port();
    let session = Arc::new(Session {
        link: None,
        dedicated,
        closed: CancellationToken::new(),
    });
    runtime.spawn(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        loop {
            let accepted = match idle {
                Some(idle) => tokio::time::timeout(idle, listener.accept()).await.ok(),
                None => Some(listener.accept().await),
            };
            let Some(Ok((stream, _))) = accepted else {
                return;
            };
            tokio::spawn(serve(stream, session.clone()));
        }
    });
    Ok(port)
}
