//! The client's stdin and stdout for `toolhost mcp` over stdio, taken over for the protocol alone
//! ([`crate::frontends::protocol_stdio`]), as the async streams rmcp reads and writes.

pub use streams::{restore, take, Reader, Writer};

#[cfg(unix)]
mod streams {
    use std::fs::File;
    use std::io;
    use std::os::unix::fs::FileTypeExt;

    use tokio::io::{AsyncRead, AsyncWrite};
    use tokio::net::unix::pipe;

    /// The protocol's input.
    pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
    /// The protocol's output.
    pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

    /// Moves the protocol onto private copies of fds 0 and 1 (see
    /// [`crate::frontends::protocol_stdio::take`]). Must run inside the runtime: pipes register
    /// with its reactor.
    pub fn take() -> io::Result<(Reader, Writer)> {
        let (input, output) = crate::frontends::protocol_stdio::take()?;
        Ok((reader(input)?, writer(output)?))
    }

    /// Points the standard streams away from the protocol again if a plugin closed them.
    pub fn restore() {
        crate::frontends::protocol_stdio::restore();
    }

    /// A pipe (how MCP clients start servers) is read on the reactor; anything else (a file, a
    /// terminal) on the blocking pool.
    fn reader(file: File) -> io::Result<Reader> {
        if is_fifo(&file) {
            Ok(Box::new(pipe::Receiver::from_file(file)?))
        } else {
            Ok(Box::new(tokio::fs::File::from_std(file)))
        }
    }

    fn writer(file: File) -> io::Result<Writer> {
        if is_fifo(&file) {
            Ok(Box::new(pipe::Sender::from_file(file)?))
        } else {
            Ok(Box::new(tokio::fs::File::from_std(file)))
        }
    }

    fn is_fifo(file: &File) -> bool {
        file.metadata().is_ok_and(|m| m.file_type().is_fifo())
    }
}

/// Elsewhere the standard streams are used as they are.
#[cfg(not(unix))]
mod streams {
    use std::io;

    use tokio::io::{AsyncRead, AsyncWrite};

    /// The protocol's input.
    pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
    /// The protocol's output.
    pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

    /// The standard streams.
    pub fn take() -> io::Result<(Reader, Writer)> {
        let (input, output) = rmcp::transport::stdio();
        Ok((Box::new(input), Box::new(output)))
    }

    /// Nothing to restore.
    pub fn restore() {}
}
