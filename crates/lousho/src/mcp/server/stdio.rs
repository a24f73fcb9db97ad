//! The stdio transport, fast: non-blocking fd 0/1 (pipes, or the socketpairs
//! Node-based hosts such as Claude Code hand their children) instead of
//! tokio's blocking-pool stdin/stdout, and a writer that batches responses
//! into one write whenever several are queued.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

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
    let (writer, task) = BatchWriter::spawn(writer);
    (reader, writer, task)
}

fn socket(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let std = std::os::unix::net::UnixStream::from(fd);
    std.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(std)
}

/// An `AsyncWrite` that hands each write to a background task, which writes
/// everything queued at once and flushes only when the queue is empty. rmcp
/// flushes after every message; here that flush is free.
pub(crate) struct BatchWriter {
    tx: Option<mpsc::UnboundedSender<Vec<u8>>>,
}

impl BatchWriter {
    /// Starts the writer task; await its handle after the service stops so the
    /// last responses reach stdout.
    pub(crate) fn spawn<W>(mut out: W) -> (Self, JoinHandle<io::Result<()>>)
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::spawn(async move {
            let mut batch: Vec<u8> = Vec::with_capacity(64 * 1024);
            while let Some(first) = rx.recv().await {
                batch.clear();
                batch.extend_from_slice(&first);
                while let Ok(more) = rx.try_recv() {
                    batch.extend_from_slice(&more);
                }
                out.write_all(&batch).await?;
                if rx.is_empty() {
                    out.flush().await?;
                }
                if batch.capacity() > 1024 * 1024 {
                    batch = Vec::with_capacity(64 * 1024);
                }
            }
            out.flush().await?;
            out.shutdown().await.or_else(|e| match e.kind() {
                io::ErrorKind::BrokenPipe | io::ErrorKind::NotConnected => Ok(()),
                _ => Err(e),
            })
        });
        (Self { tx: Some(tx) }, task)
    }
}

impl BatchWriter {
    /// Queues whole bytes (a message line) for stdout.
    pub(crate) fn queue(&self, bytes: Vec<u8>) -> io::Result<()> {
        match &self.tx {
            Some(tx) if tx.send(bytes).is_ok() => Ok(()),
            _ => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "stdout is closed",
            )),
        }
    }

    /// Stops taking writes; the writer task ends once the queue is written.
    pub(crate) fn close(&mut self) {
        self.tx = None;
    }
}

impl AsyncWrite for BatchWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &self.tx {
            Some(tx) if tx.send(buf.to_vec()).is_ok() => Poll::Ready(Ok(buf.len())),
            _ => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "stdout is closed",
            ))),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.tx = None;
        Poll::Ready(Ok(()))
    }
}
