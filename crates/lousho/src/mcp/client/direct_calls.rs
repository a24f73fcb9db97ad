//! `tools/call` over stdio without the trip through rmcp's service loop.
//!
//! A call through rmcp's `Peer` goes to the service task over a channel,
//! which spawns a task to write it (after serialising its params to a
//! `serde_json::Value` and back), and its reply is read into `ServerResult`,
//! an untagged union that tries fifteen other result types before
//! `CallToolResult`. Here the call is written by the stdio transport's writer
//! task straight from the caller (borrowed arguments, one serialisation) and
//! its reply is read straight into `CallToolResult` by the transport, which
//! hands it to the caller ([`DirectCalls::deliver`]). Everything else — the
//! handshake, listings, notifications, the server's requests, cancellations —
//! still goes through rmcp.
//!
//! Direct calls use request ids from [`FIRST_ID`] up, far above rmcp's own
//! (a `u32` counter), and the same number as their progress token. Sessions
//! of protocol versions without an `initialize` handshake (2026-07-28 on)
//! need per-request metadata that rmcp adds, so they keep rmcp's path.

use super::replies::{failing, reply_id};
use crate::mcp::batch_writer::BatchWriter;
use rmcp::model::{
    CallToolResult, CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage,
    ErrorData, JsonObject, NumberOrString, RequestMetaObject, ServerJsonRpcMessage,
    ServerNotification,
};
use rmcp::service::ServiceError;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{Notify, oneshot};

/// The first id of a direct call (2^40: above any id rmcp's `u32` counter
/// gives, below the 2^53 a JavaScript server reads exactly).
pub(crate) const FIRST_ID: i64 = 1 << 40;

/// How a direct call was answered.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A tool result.
    Result(CallToolResult),
    /// A JSON-RPC error.
    Error(ErrorData),
    /// A reply that is not a tool result (an input request, a task).
    Unexpected,
    /// A reply that cannot be read; why.
    Invalid(String),
}

/// The direct calls of one stdio connection. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct DirectCalls {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    next: AtomicI64,
    out: BatchWriter,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    closed: bool,
    waiting: HashMap<i64, Waiting>,
}

#[derive(Debug)]
struct Waiting {
    reply: oneshot::Sender<Reply>,
    progress: Arc<Notify>,
}

/// One call in flight: its reply, and a signal for each progress
/// notification about it. Dropped unanswered, it is forgotten (a late reply
/// is then skipped like any reply nobody waits for).
#[derive(Debug)]
pub(crate) struct DirectCall {
    pub(crate) id: i64,
    pub(crate) reply: oneshot::Receiver<Reply>,
    pub(crate) progress: Arc<Notify>,
    calls: Arc<Inner>,
}

impl Drop for DirectCall {
    fn drop(&mut self) {
        let abandoned = {
            let mut state = self.calls.lock();
            state.waiting.remove(&self.id).is_some() && !state.closed
        };
        if abandoned {
            // The server may stop the work; its late reply is skipped.
            let message = ClientJsonRpcMessage::notification(
                cancellation(NumberOrString::Number(self.id)).into(),
            );
            let _ = self.calls.out.queue_message(&message);
        }
    }
}

/// The `notifications/cancelled` a caller that stops waiting for request
/// `id` sends (on either lane).
pub(crate) fn cancellation(id: NumberOrString) -> CancelledNotification {
    CancelledNotification::new(CancelledNotificationParam::new(
        Some(id),
        Some("cancelled by the caller".into()),
    ))
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The line of a direct call, serialised from borrowed parts.
#[derive(Serialize)]
struct CallLine<'a> {
    jsonrpc: &'static str,
    id: i64,
    method: &'static str,
    params: CallParams<'a>,
}

#[derive(Serialize)]
struct CallParams<'a> {
    #[serde(rename = "_meta")]
    meta: CallMeta<'a>,
    name: &'a str,
    arguments: &'a JsonObject,
}

#[derive(Serialize)]
struct CallMeta<'a> {
    #[serde(rename = "progressToken")]
    progress_token: i64,
    #[serde(flatten)]
    more: Option<&'a JsonObject>,
}

/// A reply read straight into the types a call expects. Any other message
/// (a notification, a request, a reply that is not a tool result) fails or
/// has a `method`, and is read the general way.
#[derive(Deserialize)]
struct ReplyLine {
    id: Option<i64>,
    method: Option<IgnoredAny>,
    result: Option<CallToolResult>,
    error: Option<ErrorData>,
}

/// The JSON of a direct `tools/call` with id `id` (also its progress
/// token), serialised once from borrowed parts; `meta` joins the progress
/// token in `_meta`.
pub(crate) fn call_message(
    id: i64,
    tool: &str,
    arguments: &JsonObject,
    meta: Option<&RequestMetaObject>,
) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&CallLine {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: CallParams {
            meta: CallMeta {
                progress_token: id,
                more: meta.map(|m| &m.0.0),
            },
            name: tool,
            arguments,
        },
    })
}

/// `message` read straight into a reply to a request: its id and the tool
/// result or error. `None` for anything else (a notification, a request, a
/// reply that is not a tool result or cannot be read), which is to be read
/// the general way (that says what is wrong).
pub(crate) fn read_reply(message: &[u8]) -> Option<(i64, Reply)> {
    let ReplyLine {
        id: Some(id),
        method: None,
        result,
        error,
    } = serde_json::from_slice::<ReplyLine>(message).ok()?
    else {
        return None;
    };
    match (result, error) {
        (Some(result), None) => Some((id, Reply::Result(result))),
        (None, Some(error)) => Some((id, Reply::Error(error))),
        _ => None,
    }
}

impl DirectCalls {
    /// Direct calls written by `out`.
    pub(crate) fn new(out: BatchWriter) -> Self {
        Self {
            inner: Arc::new(Inner {
                next: AtomicI64::new(FIRST_ID),
                out,
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// Writes a `tools/call` of `tool`; `meta` joins the progress token in
    /// the request's `_meta`.
    pub(crate) fn call(
        &self,
        tool: &str,
        arguments: &JsonObject,
        meta: Option<&RequestMetaObject>,
    ) -> Result<DirectCall, ServiceError> {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let mut bytes = call_message(id, tool, arguments, meta).map_err(|e| {
            ServiceError::TransportSend(rmcp::transport::DynamicTransportError::from_parts(
                "stdio",
                std::any::TypeId::of::<Self>(),
                Box::new(e),
            ))
        })?;
        bytes.push(b'\n');
        let (tx, reply) = oneshot::channel();
        let progress = Arc::new(Notify::new());
        {
            let mut state = self.inner.lock();
            if state.closed {
                return Err(ServiceError::TransportClosed);
            }
            state.waiting.insert(
                id,
                Waiting {
                    reply: tx,
                    progress: progress.clone(),
                },
            );
        }
        let call = DirectCall {
            id,
            reply,
            progress,
            calls: self.inner.clone(),
        };
        self.inner
            .out
            .queue(bytes)
            .map_err(|_| ServiceError::TransportClosed)?;
        Ok(call)
    }

    /// Whether any direct call waits for its reply.
    pub(crate) fn waiting(&self) -> bool {
        !self.inner.lock().waiting.is_empty()
    }

    /// Reads `line` as the reply to a direct call and hands it over; `true`
    /// when it was one (nothing else is to be done with it).
    pub(crate) fn deliver(&self, line: &[u8]) -> bool {
        match read_reply(line) {
            Some((id, reply)) => self.answer(id, reply),
            None => false,
        }
    }

    /// A message read the general way: a reply to a direct call (one that
    /// is not a tool result, or an error) is handed over (`None`); a
    /// progress notification about one restarts its timeout and is passed on
    /// (for the progress hook), as is everything else.
    pub(crate) fn route(&self, message: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        match &message {
            ServerJsonRpcMessage::Response(r) => match direct_id(&r.id) {
                Some(id) if self.answer(id, Reply::Unexpected) => None,
                _ => Some(message),
            },
            ServerJsonRpcMessage::Error(e) => match e.id.as_ref().and_then(direct_id) {
                Some(id) if self.answer(id, Reply::Error(e.error.clone())) => None,
                _ => Some(message),
            },
            ServerJsonRpcMessage::Notification(n) => {
                if let ServerNotification::ProgressNotification(p) = &n.notification
                    && let Some(id) = direct_id(&p.params.progress_token.0)
                    && let Some(waiting) = self.inner.lock().waiting.get(&id)
                {
                    waiting.progress.notify_one();
                }
                Some(message)
            }
            ServerJsonRpcMessage::Request(_) => Some(message),
        }
    }

    /// `line` could not be read (`error`): when it is a reply to a direct
    /// call, that call fails with the reason (`true`).
    pub(crate) fn deliver_invalid(&self, line: &[u8], error: &serde_json::Error) -> bool {
        match reply_id(line).as_ref().and_then(direct_id) {
            Some(id) if self.inner.lock().waiting.contains_key(&id) => {
                let why = failing(&id, line, error);
                self.answer(id, Reply::Invalid(why))
            }
            _ => false,
        }
    }

    /// The connection is gone: every call waiting fails as closed, and new
    /// ones at once.
    pub(crate) fn close(&self) {
        let waiting = {
            let mut state = self.inner.lock();
            state.closed = true;
            std::mem::take(&mut state.waiting)
        };
        drop(waiting);
    }

    fn answer(&self, id: i64, reply: Reply) -> bool {
        let waiting = self.inner.lock().waiting.remove(&id);
        match waiting {
            Some(w) => {
                let _ = w.reply.send(reply);
                true
            }
            None => false,
        }
    }
}

/// The number of a direct call's id (or progress token).
fn direct_id(id: &NumberOrString) -> Option<i64> {
    match id {
        NumberOrString::Number(n) if *n >= FIRST_ID => Some(*n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    use tokio_util::sync::CancellationToken;

    fn calls() -> (DirectCalls, tokio::io::DuplexStream) {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (out, _task) = BatchWriter::spawn(ours, CancellationToken::new());
        (DirectCalls::new(out), theirs)
    }

    /// The HTTP lane hands its own call bytes to rmcp's client through the
    /// typed reading: it must give the message rmcp's own reading gives.
    #[test]
    fn a_call_reads_back_typed_as_rmcp_reads_it() {
        let meta: RequestMetaObject = serde_json::from_value(serde_json::json!({
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        }))
        .unwrap();
        for meta in [None, Some(&meta)] {
            let bytes = call_message(FIRST_ID + 3, "echo", &args(), meta).unwrap();
            let typed = crate::mcp::typed_call::read_call(&bytes).expect("a tools/call");
            let general: ClientJsonRpcMessage = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(
                serde_json::to_value(&typed).unwrap(),
                serde_json::to_value(&general).unwrap()
            );
            assert_eq!(
                serde_json::to_value(&typed).unwrap(),
                serde_json::from_slice::<serde_json::Value>(&bytes).unwrap(),
                "rmcp sends what the lane wrote"
            );
        }
    }

    fn args() -> JsonObject {
        serde_json::json!({"text": "hi"})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn a_call_is_written_and_its_result_handed_over() {
        let (calls, mut server) = calls();
        let mut meta = RequestMetaObject::new();
        meta.set_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        let mut call = calls.call("echo", &args(), Some(&meta)).expect("sent");
        let mut buf = vec![0; 4096];
        let n = server.read(&mut buf).await.expect("read");
        let line: serde_json::Value = serde_json::from_slice(&buf[..n]).expect("json");
        assert_eq!(line["id"], FIRST_ID);
        assert_eq!(line["method"], "tools/call");
        assert_eq!(line["params"]["name"], "echo");
        assert_eq!(line["params"]["arguments"]["text"], "hi");
        assert_eq!(line["params"]["_meta"]["progressToken"], FIRST_ID);
        assert!(line["params"]["_meta"]["traceparent"].is_string());
        // rmcp's read of the same line is the request rmcp would have sent.
        let parsed: rmcp::model::ClientJsonRpcMessage =
            serde_json::from_slice(&buf[..n]).expect("an MCP request");
        assert!(matches!(
            parsed,
            rmcp::model::ClientJsonRpcMessage::Request(_)
        ));

        assert!(!calls.deliver(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#));
        let reply = format!(
            r#"{{"jsonrpc":"2.0","id":{FIRST_ID},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
        );
        assert!(calls.deliver(reply.as_bytes()));
        match (&mut call.reply).await.expect("answered") {
            Reply::Result(r) => assert_eq!(r.content.len(), 1),
            other => panic!("{other:?}"),
        }
        assert!(!calls.waiting());
    }

    #[tokio::test]
    async fn other_replies_errors_and_progress_reach_the_call() {
        let (calls, _server) = calls();
        let mut a = calls.call("t", &args(), None).expect("sent");
        let mut b = calls.call("t", &args(), None).expect("sent");
        let mut c = calls.call("t", &args(), None).expect("sent");
        // An input request is not a tool result: read the general way.
        let input = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"resultType":"input_required","inputRequests":{{}}}}}}"#,
            a.id
        );
        assert!(!calls.deliver(input.as_bytes()));
        let general: ServerJsonRpcMessage = serde_json::from_str(&input).expect("an MCP reply");
        assert!(calls.route(general).is_none());
        assert!(matches!((&mut a.reply).await, Ok(Reply::Unexpected)));

        let error = format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"no such tool"}}}}"#,
            b.id
        );
        assert!(calls.deliver(error.as_bytes()));
        match (&mut b.reply).await {
            Ok(Reply::Error(e)) => assert_eq!(e.message, "no such tool"),
            other => panic!("{other:?}"),
        }

        let progress = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{},"progress":1}}}}"#,
            c.id
        );
        assert!(!calls.deliver(progress.as_bytes()));
        let general: ServerJsonRpcMessage = serde_json::from_str(&progress).expect("parsed");
        assert!(calls.route(general).is_some(), "passed on for the hook");
        // The signal is stored for the waiter.
        tokio::time::timeout(std::time::Duration::from_secs(30), c.progress.notified())
            .await
            .expect("notified");

        let bad = format!(r#"{{"jsonrpc":"2.0","id":{},"error":"boom"}}"#, c.id);
        let e = serde_json::from_str::<ServerJsonRpcMessage>(&bad).expect_err("invalid");
        assert!(calls.deliver_invalid(bad.as_bytes(), &e));
        match (&mut c.reply).await {
            Ok(Reply::Invalid(why)) => {
                assert!(why.contains("not a JSON-RPC error object"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn members_a_tool_result_does_not_have_are_skipped_unread() {
        // Only what CallToolResult holds is read: an unknown member nested
        // past serde's depth limit, or a number past f64, does not fail the
        // call (rmcp's buffered reading fails on both).
        let (calls, _server) = calls();
        for extra in [
            format!("{}{}", "[".repeat(200), "]".repeat(200)),
            "1e999".to_owned(),
        ] {
            let mut call = calls.call("t", &args(), None).expect("sent");
            let reply = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[],"x":{extra}}}}}"#,
                call.id
            );
            assert!(calls.deliver(reply.as_bytes()));
            assert!(matches!((&mut call.reply).await, Ok(Reply::Result(_))));
        }
    }

    #[tokio::test]
    async fn a_dropped_call_is_cancelled_and_forgotten_and_closing_fails_calls() {
        let (calls, server) = calls();
        let dropped = calls.call("t", &args(), None).expect("sent");
        let id = dropped.id;
        drop(dropped);
        assert!(!calls.waiting(), "a dropped call leaves nothing behind");
        let mut lines = tokio::io::BufReader::new(server).lines();
        let _call = lines.next_line().await.expect("read").expect("the call");
        let cancel = lines
            .next_line()
            .await
            .expect("read")
            .expect("the cancellation");
        let cancel: rmcp::model::ClientJsonRpcMessage =
            serde_json::from_str(&cancel).expect("an MCP notification");
        let rmcp::model::ClientJsonRpcMessage::Notification(n) = cancel else {
            panic!("{cancel:?}");
        };
        let rmcp::model::ClientNotification::CancelledNotification(c) = n.notification else {
            panic!("not a cancellation");
        };
        assert_eq!(c.params.request_id, Some(NumberOrString::Number(id)));
        let answered = calls.call("t", &args(), None).expect("sent");
        let reply = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[]}}}}"#,
            answered.id
        );
        assert!(calls.deliver(reply.as_bytes()));
        drop(answered);
        let mut waiting = calls.call("t", &args(), None).expect("sent");
        calls.close();
        assert!((&mut waiting.reply).await.is_err());
        assert!(matches!(
            calls.call("t", &args(), None),
            Err(ServiceError::TransportClosed)
        ));
    }
}
