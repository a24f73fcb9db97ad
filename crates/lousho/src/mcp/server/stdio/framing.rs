//! Newline-delimited JSON-RPC on stdin/stdout, read here rather than by rmcp's
//! `AsyncRwTransport`, which drops some lines in silence (the client then
//! waits forever) and answers others without the `id` JSON-RPC requires. A
//! line over the size limit, not valid UTF-8, not JSON, or not a JSON-RPC
//! message gets a JSON-RPC error (`-32700` parse error, `-32600` invalid
//! request) carrying the line's id when one can be read from it, `"id": null`
//! otherwise, and a warning on stderr; the server keeps serving.

use super::super::recover_id::recover_id;
use crate::mcp::batch_writer::BatchWriter;
use crate::mcp::line_reader::{LineReader, ReadLine};
use crate::mcp::typed_call::{call_message, read_call_parts};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use serde_json::{Value, json};
use std::future::Future;
use std::io;
use tokio::io::AsyncRead;

/// How much of an oversized line is kept to read its id from.
const HEAD_BYTES: usize = 4096;

/// The stdio transport of a served agent.
pub(crate) struct LineTransport<R> {
    reader: LineReader<R>,
    out: BatchWriter,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    pub(crate) fn new(read: R, out: BatchWriter, max_line_bytes: usize) -> Self {
        Self {
            reader: LineReader::new(read, max_line_bytes, HEAD_BYTES),
            out,
        }
    }

    /// Writes a JSON-RPC error line.
    fn answer(&self, id: Option<Value>, code: i64, message: &str) {
        let line = json!({
            "jsonrpc": "2.0",
            "id": id.unwrap_or(Value::Null),
            "error": { "code": code, "message": message },
        });
        if self.out.queue_message(&line).is_err() {
            tracing::debug!("stdout is closed; an error answer was not sent");
        }
    }

    /// Parses a complete line: `Some` to deliver it, `None` when it was
    /// answered, ignored or logged instead.
    fn parse(&self, line: &[u8]) -> Option<ClientJsonRpcMessage> {
        if let Some((id, params)) = read_call_parts(line) {
            return Some(call_message(id, params));
        }
        let err = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
            Ok(message) => return Some(message),
            Err(e) => e,
        };
        let id = recover_id(line);
        if std::str::from_utf8(line).is_err() {
            tracing::warn!(id = ?id, bytes = line.len(), "a stdio request line is not valid UTF-8; answering with an error");
            self.answer(id, -32700, "Parse error: the line is not valid UTF-8");
            return None;
        }
        if err.is_syntax() || err.is_eof() {
            tracing::warn!(id = ?id, error = %err, bytes = line.len(), "a stdio request line is not valid JSON; answering with a parse error");
            self.answer(id, -32700, &format!("Parse error: {err}"));
            return None;
        }
        if is_ignorable_notification(line) {
            tracing::trace!("ignoring a non-standard notification");
            return None;
        }
        tracing::warn!(id = ?id, error = %err, "a stdio line is not a JSON-RPC message; answering with an error");
        self.answer(
            id,
            -32600,
            &format!("Invalid Request: not an MCP message ({err})"),
        );
        None
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        std::future::ready(self.out.queue_message(&item))
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            match self.reader.read_line().await {
                ReadLine::Line => {}
                ReadLine::Oversized { head } => {
                    let id = recover_id(&head);
                    let max_line_bytes = self.reader.max_line_bytes();
                    tracing::warn!(
                        id = ?id,
                        max_line_bytes,
                        "a stdio request line is over the size limit; answering with an error"
                    );
                    self.answer(
                        id,
                        -32600,
                        &format!(
                            "Invalid Request: the message is over the {max_line_bytes} byte limit"
                        ),
                    );
                    continue;
                }
                ReadLine::Eof => return None,
                ReadLine::Failed(e) => {
                    tracing::error!(error = %e, "cannot read stdin");
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
        // rmcp closes once its handlers' answers are out (or its drain ran out).
        self.out.close();
        Ok(())
    }
}

/// A notification of a method that is not MCP's (an LSP message, a vendor
/// extension): ignored, as rmcp does.
fn is_ignorable_notification(line: &[u8]) -> bool {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return false;
    };
    let Some(method) = value.get("method").and_then(Value::as_str) else {
        return false;
    };
    value.get("id").is_none()
        && !matches!(
            method,
            "notifications/cancelled"
                | "notifications/initialized"
                | "notifications/progress"
                | "notifications/roots/list_changed"
        )
}
