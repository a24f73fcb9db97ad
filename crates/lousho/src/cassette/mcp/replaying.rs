//! Replaying: a transport that answers rmcp's requests from the cassette.
//! Nothing is spawned or dialled; a request the cassette has no answer for
//! gets a JSON-RPC error naming the difference (and the cassette keeps it
//! for [`Cassette::check`]).

use crate::cassette::Cassette;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use std::future::Future;
use tokio::sync::mpsc;

/// JSON-RPC's "internal error" code, for a request the cassette cannot answer.
const NO_RECORDING: i64 = -32603;

/// One server's replayed connection.
pub(crate) struct Replaying {
    cassette: Cassette,
    server: String,
    /// Answers waiting to be received.
    tx: mpsc::UnboundedSender<Value>,
    rx: mpsc::UnboundedReceiver<Value>,
    closed: bool,
}

impl Replaying {
    /// `server`'s connection, answered from `cassette`.
    pub(crate) fn new(cassette: Cassette, server: &str) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            cassette,
            server: server.to_owned(),
            tx,
            rx,
            closed: false,
        }
    }

    /// Queues the answer to `message`, when it is a request.
    fn answer(&self, message: Value) {
        let (Some(id), Some(method)) = (
            message.get("id"),
            message.get("method").and_then(Value::as_str),
        ) else {
            // Notifications and answers to the server's requests.
            return;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let answer = match self.cassette.answer_mcp(&self.server, method, &params) {
            Ok(answer) => answer,
            Err(e) => {
                let error = json!({"code": NO_RECORDING, "message": e.to_string()});
                let _ = self
                    .tx
                    .send(json!({"jsonrpc": "2.0", "id": id, "error": error}));
                return;
            }
        };
        // Progress goes to this request's token, not the recorded one.
        let token = params.pointer("/_meta/progressToken");
        for mut notification in answer.exchange.notifications {
            if let (Some(token), Some(slot)) =
                (token, notification.pointer_mut("/params/progressToken"))
            {
                *slot = token.clone();
            }
            let _ = self.tx.send(notification);
        }
        let mut reply = json!({"jsonrpc": "2.0", "id": id});
        match (answer.exchange.result, answer.exchange.error) {
            (_, Some(error)) => reply["error"] = error,
            (result, None) => reply["result"] = result.unwrap_or_else(|| json!({})),
        }
        let _ = self.tx.send(reply);
        for notice in answer.notices {
            let _ = self.tx.send(notice);
        }
    }
}

impl Transport<RoleClient> for Replaying {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = if self.closed {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the transport is closed",
            ))
        } else {
            match serde_json::to_value(&item) {
                Ok(message) => {
                    self.answer(message);
                    Ok(())
                }
                Err(e) => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)),
            }
        };
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if self.closed {
                return None;
            }
            let message = self.rx.recv().await?;
            match serde_json::from_value(message) {
                Ok(message) => return Some(message),
                Err(e) => {
                    tracing::debug!(server = %self.server, error = %e, "skipping a recorded MCP message that does not parse")
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.closed = true;
        Ok(())
    }
}
