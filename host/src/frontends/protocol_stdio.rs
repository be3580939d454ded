//! The client's stdin and stdout, taken over for a protocol alone (`serve`, `mcp`).
//!
//! Plugins run in this process and share its standard streams: a plugin's `println!`, or a
//! process it starts that inherits fd 1, would write into the protocol stream, and one reading
//! fd 0 would take the client's requests. So before any plugin is loaded the protocol moves to
//! private (close-on-exec) copies of fds 0 and 1, and fd 0 is pointed at `/dev/null` and fd 1
//! at stderr. A plugin that closes fd 0 or fd 1 closes only those: the protocol keeps its
//! copies, and [`restore`] points the standard descriptors back where they were (so that the
//! next file opened in the process does not become fd 1 and receive what plugins print).

use std::fs::File;
use std::io;
use std::os::fd::AsFd;

/// Moves the protocol onto private copies of fds 0 and 1 and returns them (input, output),
/// then points fd 0 at `/dev/null` and fd 1 at stderr.
pub fn take() -> io::Result<(File, File)> {
    let input = File::from(io::stdin().as_fd().try_clone_to_owned()?);
    let output = File::from(io::stdout().as_fd().try_clone_to_owned()?);
    point_standard_streams_away()?;
    Ok((input, output))
}

/// Points fd 0 at `/dev/null` and fd 1 at stderr again where something in the process closed
/// them (a plugin did; the protocol's own copies are untouched). Cheap: one `fcntl` each.
pub fn restore() {
    let closed = |fd| rustix::io::fcntl_getfd(fd).is_err_and(|e| e == rustix::io::Errno::BADF);
    if closed(rustix::stdio::stdin()) || closed(rustix::stdio::stdout()) {
        tracing::warn!(target: "toolhost::protocol", "a plugin closed the standard input or output; pointing them away from the protocol again");
        if let Err(e) = point_standard_streams_away() {
            tracing::warn!(target: "toolhost::protocol", "cannot point the standard streams away again: {e}");
        }
    }
}

fn point_standard_streams_away() -> io::Result<()> {
    rustix::stdio::dup2_stdin(File::open("/dev/null")?)?;
    rustix::stdio::dup2_stdout(io::stderr())?;
    Ok(())
}
