//! The client side of stdio: newline-delimited JSON-RPC read from a server's
//! stdout and written to its stdin, read here rather than by rmcp's
//! `AsyncRwTransport`, which drops a reply it cannot parse at debug level
//! (the call then waits its whole timeout). A reply to a request in flight
//! that does not parse becomes an error for that request ([`Replies`]);
//! other lines that are not MCP messages are skipped (logged at debug; the
//! first non-JSON one is kept for error messages, [`StdoutNoise`]). Lines
//! over the limit are dropped and counted (the call waiting for one fails).
//!
//! `close` ends a write the server does not read: it never waits on a full
//! pipe.

use super::replies::{Replies, request_id};
use super::stdout_watch::StdoutNoise;
use crate::mcp::line_reader::{LineReader, ReadLine};
use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::future::Future;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// The stdio transport of one server.
pub(crate) struct ChildTransport<R, W> {
    reader: LineReader<R>,
    write: Arc<tokio::sync::Mutex<Option<W>>>,
    closed: CancellationToken,
    replies: Replies,
    noise: StdoutNoise,
}

impl<R: AsyncRead + Unpin, W> ChildTransport<R, W> {
    /// Reads from `read` (the server's stdout), writes to `write` (its
    /// stdin); reports invalid replies to `replies`, other lines to `noise`.
    pub(crate) fn new(
        read: R,
        write: W,
        max_line_bytes: usize,
        replies: Replies,
        noise: StdoutNoise,
    ) -> Self {
        Self {
            reader: LineReader::new(read, max_line_bytes, 0),
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
            closed: CancellationToken::new(),
            replies,
            noise,
        }
    }

    /// The message on the line just read, if it is one to deliver.
    fn parse(&self, line: &[u8]) -> Option<ServerJsonRpcMessage> {
        match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
            Ok(message) => {
                self.replies.received(&message);
                Some(message)
            }
            Err(e) => {
                let answer = self.replies.invalid(line, &e);
                if answer.is_none() {
                    self.noise.record_line(line);
                    tracing::debug!(error = %e, bytes = line.len(), "skipping a line from the MCP server that is not an MCP message");
                }
                answer
            }
        }
    }
}

impl<R, W> Transport<RoleClient> for ChildTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        if let Some(id) = request_id(&item) {
            self.replies.sent(id);
        }
        let bytes = serde_json::to_vec(&item).map(|mut b| {
            b.push(b'\n');
            b
        });
        let write = self.write.clone();
        let closed = self.closed.clone();
        async move {
            let bytes = bytes.map_err(io::Error::other)?;
            let closing = || io::Error::new(io::ErrorKind::NotConnected, "the transport is closed");
            let mut guard = tokio::select! {
                guard = write.lock() => guard,
                () = closed.cancelled() => return Err(closing()),
            };
            let Some(w) = guard.as_mut() else {
                return Err(closing());
            };
            tokio::select! {
                written = async {
                    w.write_all(&bytes).await?;
                    w.flush().await
                } => written,
                () = closed.cancelled() => Err(closing()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.reader.read_line().await {
                ReadLine::Line => {}
                ReadLine::Oversized { .. } => {
                    self.noise.record_oversize();
                    tracing::debug!(
                        max_line_bytes = self.reader.max_line_bytes(),
                        "dropped a message from the MCP server over the size limit"
                    );
                    continue;
                }
                ReadLine::Eof => return None,
                ReadLine::Failed(e) => {
                    tracing::debug!(error = %e, "cannot read the MCP server's stdout");
                    return None;
                }
            }
            let parsed = self.reader.line().and_then(|line| self.parse(line));
            self.reader.clear();
            if parsed.is_some() {
                return parsed;
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        // Writes stuck on a server that stopped reading give up the lock.
        self.closed.cancel();
        let mut write = self.write.lock().await;
        if let Some(mut w) = write.take() {
            let _ = w.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, RequestId,
    };

    fn call(id: i64) -> ClientJsonRpcMessage {
        ClientJsonRpcMessage::request(
            ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("t"))),
            RequestId::Number(id),
        )
    }

    #[tokio::test]
    async fn an_unreadable_reply_to_a_call_becomes_its_error() {
        let server_out: &[u8] = b"not json\n{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":\"boom\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"boom\"}\n";
        let replies = Replies::default();
        let noise = StdoutNoise::default();
        let mut t = ChildTransport::new(
            server_out,
            tokio::io::sink(),
            1024,
            replies.clone(),
            noise.clone(),
        );
        t.send(call(1)).await.expect("sent");
        // Id 2 was never asked: skipped like the stray line.
        match t.receive().await {
            Some(ServerJsonRpcMessage::Error(e)) => assert_eq!(e.id, Some(RequestId::Number(1))),
            other => panic!("{other:?}"),
        }
        assert!(replies.take_invalid(&RequestId::Number(1)).is_some());
        assert!(t.receive().await.is_none());
        assert_eq!(noise.first_line().as_deref(), Some("not json"));
    }

    #[tokio::test]
    async fn close_ends_a_write_the_server_does_not_read() {
        let (ours, _theirs) = tokio::io::duplex(16);
        let (_r, w) = tokio::io::split(ours);
        let mut t = ChildTransport::new(
            tokio::io::empty(),
            w,
            1024,
            Replies::default(),
            StdoutNoise::default(),
        );
        let stuck = tokio::spawn(t.send(call(1)));
        tokio::task::yield_now().await;
        t.close().await.expect("closed");
        assert!(stuck.await.expect("joined").is_err());
    }
}
