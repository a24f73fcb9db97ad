//! Replies a server sends for a pending request that cannot be read as a
//! JSON-RPC message (nesting over serde's 128 levels, no `result`, a
//! mistyped `error`, a number like `1e999`). rmcp drops such a message at
//! debug level and the call waits its whole timeout; the transports (stdio
//! and the HTTP client's SSE streams) ask [`Replies::invalid`] instead, which
//! turns it into a JSON-RPC error for that id, so rmcp completes the call at
//! once, and remembers why: [`Replies::take_invalid`] gives the call its
//! typed reason ([`McpError::InvalidResponse`](super::McpError::InvalidResponse)).
//!
//! A stdio message over the size limit is dropped unread, so the request it
//! may have answered would wait too: [`Replies::oversize`] fails every
//! request in flight at once the same way.
//!
//! Only ids of requests we sent and that are still unanswered count, so a
//! server cannot grow these tables or fail a call it was not asked.

use crate::sync::MutexExt;
use rmcp::model::{ErrorCode, ErrorData, RequestId, ServerJsonRpcMessage};
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// At most this many reasons are kept for calls that never pick theirs up
/// (a `tools/list` or an abandoned call); older ones are forgotten.
const KEEP_REASONS: usize = 256;

/// The requests in flight on one connection and the invalid replies seen.
#[derive(Clone, Debug, Default)]
pub(crate) struct Replies {
    inner: Arc<Mutex<InFlight>>,
}

#[derive(Debug, Default)]
struct InFlight {
    pending: HashSet<RequestId>,
    invalid: HashMap<RequestId, InvalidReply>,
}

/// Why a request failed in the transport instead of being answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InvalidReply {
    /// Its reply could not be read; why.
    Unreadable(String),
    /// The server sent a message over the size limit (dropped unread), which
    /// may have been its reply.
    Oversize,
}

/// The top level of a message, read without building its values (serde's
/// `IgnoredAny` skips nested values iteratively and never evaluates numbers),
/// so it works where the full message fails.
#[derive(Deserialize)]
struct TopLevel {
    id: Option<RequestId>,
    method: Option<IgnoredAny>,
}

impl Replies {
    fn lock(&self) -> std::sync::MutexGuard<'_, InFlight> {
        self.inner.lock_unpoisoned()
    }

    /// We sent a request with `id`.
    pub(crate) fn sent(&self, id: &RequestId) {
        self.lock().pending.insert(id.clone());
    }

    /// A reply for `id` arrived (or the request is over).
    pub(crate) fn answered(&self, id: &RequestId) {
        self.lock().pending.remove(id);
    }

    /// Notes a message read in full: a reply settles its request.
    pub(crate) fn received(&self, message: &ServerJsonRpcMessage) {
        let id = match message {
            ServerJsonRpcMessage::Response(r) => Some(&r.id),
            ServerJsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = id {
            self.answered(id);
        }
    }

    /// `body` failed to parse with `error`. When it is a reply (an `id`, no
    /// `method`) to a request in flight: the JSON-RPC error to hand rmcp
    /// instead, with the reason kept for the call.
    pub(crate) fn invalid(
        &self,
        body: &[u8],
        error: &serde_json::Error,
    ) -> Option<ServerJsonRpcMessage> {
        let id = reply_id(body)?;
        if !self.lock().pending.contains(&id) {
            return None;
        }
        self.unreadable(id, reason(body, error))
    }

    /// The reply to the request `id` could not be read (`reason`): the
    /// JSON-RPC error to hand rmcp instead, when the request is in flight.
    pub(crate) fn unreadable(&self, id: RequestId, reason: String) -> Option<ServerJsonRpcMessage> {
        let mut state = self.lock();
        if !state.pending.remove(&id) {
            return None;
        }
        tracing::warn!(%id, error = %reason, "the MCP server sent an invalid response; failing its request");
        let message = format!("the server sent an invalid response: {reason}");
        state.keep(&id, InvalidReply::Unreadable(reason));
        Some(error_for(id, message))
    }

    /// A message over the size limit was dropped: every request in flight
    /// fails (any of them may have been waiting for it); the JSON-RPC errors
    /// to hand rmcp for them.
    pub(crate) fn oversize(&self) -> Vec<ServerJsonRpcMessage> {
        let mut state = self.lock();
        let pending: Vec<RequestId> = state.pending.drain().collect();
        pending
            .into_iter()
            .map(|id| {
                state.keep(&id, InvalidReply::Oversize);
                error_for(id, OVERSIZE.to_owned())
            })
            .collect()
    }

    /// Why the request `id` failed in the transport, when it did (once), and
    /// forgets the request.
    pub(crate) fn take_invalid(&self, id: &RequestId) -> Option<InvalidReply> {
        let mut state = self.lock();
        state.pending.remove(id);
        state.invalid.remove(id)
    }
}

/// The error rmcp is handed for a request that failed in the transport.
const OVERSIZE: &str = "the server sent a message over the size limit, which was dropped";

impl InFlight {
    fn keep(&mut self, id: &RequestId, why: InvalidReply) {
        if self.invalid.len() >= KEEP_REASONS {
            self.invalid.clear();
        }
        self.invalid.insert(id.clone(), why);
    }
}

fn error_for(id: RequestId, message: String) -> ServerJsonRpcMessage {
    let data = ErrorData::new(ErrorCode::INTERNAL_ERROR, message, None);
    ServerJsonRpcMessage::error(data, Some(id))
}

/// The id of a message that is a reply (an `id`, no `method`), read even
/// when the message itself cannot be.
pub(crate) fn reply_id(body: &[u8]) -> Option<RequestId> {
    match serde_json::from_slice::<TopLevel>(body) {
        Ok(TopLevel {
            id: Some(id),
            method: None,
        }) => Some(id),
        _ => None,
    }
}

/// What is wrong with a reply, as precisely as can be said: the JSON error
/// (too deep, a number out of range) when it is not JSON serde can read;
/// otherwise which member is missing or mistyped.
pub(crate) fn reason(body: &[u8], error: &serde_json::Error) -> String {
    let value = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(value) => value,
        Err(e) => return e.to_string(),
    };
    match (value.get("result"), value.get("error")) {
        (None, None) => "it has neither `result` nor `error`".to_owned(),
        (Some(_), Some(_)) => "it has both `result` and `error`".to_owned(),
        (None, Some(e)) => match serde_json::from_value::<ErrorData>(e.clone()) {
            Err(e) => format!("its `error` is not a JSON-RPC error object ({e})"),
            Ok(_) => error.to_string(),
        },
        (Some(_), None) => error.to_string(),
    }
}

/// Says at trace level that `message` went to the server over `transport`
/// (the method, and the id of a request): every message passes one of
/// lousho's extension points of rmcp, and says so here.
pub(crate) fn trace_sent(transport: &'static str, message: &rmcp::model::ClientJsonRpcMessage) {
    use rmcp::model::ClientJsonRpcMessage as M;
    if !tracing::enabled!(tracing::Level::TRACE) {
        return;
    }
    match message {
        M::Request(r) => {
            tracing::trace!(transport, method = %r.request.method(), id = %r.id, "sent an MCP request")
        }
        M::Notification(n) => {
            tracing::trace!(transport, method = %method_of(n), "sent an MCP notification")
        }
        M::Response(r) => tracing::trace!(transport, id = %r.id, "sent an MCP response"),
        M::Error(e) => tracing::trace!(transport, id = ?e.id, "sent an MCP error"),
    }
}

/// The `method` member of a message (for trace lines only: it serialises).
fn method_of(message: &impl serde::Serialize) -> String {
    serde_json::to_value(message)
        .ok()
        .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or_default()
}

/// Says at trace level that `message` came from the server over `transport`.
pub(crate) fn trace_received(transport: &'static str, message: &ServerJsonRpcMessage) {
    if !tracing::enabled!(tracing::Level::TRACE) {
        return;
    }
    match message {
        ServerJsonRpcMessage::Request(r) => {
            tracing::trace!(transport, method = %method_of(r), id = %r.id, "received an MCP request")
        }
        ServerJsonRpcMessage::Notification(n) => {
            tracing::trace!(transport, method = %method_of(n), "received an MCP notification")
        }
        ServerJsonRpcMessage::Response(r) => {
            tracing::trace!(transport, id = %r.id, "received an MCP response")
        }
        ServerJsonRpcMessage::Error(e) => {
            tracing::trace!(transport, id = ?e.id, "received an MCP error")
        }
    }
}

/// Whether a message is a request we expect a reply to.
pub(crate) fn request_id(message: &rmcp::model::ClientJsonRpcMessage) -> Option<&RequestId> {
    match message {
        rmcp::model::ClientJsonRpcMessage::Request(r) => Some(&r.id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_error(body: &[u8]) -> serde_json::Error {
        match serde_json::from_slice::<ServerJsonRpcMessage>(body) {
            Ok(m) => panic!("parsed: {m:?}"),
            Err(e) => e,
        }
    }

    fn deep(levels: usize) -> Vec<u8> {
        let mut s = String::from(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"x":"#);
        s.push_str(&"[".repeat(levels));
        s.push_str(&"]".repeat(levels));
        s.push_str("}}");
        s.into_bytes()
    }

    #[test]
    fn invalid_replies_to_pending_requests_become_errors_with_their_reason() {
        let cases: [(&[u8], &str); 4] = [
            (&deep(200), "recursion limit"),
            (
                br#"{"jsonrpc":"2.0","id":1}"#,
                "neither `result` nor `error`",
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#,
                "not a JSON-RPC error object",
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"n":1e999}}"#,
                "out of range",
            ),
        ];
        for (body, words) in cases {
            let replies = Replies::default();
            let id = RequestId::Number(1);
            replies.sent(&id);
            let error = parse_error(body);
            let Some(ServerJsonRpcMessage::Error(e)) = replies.invalid(body, &error) else {
                panic!("no error for {}", String::from_utf8_lossy(body));
            };
            assert_eq!(e.id, Some(id.clone()));
            let Some(InvalidReply::Unreadable(reason)) = replies.take_invalid(&id) else {
                panic!("no reason");
            };
            assert!(reason.contains(words), "{reason}");
            assert_eq!(replies.take_invalid(&id), None, "taken once");
        }
    }

    #[test]
    fn only_replies_to_requests_in_flight_count() {
        let replies = Replies::default();
        let body = br#"{"jsonrpc":"2.0","id":7}"#;
        let error = parse_error(body);
        assert!(replies.invalid(body, &error).is_none(), "never sent");
        replies.sent(&RequestId::Number(7));
        let request = br#"{"jsonrpc":"2.0","id":7,"method":5}"#;
        assert!(
            replies.invalid(request, &parse_error(request)).is_none(),
            "a server request with the same id is not our reply"
        );
        assert!(replies.invalid(body, &error).is_some());
        assert!(replies.invalid(body, &error).is_none(), "settled already");
    }

    #[test]
    fn an_oversize_message_fails_every_request_in_flight_once() {
        let replies = Replies::default();
        let (one, two) = (RequestId::Number(1), RequestId::Number(2));
        replies.sent(&one);
        replies.sent(&two);
        let answered = br#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
        replies.received(&serde_json::from_slice(answered).expect("a reply"));
        let errors = replies.oversize();
        assert_eq!(errors.len(), 1, "only the unanswered request: {errors:?}");
        assert_eq!(replies.take_invalid(&one), Some(InvalidReply::Oversize));
        assert_eq!(replies.take_invalid(&two), None);
        assert!(replies.oversize().is_empty(), "failed once");
    }
}
