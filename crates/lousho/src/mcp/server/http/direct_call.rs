//! Stateless `tools/call` of a directly served tool, answered in the screen
//! instead of by rmcp's per-request service. For every stateless POST, rmcp
//! builds a service with a one-shot transport, spawns a task to run it, reads
//! the body into its untagged message union and passes the answer back over a
//! channel. A call of a direct tool needs none of that: it is read in one
//! typed pass and its tool run right here.
//!
//! Only calls whose answer cannot differ from rmcp's take this path:
//! - stateless mode, a direct tool, no approval to ask (nobody could answer
//!   one over stateless HTTP);
//! - a protocol version with a handshake named in `MCP-Protocol-Version`, no
//!   per-request protocol metadata and no SEP-2243 headers (rmcp validates
//!   those against the body);
//! - `Accept` naming both JSON and SSE plainly, a JSON body, no `Origin`
//!   header (rmcp checks it);
//! - no progress token (rmcp then streams).
//!
//! Anything else goes to rmcp as before. As rmcp does, the answer is JSON
//! unless the tool sends a notification (a log message) before it; then the
//! whole sequence goes out as an event stream, live.

use super::super::handler::LoushoServer;
use super::super::result::call_answer;
use crate::mcp::typed_call::read_call_parts;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use rmcp::model::{CallToolRequestParams, RequestId, ServerJsonRpcMessage, ServerNotification};
use std::convert::Infallible;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How many notifications of one call may wait for the response body.
const QUEUE: usize = 64;

/// A call this layer answers.
pub(super) struct DirectCall {
    id: RequestId,
    params: CallToolRequestParams,
}

/// Protocol versions with the `initialize` handshake, as a client names them
/// in `MCP-Protocol-Version`.
const HANDSHAKE_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// The call in `body`, when this layer answers it as rmcp would (see the
/// module docs); `None` leaves the request to rmcp.
pub(super) fn read(server: &LoushoServer, headers: &HeaderMap, body: &[u8]) -> Option<DirectCall> {
    if !plain_headers(headers) {
        return None;
    }
    let (id, params) = read_call_parts(body)?;
    if let Some(meta) = &params.meta
        && (meta.get_progress_token().is_some() || meta.protocol_version().is_some())
    {
        return None;
    }
    server
        .answers_stateless(&params.name)
        .then_some(DirectCall { id, params })
}

fn plain_headers(headers: &HeaderMap) -> bool {
    let version = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok());
    if !version.is_some_and(|v| HANDSHAKE_VERSIONS.contains(&v)) {
        return false;
    }
    if headers.contains_key(header::ORIGIN)
        || headers.keys().any(|name| {
            let name = name.as_str();
            name == "mcp-method" || name == "mcp-name" || name.starts_with("mcp-param-")
        })
    {
        return false;
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    let (mut accepts_json, mut accepts_sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for entry in value.split(',') {
            let entry = entry.trim();
            // Parameters (a q-value) are rmcp's to weigh.
            if entry.contains(';') || entry.contains('"') {
                return false;
            }
            accepts_json |= entry.eq_ignore_ascii_case("application/json");
            accepts_sse |= entry.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && accepts_json && accepts_sse
}

/// Runs the call; its answer, or the event stream that carries it.
/// `cancelled` ends the run (a `notifications/cancelled`, or shutdown).
pub(super) async fn answer(
    server: &LoushoServer,
    call: DirectCall,
    cancelled: CancellationToken,
    session: Option<&str>,
) -> Response {
    let DirectCall { id, params } = call;
    let (queue, mut notes) = mpsc::channel::<ServerNotification>(QUEUE);
    let channel = server.queue_channel(queue);
    let reply_id = id.clone();
    let mut run = Box::pin(server.run_direct_traced(params, id, session, channel, cancelled));
    let first = tokio::select! {
        biased;
        outcome = &mut run => Ok(outcome),
        Some(note) = notes.recv() => Err(note),
    };
    let first = match first {
        Ok(outcome) => {
            // Notifications the run queued before it ended go first.
            let mut messages = Vec::new();
            while let Ok(note) = notes.try_recv() {
                messages.push(ServerJsonRpcMessage::notification(note));
            }
            let answer = call_answer(outcome, reply_id);
            if messages.is_empty() {
                return json_response(&answer);
            }
            messages.push(answer);
            return event_stream(futures::stream::iter(messages));
        }
        Err(note) => ServerJsonRpcMessage::notification(note),
    };
    // A notification while the run goes on: the whole sequence as a live
    // event stream, the run driven by the body.
    let rest = futures::stream::unfold(
        (Some(run), notes, reply_id),
        |(run, mut notes, reply_id)| async move {
            let mut run = run?;
            tokio::select! {
                biased;
                Some(note) = notes.recv() => {
                    let note = vec![ServerJsonRpcMessage::notification(note)];
                    Some((note, (Some(run), notes, reply_id)))
                }
                outcome = &mut run => {
                    // Whatever was queued before the end still goes first.
                    let mut last = Vec::new();
                    while let Ok(note) = notes.try_recv() {
                        last.push(ServerJsonRpcMessage::notification(note));
                    }
                    last.push(call_answer(outcome, reply_id.clone()));
                    Some((last, (None, notes, reply_id)))
                }
            }
        },
    )
    .flat_map(futures::stream::iter);
    event_stream(futures::stream::once(async { first }).chain(rest))
}

fn json_response(message: &ServerJsonRpcMessage) -> Response {
    match serde_json::to_vec(message) {
        Ok(body) => {
            let mut res = Response::new(Body::from(body));
            res.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            res
        }
        Err(e) => {
            tracing::error!(error = %e, "could not serialise a tool call's answer");
            let mut res = Response::new(Body::empty());
            *res.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            res
        }
    }
}

/// Messages as server-sent events, with the headers rmcp sends.
fn event_stream(
    messages: impl futures::Stream<Item = ServerJsonRpcMessage> + Send + 'static,
) -> Response {
    let events = messages.map(|m| {
        let data = serde_json::to_string(&m).unwrap_or_default();
        Ok::<_, Infallible>(Bytes::from(format!("data: {data}\n\n")))
    });
    let mut res = Response::new(Body::from_stream(events));
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    const PLAIN: [(&str, &str); 3] = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
    ];

    #[test]
    fn only_plain_requests_skip_rmcp() {
        assert!(plain_headers(&headers(&PLAIN)));
        let mut odd: Vec<Vec<(&'static str, &'static str)>> = Vec::new();
        for (i, replacement) in [
            ("content-type", "text/plain"),
            ("accept", "application/json"),
            ("mcp-protocol-version", "2026-07-28"),
        ]
        .into_iter()
        .enumerate()
        {
            let mut h = PLAIN.to_vec();
            h[i] = replacement;
            odd.push(h);
        }
        odd.push(PLAIN[..2].to_vec());
        for extra in [
            ("origin", "http://localhost:1"),
            ("mcp-method", "tools/call"),
            ("accept", "text/event-stream;q=0"),
        ] {
            let mut h = PLAIN.to_vec();
            h.push(extra);
            odd.push(h);
        }
        for h in odd {
            assert!(!plain_headers(&headers(&h)), "{h:?}");
        }
    }
}
