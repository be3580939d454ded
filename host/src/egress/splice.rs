//! A tunnel's bytes moved between its two sockets by the kernel (`splice(2)` through a pipe),
//! never copied into the proxy: a tunnel costs the second trip through the loopback's TCP
//! stack, not a copy on top. Each direction runs on a blocking thread; the tunnel ends when
//! both directions have (each end's close is passed on as a shutdown of writing), or when it
//! is cut (both sockets shut down).
//!
//! Written against nix's `splice` because tokio has no socket-to-socket transfer, and its
//! `copy_bidirectional` moves every byte through a user-space buffer.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsFd;

use nix::fcntl::{fcntl, splice, FcntlArg, OFlag, SpliceFFlags};

/// How much one `splice` moves at most (the pipe is made this large where it may be).
const CHUNK: usize = 1 << 20;

/// Moves what arrives on `from` to `to` until `from` ends, then shuts `to` down for writing.
/// Returns the bytes moved.
pub fn pump(from: &TcpStream, to: &TcpStream) -> io::Result<u64> {
    let (pipe_out, pipe_in) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    // A larger pipe means fewer calls; the default (64 KiB) works too.
    let _ = fcntl(pipe_in.as_fd(), FcntlArg::F_SETPIPE_SZ(CHUNK as i32));
    // Not SPLICE_F_MORE: like MSG_MORE it holds a short last segment back (up to 200 ms).
    let flags = SpliceFFlags::SPLICE_F_MOVE;
    let mut total = 0u64;
    loop {
        let moved = match splice(from.as_fd(), None, pipe_in.as_fd(), None, CHUNK, flags) {
            Ok(0) => break,
            Ok(moved) => moved,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        };
        let mut left = moved;
        while left > 0 {
            match splice(pipe_out.as_fd(), None, to.as_fd(), None, left, flags) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(written) => left -= written,
                Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        total += moved as u64;
    }
    let _ = to.shutdown(Shutdown::Write);
    Ok(total)
}

/// Both directions of a tunnel between `client` and `upstream`, on blocking threads of the
/// runtime; ends early when `cut` is cancelled. Returns (bytes sent upstream, bytes
/// received), `None` when it was cut or a socket could not be used.
pub async fn tunnel(
    client: TcpStream,
    upstream: TcpStream,
    cut: &tokio_util::sync::CancellationToken,
) -> Option<(u64, u64)> {
    client.set_nonblocking(false).ok()?;
    upstream.set_nonblocking(false).ok()?;
    let (client_copy, upstream_copy) = (client.try_clone().ok()?, upstream.try_clone().ok()?);
    let (cut_client, cut_upstream) = (client.try_clone().ok()?, upstream.try_clone().ok()?);
    let sending = tokio::task::spawn_blocking(move || pump(&client, &upstream));
    let receiving = tokio::task::spawn_blocking(move || pump(&upstream_copy, &client_copy));
    let both = async { (sending.await, receiving.await) };
    tokio::select! {
        (sent, received) = both => Some((sent.ok()?.ok()?, received.ok()?.ok()?)),
        _ = cut.cancelled() => {
            let _ = cut_client.shutdown(Shutdown::Both);
            let _ = cut_upstream.shutdown(Shutdown::Both);
            None
        }
    }
}
