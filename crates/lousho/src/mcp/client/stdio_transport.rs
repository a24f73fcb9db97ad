//! The client side of stdio: newline-delimited JSON-RPC read from a server's
//! stdout and written to its stdin, read here rather than by rmcp's
//! `AsyncRwTransport`, which drops a reply it cannot parse at debug level
//! (the call then waits its whole timeout). A reply to a request in flight
//! that does not parse becomes an error for that request ([`Replies`]);
//! other lines that are not MCP messages are skipped (logged at debug; the
//! first non-JSON one is kept for error messages, [`StdoutNoise`]). Lines
//! over the limit are dropped, and every request in flight fails at once
//! ([`Replies::oversize`]): any of them may have been waiting for it.
//!
//! Writes go through one writer task ([`BatchWriter`]). `close` ends a write
//! the server does not read: it never waits on a full pipe.

use super::replies::{Replies, request_id, trace_received, trace_sent};
use super::stdout_watch::StdoutNoise;
use crate::mcp::batch_writer::BatchWriter;
use crate::mcp::line_reader::{LineReader, ReadLine};
use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::collections::VecDeque;
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
    /// Errors for requests an over-limit message failed, not yet handed on.
    failed: VecDeque<ServerJsonRpcMessage>,
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
            out,
            writer: Some(writer),
            abandon,
            failed: VecDeque::new(),
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

impl<R> Drop for ChildTransport<R> {
    fn drop(&mut self) {
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
        trace_sent("stdio", &item);
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
            if let Some(failed) = self.failed.pop_front() {
                return Some(failed);
            }
            match self.reader.read_line().await {
                ReadLine::Line => {}
                ReadLine::Oversized { .. } => {
                    tracing::debug!(
                        max_line_bytes = self.reader.max_line_bytes(),
                        "dropped a message from the MCP server over the size limit; failing the requests in flight"
                    );
                    self.failed.extend(self.replies.oversize());
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
            if let Some(message) = &parsed {
                trace_received("stdio", message);
                return parsed;
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        // What can still be written goes out; a write stuck on a server that
        // stopped reading is given up.
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
    async fn an_oversize_message_fails_the_requests_in_flight_at_once() {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"{}\"}}\n",
            "x".repeat(64)
        );
        let replies = Replies::default();
        let mut t = ChildTransport::new(
            long.as_bytes(),
            tokio::io::sink(),
            32,
            replies.clone(),
            StdoutNoise::default(),
        );
        t.send(call(1)).await.expect("sent");
        t.send(call(2)).await.expect("sent");
        let mut failed = Vec::new();
        while let Some(message) = t.receive().await {
            let ServerJsonRpcMessage::Error(e) = message else {
                panic!("{message:?}");
            };
            failed.push(e.id.expect("an id"));
        }
        failed.sort_by_key(|id| id.to_string());
        assert_eq!(failed, [RequestId::Number(1), RequestId::Number(2)]);
        assert_eq!(
            replies.take_invalid(&RequestId::Number(2)),
            Some(crate::mcp::client::replies::InvalidReply::Oversize)
        );
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
