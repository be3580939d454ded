//! The command's one way out when its network is the host's egress proxy
//! ([`crate::policy::EgressLink`]).
//!
//! The outer supervisor connects to the proxy's Unix socket before it enters any namespace
//! and presents the link's token; the host answers `ok` once it knows whose command this is
//! (read by the forwarder, so that the supervisor does not wait for it).
//! In the command's network namespace, which has only a loopback, the supervisor brings the
//! loopback up and listens on a port of it; the command finds that port in `HTTP_PROXY` and
//! its kin. Every connection accepted there is handed to the host over the Unix socket
//! (`SCM_RIGHTS`): the host reads and writes the command's socket itself, so no byte is
//! copied on the way and nothing in the sandbox decides where a connection goes. When the
//! supervisor ends, the Unix socket closes, and the host closes what the command had open.

use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

use crate::policy::EgressLink;
use crate::SandboxError;

/// The variables that send a command's HTTP clients to the proxy, for a proxy on `port` of
/// the namespace's loopback. Names in both cases: curl reads only the lower-case
/// `http_proxy`, others only the upper-case ones. Loopback itself is not proxied: what a
/// command serves to itself stays inside its namespace.
pub fn proxy_variables(port: u16) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut variables = Vec::new();
    for name in ["http_proxy", "https_proxy", "all_proxy"] {
        variables.push((name.to_string(), url.clone()));
        variables.push((name.to_ascii_uppercase(), url.clone()));
    }
    for name in ["no_proxy", "NO_PROXY"] {
        variables.push((name.to_string(), "localhost,127.0.0.1,::1".to_string()));
    }
    variables
}

/// The link to the host: connected, its token accepted.
pub struct Connected {
    control: UnixStream,
    /// What the host says on the link after accepting it.
    reader: BufReader<UnixStream>,
}

/// Connects to the host's proxy and presents the token (before entering the namespaces).
pub fn connect(link: &EgressLink) -> Result<Connected, SandboxError> {
    let failed = |e: std::io::Error| {
        SandboxError::setup(
            format!("reach the egress proxy at {}", link.socket.display()),
            e,
        )
    };
    let mut control = UnixStream::connect(&link.socket).map_err(failed)?;
    writeln!(control, "{}", link.token).map_err(failed)?;
    // The answer is read by the forwarder: the host decides while the supervisor goes on.
    let reader = BufReader::new(control.try_clone().map_err(failed)?);
    Ok(Connected { control, reader })
}

/// The proxy's port on the namespace's loopback, and the listener behind it.
pub struct Listening {
    control: UnixStream,
    reader: BufReader<UnixStream>,
    listener: TcpListener,
    /// The port `HTTP_PROXY` names.
    pub port: u16,
}

impl Connected {
    /// Brings the loopback of the new network namespace up and listens on a port of it.
    pub fn listen(self) -> Result<Listening, SandboxError> {
        loopback_up()?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(|e| SandboxError::setup("listen on the sandbox's loopback", e))?;
        let port = listener
            .local_addr()
            .map_err(|e| SandboxError::setup("read the proxy port", e))?
            .port();
        Ok(Listening {
            control: self.control,
            reader: self.reader,
            listener,
            port,
        })
    }
}

impl Listening {
    /// Starts the forwarder, a child process that stays outside the PID namespace the
    /// command will get (and so out of its sight): it hands every connection made to the port
    /// to the host, and prints on standard error (the command's) each line the host sends,
    /// why a connection was refused. It dies with the supervisor. Returns the port.
    ///
    /// A process, not a thread: once the supervisor has entered its PID namespace, the
    /// kernel lets it start no thread; and before, it must stay single-threaded to fork.
    pub fn start_forwarder(self) -> Result<u16, SandboxError> {
        // SAFETY: the supervisor has a single thread; the child runs only this module's code.
        match unsafe { nix::unistd::fork() }.map_err(|e| SandboxError::setup("fork", e))? {
            nix::unistd::ForkResult::Child => {
                let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
                self.forward();
                // SAFETY: ends the forked child without running the parent's exit handlers.
                unsafe { libc::_exit(0) }
            }
            nix::unistd::ForkResult::Parent { .. } => Ok(self.port),
        }
    }

    fn forward(self) {
        let Listening {
            control,
            listener,
            mut reader,
            ..
        } = self;
        let mut answer = String::new();
        let _ = reader.read_line(&mut answer);
        if answer.trim_end() != EgressLink::ACCEPTED {
            // The listener closes with this process: the command's connections are refused.
            eprintln!(
                "{}the egress proxy did not accept this command ({}), so it has no network",
                crate::MESSAGE_PREFIX,
                answer.trim_end()
            );
            return;
        }
        std::thread::spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { break };
                eprintln!("{}{line}", crate::MESSAGE_PREFIX);
            }
        });
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            if hand_over(&control, stream.into()).is_err() {
                break;
            }
        }
    }
}

/// Sends `socket` over the link (one byte of data carries it) and closes this copy.
fn hand_over(control: &UnixStream, socket: OwnedFd) -> nix::Result<()> {
    let fds = [socket.as_raw_fd()];
    let data = [std::io::IoSlice::new(b"s")];
    sendmsg::<()>(
        control.as_raw_fd(),
        &data,
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::MSG_NOSIGNAL,
        None,
    )?;
    Ok(())
}

/// Sets the `lo` interface of this network namespace up (a new namespace has it down).
///
/// Written with `ioctl` because nix wraps no interface flags, and a netlink library would be
/// a whole protocol for one bit.
fn loopback_up() -> Result<(), SandboxError> {
    let failed = |e: std::io::Error| SandboxError::setup("bring the sandbox's loopback up", e);
    // SAFETY: a plain socket call; the descriptor is owned below.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(failed(std::io::Error::last_os_error()));
    }
    // SAFETY: `raw` is a descriptor this function just opened and nobody else owns.
    let socket = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) };
    // SAFETY: `ifreq` is plain data; all zeros is a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS and SIOCSIFFLAGS read and write an `ifreq`, which `request` is.
    unsafe {
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request) < 0 {
            return Err(failed(std::io::Error::last_os_error()));
        }
        request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS, &request) < 0 {
            return Err(failed(std::io::Error::last_os_error()));
        }
    }
    Ok(())
}
