//! SOCKS5 (RFC 1928) on the same port of a command's loopback as the HTTP proxy, for programs
//! that speak only SOCKS (`curl --socks5-hostname`, `ssh -o ProxyCommand='nc -X 5 -x
//! 127.0.0.1:PORT %h %p'`, `ALL_PROXY=socks5h://...`): no authentication, `CONNECT` only, the
//! target as a name (decided before anything resolves it) or an address, then the same
//! decision, question, address check, log and kernel tunnel as an HTTP `CONNECT`
//! ([`super::connect`]).
//!
//! Written here rather than with a SOCKS crate: the protocol is two fixed exchanges, and what
//! follows them (the policy, the address check, the splice) must be the proxy's own, which a
//! server crate would take over.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::connect::{connect, write_log, Refusal};
use super::rules::Target;
use super::session::Session;
use super::splice;

/// The protocol's version byte, which every client message starts with.
pub const VERSION: u8 = 5;

/// The method "no authentication", and "no acceptable method".
const NO_AUTH: u8 = 0x00;
const NO_METHOD: u8 = 0xff;

/// The command `CONNECT`.
const CONNECT: u8 = 0x01;

/// Address types.
const IPV4: u8 = 0x01;
const NAME: u8 = 0x03;
const IPV6: u8 = 0x04;

/// Replies: succeeded, not allowed by the rules, host unreachable, command not supported,
/// address type not supported.
const SUCCEEDED: u8 = 0x00;
const NOT_ALLOWED: u8 = 0x02;
const UNREACHABLE: u8 = 0x04;
const BAD_COMMAND: u8 = 0x07;
const BAD_ADDRESS: u8 = 0x08;

/// Serves one SOCKS5 connection of a command: the greeting, one `CONNECT`, then the tunnel
/// until either side ends or the command's link closes.
pub async fn serve(mut stream: TcpStream, session: Arc<Session>) {
    let Some(target) = handshake(&mut stream).await else {
        return;
    };
    let Some((grant, _)) = session.grant(None) else {
        let _ = reply(&mut stream, NOT_ALLOWED).await;
        return;
    };
    let (opened, mut entry) = match connect(&session, &grant, &grant.policy, &target).await {
        Ok(connected) => connected,
        Err(Refusal::Denied(_)) => {
            let _ = reply(&mut stream, NOT_ALLOWED).await;
            return;
        }
        Err(Refusal::Failed(_)) => {
            let _ = reply(&mut stream, UNREACHABLE).await;
            return;
        }
    };
    if reply(&mut stream, SUCCEEDED).await.is_err() {
        return;
    }
    let (Ok(client), Ok(upstream)) = (stream.into_std(), opened.stream.into_std()) else {
        return;
    };
    if let Some((sent, received)) = splice::tunnel(client, upstream, &session.closed).await {
        entry.sent = sent;
        entry.received = received;
    }
    write_log(&grant, &entry);
}

/// The greeting and the request: the target, or `None` after telling the client why not.
async fn handshake(stream: &mut TcpStream) -> Option<Target> {
    let mut greeting = [0u8; 2];
    stream.read_exact(&mut greeting).await.ok()?;
    let mut methods = vec![0u8; usize::from(greeting[1])];
    stream.read_exact(&mut methods).await.ok()?;
    if greeting[0] != VERSION || !methods.contains(&NO_AUTH) {
        let _ = stream.write_all(&[VERSION, NO_METHOD]).await;
        return None;
    }
    stream.write_all(&[VERSION, NO_AUTH]).await.ok()?;
    let mut request = [0u8; 4];
    stream.read_exact(&mut request).await.ok()?;
    if request[0] != VERSION || request[1] != CONNECT {
        let _ = reply(stream, BAD_COMMAND).await;
        return None;
    }
    let host = match request[3] {
        IPV4 => {
            let mut octets = [0u8; 4];
            stream.read_exact(&mut octets).await.ok()?;
            Ipv4Addr::from(octets).to_string()
        }
        IPV6 => {
            let mut octets = [0u8; 16];
            stream.read_exact(&mut octets).await.ok()?;
            Ipv6Addr::from(octets).to_string()
        }
        NAME => {
            let mut length = [0u8; 1];
            stream.read_exact(&mut length).await.ok()?;
            let mut name = vec![0u8; usize::from(length[0])];
            stream.read_exact(&mut name).await.ok()?;
            String::from_utf8(name).ok()?
        }
        _ => {
            let _ = reply(stream, BAD_ADDRESS).await;
            return None;
        }
    };
    let mut port = [0u8; 2];
    stream.read_exact(&mut port).await.ok()?;
    Some(Target::new(&host, u16::from_be_bytes(port)))
}

/// A reply with `code` (the bound address is not told: `0.0.0.0:0`).
async fn reply(stream: &mut TcpStream, code: u8) -> std::io::Result<()> {
    stream
        .write_all(&[VERSION, code, 0, IPV4, 0, 0, 0, 0, 0, 0])
        .await
}
