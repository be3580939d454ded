//! Whether a local TCP peer is a process that a toolhost tool call started: a descendant of a
//! command supervisor (`toolhost __sandbox-exec`: sandboxed and escalated commands), of a
//! plugin worker (`toolhost __plugin-worker`) of any toolhost instance of this machine, of
//! another toolhost process (its unsandboxed commands, hooks, MCP servers), or of this host
//! process itself (commands run with `sandbox = "off"`, hooks, MCP servers, in-process
//! plugins). `toolhost mcp --http` refuses such peers: approvals must come from the user.
//!
//! The peer's socket (local address = the peer's, remote = ours) is looked up by the kernel's
//! socket diagnostics (netlink `sock_diag`, one exact lookup: `/proc/net/tcp` lists every
//! socket, which takes milliseconds on a machine with large hash tables); its inode is then
//! looked for among the descriptors of the processes under a marker, and only those (so the
//! cost grows with the tool calls running, not with every process of the machine). Fails
//! closed: a loopback peer whose socket is not found, a lookup that fails, or a process under a
//! marker whose descriptors cannot be read, is [`Origin::Unknown`].
//!
//! The process table is read from `/proc` by hand rather than with the `procfs` crate: three
//! small formats are read (`stat`'s ppid, `cmdline`'s argv[1], `fd` links), and the crate's
//! tree of types and dependencies would be most of the code.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;

use crate::command_sandbox::supervisor::SUPERVISOR_MODE;
use crate::plugins::worker::WORKER_MODE;

/// Who is at the other end of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Not a socket of this machine's network namespace: another machine.
    Remote,
    /// A local process that no tool call started.
    User,
    /// A process started by a tool call: `pid` holds the socket, under `by`.
    ToolCall {
        /// The process holding the peer's socket.
        pid: u32,
        /// What it descends from.
        by: Starter,
    },
    /// The owner could not be established (why); treated as a tool call's.
    Unknown(String),
}

/// The toolhost process a tool call's process descends from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Starter {
    /// A command supervisor (`toolhost __sandbox-exec`), with its pid.
    Supervisor(u32),
    /// A plugin worker (`toolhost __plugin-worker`), with its pid.
    Worker(u32),
    /// Another toolhost process (`call`, `serve`, `mcp`: what it starts without a sandbox,
    /// its hooks and MCP servers are its tool calls' too), with its pid.
    Instance(u32),
    /// This host process.
    ThisHost,
}

impl std::fmt::Display for Starter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Supervisor(pid) => write!(
                f,
                "the command supervisor `toolhost {SUPERVISOR_MODE}` (pid {pid})"
            ),
            Self::Worker(pid) => {
                write!(f, "the plugin worker `toolhost {WORKER_MODE}` (pid {pid})")
            }
            Self::Instance(pid) => write!(f, "another toolhost process (pid {pid})"),
            Self::ThisHost => write!(f, "this toolhost process"),
        }
    }
}

/// The origin of the peer `peer` of a connection accepted at `local`.
pub fn origin(peer: SocketAddr, local: SocketAddr) -> Origin {
    let (peer, local) = (canonical(peer), canonical(local));
    let (inode, owner) = match socket_inode(peer, local) {
        Ok(Some(found)) => found,
        Ok(None) if peer.ip().is_loopback() => {
            return Origin::Unknown(format!("no socket of this machine has the address {peer}"))
        }
        Ok(None) => return Origin::Remote,
        Err(e) => {
            return Origin::Unknown(format!(
                "the kernel's socket diagnostics (sock_diag) did not answer: {e}"
            ))
        }
    };
    // A tool call's processes run as this user (a sandbox's user namespace maps only this
    // user), so a socket of another user's is no tool call's; and only this user's processes
    // are looked into (another user's descriptors cannot be read, and need not be).
    let uid = rustix::process::getuid().as_raw();
    if owner != uid {
        return Origin::User;
    }
    let table = ProcessTable::read(Path::new("/proc"), std::process::id(), uid);
    table.holder_under_marker(&format!("socket:[{inode}]"))
}

/// The address with an IPv4-mapped IPv6 address as the IPv4 one (a dual-stack listener sees
/// IPv4 peers so; their sockets are IPv4 ones).
fn canonical(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

/// The inode and owner (user id) of this network namespace's TCP socket whose local address
/// is `peer` and remote address `local`; `None` when there is none.
fn socket_inode(peer: SocketAddr, local: SocketAddr) -> std::io::Result<Option<(u64, u32)>> {
    use netlink_packet_core::{NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_REQUEST};
    use netlink_packet_sock_diag::inet::{ExtensionFlags, InetRequest, SocketId, StateFlags};
    use netlink_packet_sock_diag::{SockDiagMessage, AF_INET, AF_INET6, IPPROTO_TCP};
    use netlink_sys::{protocols::NETLINK_SOCK_DIAG, Socket};

    let mut socket = Socket::new(NETLINK_SOCK_DIAG)?;
    socket.bind_auto()?;
    socket.connect(&netlink_sys::SocketAddr::new(0, 0))?;
    let mut header = NetlinkHeader::default();
    // Without NLM_F_DUMP: the one socket of these addresses, found by the kernel's hash.
    header.flags = NLM_F_REQUEST;
    let request = InetRequest {
        family: if peer.is_ipv4() { AF_INET } else { AF_INET6 },
        protocol: IPPROTO_TCP,
        extensions: ExtensionFlags::empty(),
        states: StateFlags::all(),
        socket_id: SocketId {
            source_port: peer.port(),
            destination_port: local.port(),
            source_address: peer.ip(),
            destination_address: local.ip(),
            interface_id: 0,
            // "No cookie": the addresses alone select the socket.
            cookie: [0xff; 8],
        },
    };
    let mut message = NetlinkMessage::new(header, SockDiagMessage::InetRequest(request).into());
    message.finalize();
    let mut buffer = vec![0; message.buffer_len()];
    message.serialize(&mut buffer);
    socket.send(&buffer, 0)?;
    let mut reply = vec![0; 8192];
    let size = socket.recv(&mut &mut reply[..], 0)?;
    let answer = NetlinkMessage::<SockDiagMessage>::deserialize(&reply[..size.min(reply.len())])
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    match answer.payload {
        NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(response)) => Ok(Some((
            u64::from(response.header.inode),
            response.header.uid,
        ))),
        NetlinkPayload::Error(error) => match error.code {
            Some(code) if -code.get() == nix::libc::ENOENT => Ok(None),
            Some(code) => Err(std::io::Error::from_raw_os_error(-code.get())),
            None => Ok(None),
        },
        other => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("an unexpected answer: {other:?}"),
        )),
    }
}

/// The processes of the machine: each one's parent and, for toolhost's own, its mode.
struct ProcessTable {
    root: std::path::PathBuf,
    parents: HashMap<u32, u32>,
    markers: HashMap<u32, Starter>,
    this: u32,
}

impl ProcessTable {
    /// The table of the processes of user `uid` under `root` (`/proc`), `this` being the
    /// serving host. (A process's parent may be another user's: it is still its parent.)
    fn read(root: &Path, this: u32, uid: u32) -> Self {
        let mut parents = HashMap::new();
        let mut markers = HashMap::from([(this, Starter::ThisHost)]);
        for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Some(ppid) = std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|stat| parent_of(&stat))
            else {
                continue;
            };
            parents.insert(pid, ppid);
            if real_uid(&entry.path()) != Some(uid) {
                continue;
            }
            if let Some(starter) = std::fs::read(entry.path().join("cmdline"))
                .ok()
                .and_then(|cmdline| starter_of(pid, &cmdline))
            {
                markers.entry(pid).or_insert(starter);
            }
        }
        Self {
            root: root.to_path_buf(),
            parents,
            markers,
            this,
        }
    }

    /// The marker `pid` is or descends from, if any.
    fn starter(&self, pid: u32) -> Option<Starter> {
        let mut current = pid;
        // Bounded: a parent chain has no cycle, but the table is read while processes come
        // and go, so a reused pid could make one.
        for _ in 0..self.parents.len() + 1 {
            if let Some(starter) = self.markers.get(&current) {
                return Some(*starter);
            }
            current = *self.parents.get(&current).filter(|&&p| p != 0)?;
        }
        None
    }

    /// Which process under a marker holds the descriptor whose link reads `target`.
    fn holder_under_marker(&self, target: &str) -> Origin {
        let mut unreadable = Vec::new();
        let mut pids: Vec<u32> = self.parents.keys().copied().collect();
        pids.sort_unstable();
        for pid in pids {
            let Some(by) = self.starter(pid) else {
                continue;
            };
            // A command supervisor is toolhost's own code: it makes no TCP socket, nothing in
            // the sandbox can hand it one, and it is undumpable (a command must not read its
            // environment), so its descriptors cannot be read by the same user anyway.
            if matches!(self.markers.get(&pid), Some(Starter::Supervisor(_))) {
                continue;
            }
            match self.holds(pid, target) {
                Ok(true) => return Origin::ToolCall { pid, by },
                Ok(false) => {}
                Err(()) => unreadable.push(pid),
            }
        }
        if unreadable.is_empty() {
            Origin::User
        } else {
            Origin::Unknown(format!(
                "the descriptors of processes started by tool calls cannot be read (pids {unreadable:?})"
            ))
        }
    }

    /// Whether `pid` holds a descriptor whose link reads `target`; `Err` when its descriptors
    /// cannot be read (a process that has ended holds nothing).
    fn holds(&self, pid: u32, target: &str) -> Result<bool, ()> {
        let dir = self.root.join(pid.to_string());
        // A thread may have a descriptor table of its own (clone without CLONE_FILES), so
        // every thread's is read; this process's threads share one (the host never unshares
        // it, and an in-process plugin is trusted code).
        let tables: Vec<std::path::PathBuf> = if pid == self.this {
            vec![dir.join("fd")]
        } else {
            match std::fs::read_dir(dir.join("task")) {
                Ok(tasks) => tasks.flatten().map(|t| t.path().join("fd")).collect(),
                Err(e) => return gone_or_unreadable(&e),
            }
        };
        for table in tables {
            let entries = match std::fs::read_dir(&table) {
                Ok(entries) => entries,
                Err(e) => {
                    gone_or_unreadable(&e)?;
                    continue;
                }
            };
            for entry in entries.flatten() {
                if std::fs::read_link(entry.path()).is_ok_and(|link| link.as_os_str() == target) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// The real user id of the process at `dir` (`/proc/PID`), from its status (readable whatever
/// the process's dumpable state).
fn real_uid(dir: &Path) -> Option<u32> {
    let status = std::fs::read_to_string(dir.join("status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `Ok(false)` for a process or thread that has ended, `Err` for one that cannot be read.
fn gone_or_unreadable(e: &std::io::Error) -> Result<bool, ()> {
    match e.kind() {
        std::io::ErrorKind::NotFound => Ok(false),
        _ if e.raw_os_error() == Some(nix::libc::ESRCH) => Ok(false),
        _ => Err(()),
    }
}

/// The parent pid in a `/proc/PID/stat` line (`pid (comm) state ppid ...`; the command name
/// may hold spaces and parentheses, so the fields are counted after its last `)`).
fn parent_of(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The marker a `/proc/PID/cmdline` names: a toolhost binary's hidden modes are its argv[1];
/// any other process whose program is named `toolhost` is another instance. (A process can
/// name itself so; that only makes its own connections refused.)
fn starter_of(pid: u32, cmdline: &[u8]) -> Option<Starter> {
    let mut args = cmdline.split(|&b| b == 0);
    let program = args.next()?;
    let mode = args.next().unwrap_or_default();
    if mode == SUPERVISOR_MODE.as_bytes() {
        Some(Starter::Supervisor(pid))
    } else if mode == WORKER_MODE.as_bytes() {
        Some(Starter::Worker(pid))
    } else if program.rsplit(|&b| b == b'/').next() == Some(b"toolhost") {
        Some(Starter::Instance(pid))
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn the_parent_is_read_past_a_command_name_with_parentheses() {
        assert_eq!(parent_of("42 (a) b (c)) S 7 42 42 0"), Some(7));
        assert_eq!(parent_of("42 (x"), None);
    }

    #[test]
    fn the_modes_of_toolhost_are_markers() {
        let cmdline = |mode: &str| format!("/usr/bin/toolhost\0{mode}\0--policy\0").into_bytes();
        assert_eq!(
            starter_of(5, &cmdline(SUPERVISOR_MODE)),
            Some(Starter::Supervisor(5))
        );
        assert_eq!(
            starter_of(6, &cmdline(WORKER_MODE)),
            Some(Starter::Worker(6))
        );
        assert_eq!(starter_of(7, &cmdline("mcp")), Some(Starter::Instance(7)));
        assert_eq!(starter_of(8, b""), None);
        assert_eq!(starter_of(9, b"/usr/bin/python3\0client.py\0"), None);
        assert_eq!(starter_of(10, b"/opt/not-toolhost\0mcp\0"), None);
    }

    #[test]
    fn a_process_descends_from_its_nearest_marker_and_a_cycle_ends_the_walk() {
        let table = ProcessTable {
            root: "/nonexistent".into(),
            // 1 <- 10 (host) <- 11 (supervisor) <- 12 <- 13; 1 <- 20; 30 <-> 31.
            parents: HashMap::from([
                (1, 0),
                (10, 1),
                (11, 10),
                (12, 11),
                (13, 12),
                (20, 1),
                (30, 31),
                (31, 30),
            ]),
            markers: HashMap::from([(10, Starter::ThisHost), (11, Starter::Supervisor(11))]),
            this: 10,
        };
        assert_eq!(table.starter(13), Some(Starter::Supervisor(11)));
        assert_eq!(table.starter(11), Some(Starter::Supervisor(11)));
        assert_eq!(table.starter(10), Some(Starter::ThisHost));
        assert_eq!(table.starter(20), None);
        assert_eq!(table.starter(1), None);
        assert_eq!(table.starter(30), None);
    }

    #[test]
    fn a_supervisor_is_not_looked_into_but_what_it_started_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // The supervisor's descriptors cannot be read (here: `task` is not a directory).
        std::fs::create_dir_all(root.join("11")).unwrap();
        std::fs::write(root.join("11/task"), "").unwrap();
        std::fs::create_dir_all(root.join("12/task/12/fd")).unwrap();
        let table = |parents: &[(u32, u32)]| ProcessTable {
            root: root.to_path_buf(),
            parents: parents.iter().copied().collect(),
            markers: HashMap::from([(11, Starter::Supervisor(11))]),
            this: 10,
        };
        assert_eq!(
            table(&[(11, 1), (12, 11)]).holder_under_marker("socket:[7]"),
            Origin::User
        );
        // A command whose descriptors cannot be read is another matter.
        std::fs::remove_dir_all(root.join("12/task")).unwrap();
        std::fs::write(root.join("12/task"), "").unwrap();
        assert!(matches!(
            table(&[(11, 1), (12, 11)]).holder_under_marker("socket:[7]"),
            Origin::Unknown(_)
        ));
    }

    #[test]
    fn a_connection_of_this_process_is_found_as_its_own() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let local = accepted.local_addr().unwrap();
        assert_eq!(
            origin(peer, local),
            Origin::ToolCall {
                pid: std::process::id(),
                by: Starter::ThisHost
            }
        );
        // The same socket, this process not being the host: a user's.
        let (inode, owner) = socket_inode(peer, local).unwrap().unwrap();
        assert_eq!(owner, rustix::process::getuid().as_raw());
        let uid = rustix::process::getuid().as_raw();
        let table = ProcessTable::read(Path::new("/proc"), u32::MAX, uid);
        assert_eq!(
            table.holder_under_marker(&format!("socket:[{inode}]")),
            Origin::User
        );
        // A loopback peer with no socket cannot be told: refused.
        drop((client, accepted));
        let gone: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert!(matches!(origin(gone, local), Origin::Unknown(_)));
        assert_eq!(
            origin("192.0.2.1:5".parse().unwrap(), local),
            Origin::Remote
        );
    }
}
