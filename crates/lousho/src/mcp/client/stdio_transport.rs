//! The client side of stdio: newline-delimited JSON-RPC read from a server's
//! stdout and written to its stdin, read here rather than by rmcp's
//! `AsyncRwTransport`, which drops a reply it cannot parse at debug level
//! (the call then waits its whole timeout). A reply to a request in flight
//! that does not parse becomes an error for that request ([`Replies`]);
//! other lines that are not MCP messages are skipped (logged at debug; the
//! first non-JSON one is kept for error messages, [`StdoutNoise`]). Lines
//! over the limit are dropped and counted (the call waiting for one fails).
//!
//! Writes go through one writer task ([`BatchWriter`]), which also carries
//! the [`DirectCalls`] of the connection, whose replies this transport hands
//! over before rmcp sees them. `close` ends a write the server does not
//! read: it never waits on a full pipe.

use super::direct_calls::DirectCalls;
use super::replies::{Replies, request_id};
use super::stdout_watch::StdoutNoise;
use crate::mcp::batch_writer::BatchWriter;
use crate::mcp::line_reader::{LineReader, ReadLine};
use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::future::Future;
use std::io;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The stdio transport of one server.
pub(crate) struct ChildTransport<R> {
    reader: LineReader<R>,
    out: BatchWriter,
    writer: Option<JoinHandle<io::Result<()>>>,
    abandon: CancellationToken,
    direct: DirectCalls,
    replies: Replies,
    noise: StdoutNoise,
}

impl<R: AsyncRead + Unpin> ChildTransport<R> {
    /// Reads from `read` (the server's stdout), writes to `write` (its
    /// stdin); reports invalid replies to `replies`, other lines to `noise`.
    pub(crate) fn new<W: AsyncWrite + Send + Unpin + 'static>(
        read: R,
        write: W,
        max_line_bytes: usize,
        replies: Replies,
        noise: StdoutNoise,
    ) -> Self {
        let abandon = CancellationToken::new();
        let (out, writer) = BatchWriter::spawn(write, abandon.clone());
        Self {
            reader: LineReader::new(read, max_line_bytes, 0),
            direct: DirectCalls::new(out.clone()),
            out,
            writer: Some(writer),
            abandon,
            replies,
            noise,
        }
    }

    /// The direct `tools/call`s written and answered through this transport.
    pub(crate) fn direct_calls(&self) -> DirectCalls {
        self.direct.clone()
    }

    /// The message on the line just read, if it is one to deliver.
    fn parse(&self, line: &[u8]) -> Option<ServerJsonRpcMessage> {
        if self.direct.waiting() && self.direct.deliver(line) {
            return None;
        }
        match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
            Ok(message) => {
                let message = self.direct.route(message)?;
                self.replies.received(&message);
                Some(message)
            }
            Err(e) => {
                if self.direct.deliver_invalid(line, &e) {
                    return None;
                }
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

impl<R> Drop for ChildTransport<R> {
    fn drop(&mut self) {
        self.direct.close();
        self.abandon.cancel();
    }
}

impl<R> Transport<RoleClient> for ChildTransport<R>
where
    R: AsyncRead + Unpin + Send,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        if let Some(id) = request_id(&item) {
            self.replies.sent(id);
        }
        let queued = self.out.queue_message(&item).map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => {
                io::Error::new(io::ErrorKind::NotConnected, "the transport is closed")
            }
            _ => e,
        });
        std::future::ready(queued)
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
                ReadLine::Eof => {
                    self.direct.close();
                    return None;
                }
                ReadLine::Failed(e) => {
                    tracing::debug!(error = %e, "cannot read the MCP server's stdout");
                    self.direct.close();
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
        // What can still be written goes out; a write stuck on a server that
        // stopped reading is given up.
        self.direct.close();
        self.out.close();
        self.abandon.cancel();
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
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
        t.send(call(1)).await.expect("queued");
        tokio::task::yield_now().await;
        t.close().await.expect("closed");
        assert!(t.send(call(2)).await.is_err(), "closed");
    }
}
