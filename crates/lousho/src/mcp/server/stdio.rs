//! The stdio transport, fast: non-blocking fd 0/1 (pipes, or the socketpairs
//! Node-based hosts such as Claude Code hand their children) instead of
//! tokio's blocking-pool stdin/stdout, and a writer that batches responses
//! into one write whenever several are queued.

use crate::mcp::batch_writer::BatchWriter;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

mod framing;

pub(crate) use framing::LineTransport;

/// A boxed reader for stdin.
pub(crate) type StdinReader = Box<dyn AsyncRead + Send + Unpin>;
/// A boxed writer for stdout.
type StdoutWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// What kind of file an fd is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fifo,
    Socket,
    Other,
}

fn kind_of(fd: &OwnedFd) -> Kind {
    let Ok(meta) = fd
        .try_clone()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
    else {
        return Kind::Other;
    };
    let t = meta.file_type();
    if t.is_fifo() {
        Kind::Fifo
    } else if t.is_socket() {
        Kind::Socket
    } else {
        Kind::Other
    }
}

/// Opens stdin and stdout for serving: pipes through rmcp's non-blocking pipe
/// driver, sockets as non-blocking `UnixStream`s, anything else (a terminal,
/// a file) through tokio's blocking handles.
pub(crate) fn open() -> (StdinReader, BatchWriter, JoinHandle<io::Result<()>>) {
    let stdin = std::io::stdin().as_fd().try_clone_to_owned().ok();
    let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok();
    let kinds = (
        stdin.as_ref().map_or(Kind::Other, kind_of),
        stdout.as_ref().map_or(Kind::Other, kind_of),
    );
    let (reader, writer): (StdinReader, StdoutWriter) = if kinds == (Kind::Fifo, Kind::Fifo) {
        let (r, w) = rmcp::transport::stdio_pipes();
        tracing::debug!("stdio: non-blocking pipes");
        (Box::new(r), Box::new(w))
    } else {
        let reader: StdinReader = match (kinds.0, stdin) {
            (Kind::Socket, Some(fd)) => match socket(fd) {
                Ok(s) => Box::new(s),
                Err(_) => Box::new(tokio::io::stdin()),
            },
            _ => Box::new(tokio::io::stdin()),
        };
        let writer: StdoutWriter = match (kinds.1, stdout) {
            (Kind::Socket, Some(fd)) => match socket(fd) {
                Ok(s) => Box::new(s),
                Err(_) => Box::new(tokio::io::stdout()),
            },
            _ => Box::new(tokio::io::stdout()),
        };
        tracing::debug!(?kinds, "stdio: opened");
        (reader, writer)
    };
    let (writer, task) = BatchWriter::spawn(writer, CancellationToken::new());
    (reader, writer, task)
}

fn socket(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let std = std::os::unix::net::UnixStream::from(fd);
    std.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(std)
}
