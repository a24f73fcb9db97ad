//! One writer task per pipe, for both sides of stdio MCP (a served agent's
//! stdout, a stdio server's stdin): messages are queued without waiting, and
//! the task writes everything queued at once, flushing only when the queue is
//! empty. A burst of replies or calls becomes one `write`, and a message is
//! never half-written because its sender was cancelled.

use std::io;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A batch grown past this by a big message is given back after it.
const KEEP_CAPACITY: usize = 1024 * 1024;

/// The sending side of a writer task. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct BatchWriter {
    tx: Option<mpsc::UnboundedSender<Vec<u8>>>,
}

impl BatchWriter {
    /// Starts the writer task on `out`. Once every `BatchWriter` is closed or
    /// dropped, the task writes what is queued, shuts `out` down and ends;
    /// await its handle so the last messages get out. When `abandon` is
    /// cancelled the task ends at once, even in a write the reader never
    /// takes (a server that stopped reading its stdin).
    pub(crate) fn spawn<W>(
        mut out: W,
        abandon: CancellationToken,
    ) -> (Self, JoinHandle<io::Result<()>>)
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::spawn(async move {
            let write_all = async move {
                let mut batch: Vec<u8> = Vec::with_capacity(64 * 1024);
                while let Some(first) = rx.recv().await {
                    if rx.is_empty() {
                        // One message: write it as it is.
                        out.write_all(&first).await?;
                    } else {
                        batch.clear();
                        batch.extend_from_slice(&first);
                        while let Ok(more) = rx.try_recv() {
                            batch.extend_from_slice(&more);
                        }
                        out.write_all(&batch).await?;
                        if batch.capacity() > KEEP_CAPACITY {
                            batch = Vec::with_capacity(64 * 1024);
                        }
                    }
                    if rx.is_empty() {
                        out.flush().await?;
                    }
                }
                out.flush().await?;
                out.shutdown().await.or_else(|e| match e.kind() {
                    io::ErrorKind::BrokenPipe | io::ErrorKind::NotConnected => Ok(()),
                    _ => Err(e),
                })
            };
            tokio::select! {
                biased;
                written = write_all => written,
                () = abandon.cancelled() => Ok(()),
            }
        });
        (Self { tx: Some(tx) }, task)
    }

    /// Queues whole bytes (a message line).
    pub(crate) fn queue(&self, bytes: Vec<u8>) -> io::Result<()> {
        match &self.tx {
            Some(tx) if tx.send(bytes).is_ok() => Ok(()),
            _ => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the pipe is closed",
            )),
        }
    }

    /// Queues `message` as one line of JSON (newline-delimited JSON-RPC).
    pub(crate) fn queue_message(&self, message: &impl serde::Serialize) -> io::Result<()> {
        let mut bytes = serde_json::to_vec(message).map_err(io::Error::other)?;
        bytes.push(b'\n');
        self.queue(bytes)
    }

    /// Stops taking writes (through this handle); the task ends once the
    /// queue is written and every handle is closed.
    pub(crate) fn close(&mut self) {
        self.tx = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn queued_messages_arrive_in_order_and_close_ends_the_stream() {
        let (ours, mut theirs) = tokio::io::duplex(1 << 20);
        let (mut w, task) = BatchWriter::spawn(ours, CancellationToken::new());
        for i in 0..100 {
            w.queue(format!("{i}\n").into_bytes()).expect("queued");
        }
        w.close();
        assert!(w.queue(b"late\n".to_vec()).is_err());
        task.await.expect("joined").expect("written");
        let mut got = String::new();
        theirs.read_to_string(&mut got).await.expect("read");
        let want: String = (0..100).map(|i| format!("{i}\n")).collect();
        assert_eq!(got, want);
    }

    #[tokio::test]
    async fn abandon_ends_a_write_nobody_reads() {
        let (ours, _theirs) = tokio::io::duplex(16);
        let abandon = CancellationToken::new();
        let (w, task) = BatchWriter::spawn(ours, abandon.clone());
        w.queue(vec![b'x'; 1024]).expect("queued");
        tokio::task::yield_now().await;
        assert!(!task.is_finished());
        abandon.cancel();
        task.await.expect("joined").expect("ended");
    }
}
