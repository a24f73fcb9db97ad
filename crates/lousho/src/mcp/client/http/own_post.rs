//! A direct call POSTed by lousho itself, on a connection that uses the
//! plain shared reqwest client (an `oauth` entry's `AuthClient` keeps rmcp's
//! client): the call was serialised once from borrowed parts, the URL and
//! headers are built once per session ([`Prepared`]), and a JSON reply is
//! read straight into the tool result, as over stdio. rmcp's client would
//! build a `serde_json::Value` of the request, clone and apply its header map
//! and parse the URL per POST, and read the reply into an untagged union of
//! every server message.
//!
//! A 4xx answer means the server did not run the call (an auth challenge, an
//! expired session, a bad request): it is sent again through rmcp's client,
//! which turns it into its typed errors ([`Posted::Rejected`]). Other
//! answers are read here, with rmcp's limits.

use crate::mcp::client::direct_calls::{Reply, read_reply};
use crate::mcp::client::replies::failing;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::StreamableHttpResponseLimits;
use std::collections::HashMap;

/// The URL and headers of a session's direct calls, built once.
pub(super) struct Prepared {
    url: reqwest::Url,
    headers: HeaderMap,
}

impl Prepared {
    /// What rmcp's reqwest client would send with a POST on this session;
    /// `None` when the URL does not parse (rmcp's client then says why).
    pub(super) fn new(
        uri: &str,
        session: Option<&str>,
        auth: Option<&str>,
        custom: &HashMap<HeaderName, HeaderValue>,
    ) -> Option<Self> {
        let url = reqwest::Url::parse(uri).ok()?;
        let mut headers = HeaderMap::with_capacity(custom.len() + 4);
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("text/event-stream, application/json"),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in custom {
            headers.insert(name.clone(), value.clone());
        }
        if let Some(token) = auth {
            let mut value = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        if let Some(id) = session {
            headers.insert(
                HeaderName::from_static("mcp-session-id"),
                HeaderValue::from_str(id).ok()?,
            );
        }
        Some(Self { url, headers })
    }
}

/// What the POST of a call brought.
pub(super) enum Posted {
    /// The call's reply.
    Reply(Reply),
    /// An event stream that carries it.
    Stream(BoxedSseResponse),
    /// A 4xx: the server did not run the call.
    Rejected,
}

/// Why a POST failed before any answer.
pub(super) type PostError = reqwest::Error;

/// POSTs `body`, the call with id `id`.
pub(super) async fn post(
    client: &reqwest::Client,
    prepared: &Prepared,
    body: Bytes,
    id: i64,
    limits: StreamableHttpResponseLimits,
) -> Result<Posted, PostError> {
    let response = client
        .post(prepared.url.clone())
        .headers(prepared.headers.clone())
        .body(body)
        .send()
        .await?;
    let status = response.status();
    if status.is_client_error() {
        return Ok(Posted::Rejected);
    }
    if matches!(status.as_u16(), 202 | 204) {
        return Ok(Posted::Reply(Reply::Invalid(
            "the server accepted the call without a result".into(),
        )));
    }
    let kind = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if !status.is_success() {
        let text = read_bounded(response, limits.max_error_response_size).await?;
        return Ok(Posted::Reply(Reply::Invalid(format!(
            "HTTP {status}: {}",
            String::from_utf8_lossy(&text)
        ))));
    }
    match kind.as_deref() {
        Some("application/json") => {
            let limit = limits.max_json_response_size;
            if response.content_length().is_some_and(|n| n > limit as u64) {
                return Ok(Posted::Reply(too_large(limit)));
            }
            // One byte more than the limit says the body is over it.
            let body = read_bounded(response, limit.saturating_add(1)).await?;
            if body.len() > limit {
                return Ok(Posted::Reply(too_large(limit)));
            }
            Ok(Posted::Reply(read_json(&body, id)))
        }
        Some("text/event-stream") => Ok(Posted::Stream(bounded_sse(
            response.bytes_stream(),
            limits.max_sse_event_size,
        ))),
        other => Ok(Posted::Reply(Reply::Invalid(format!(
            "the server answered the call with content type {}",
            other.unwrap_or("(none)")
        )))),
    }
}

fn too_large(limit: usize) -> Reply {
    Reply::Invalid(format!("the server's reply is over {limit} bytes"))
}

/// A JSON reply body for call `id`.
fn read_json(body: &[u8], id: i64) -> Reply {
    if let Some((replied, reply)) = read_reply(body)
        && replied == id
    {
        return reply;
    }
    match serde_json::from_slice::<ServerJsonRpcMessage>(body) {
        Ok(message) => super::lane::only_reply(message, id),
        Err(e) => Reply::Invalid(failing(&id, body, &e)),
    }
}

/// The body, or its first `limit` bytes.
async fn read_bounded(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, PostError> {
    let expected = response
        .content_length()
        .and_then(|n| usize::try_from(n).ok());
    let mut body = Vec::with_capacity(expected.unwrap_or(0).min(limit));
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        let room = limit - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() == limit {
            break;
        }
    }
    Ok(body)
}

/// Why an SSE body stopped.
#[derive(Debug, thiserror::Error)]
enum SseBodyError {
    #[error(transparent)]
    Body(#[from] reqwest::Error),
    #[error("an SSE event over {0} bytes")]
    EventTooLarge(usize),
}

/// The events of `bytes`, failing on an event over `max` bytes (the parser
/// would buffer it whole).
fn bounded_sse(
    bytes: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    max: usize,
) -> BoxedSseResponse {
    let mut event = 0usize;
    let mut line = 0usize;
    let mut last = 0u8;
    let limited = bytes.map(move |chunk| {
        let chunk = chunk?;
        for &b in chunk.iter() {
            match b {
                b'\n' if last == b'\r' => {}
                b'\n' | b'\r' => {
                    if line == 0 {
                        event = 0;
                    }
                    line = 0;
                }
                _ => {
                    line += 1;
                    event += 1;
                    if event > max {
                        return Err(SseBodyError::EventTooLarge(max));
                    }
                }
            }
            last = b;
        }
        Ok(chunk)
    });
    sse_stream::SseStream::from_bytes_stream(limited).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn events(body: &'static [&'static str], max: usize) -> Vec<Result<String, String>> {
        let chunks =
            futures::stream::iter(body.iter().map(|c| Ok(Bytes::from_static(c.as_bytes()))));
        bounded_sse(chunks, max)
            .map(|e| {
                e.map(|s| s.data.unwrap_or_default())
                    .map_err(|e| e.to_string())
            })
            .collect()
            .await
    }

    #[tokio::test]
    async fn events_within_the_limit_pass_whatever_the_line_endings_and_chunks() {
        let got = events(&["data: abc\r\n\r\nda", "ta: def\n\n", "data: ghi\r\r"], 12).await;
        assert_eq!(
            got,
            vec![Ok("abc".into()), Ok("def".into()), Ok("ghi".into())]
        );
    }

    #[tokio::test]
    async fn an_event_over_the_limit_ends_the_stream_with_an_error() {
        let got = events(
            &["data: ok\n\n", "data: 0123456789\n", "data: more\n\n"],
            12,
        )
        .await;
        assert_eq!(got.first(), Some(&Ok("ok".into())));
        assert!(got.iter().any(Result::is_err), "{got:?}");
    }

    #[test]
    fn the_json_reply_is_read_straight_or_the_general_way() {
        let ok = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        assert!(matches!(read_json(ok, 7), Reply::Result(_)));
        let other = br#"{"jsonrpc":"2.0","id":8,"result":{"content":[]}}"#;
        assert!(matches!(read_json(other, 7), Reply::Invalid(_)));
        let task = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{}}}"#;
        assert!(matches!(read_json(task, 7), Reply::Unexpected));
        match read_json(
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[], "x": 1e999}"#,
            7,
        ) {
            Reply::Invalid(why) => assert!(!why.is_empty()),
            other => panic!("{other:?}"),
        }
    }
}
