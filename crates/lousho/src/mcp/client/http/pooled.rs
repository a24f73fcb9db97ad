//! The HTTP client under rmcp's Streamable HTTP transport: the shared pooled
//! `reqwest::Client` as rmcp's [`StreamableHttpClient`], POSTing itself so
//! that every answer keeps its facts typed. rmcp's own reqwest client reports
//! a 4xx without a challenge only as a line of text and a reply body it
//! cannot read as the text of a parse error; here
//! - a status the call cannot go on with is an [`HttpStatusError`] (any
//!   status, with `Retry-After`), read by [`status_of`](super::status_of);
//! - a JSON reply to a request that does not parse is a
//!   [`StreamableHttpError::Deserialize`] whose words say what is wrong
//!   ([`replies::reason`]), which [`WatchedClient`](super::WatchedClient) turns into an
//!   error for that request, as for SSE and stdio replies.
//!
//! What rmcp's worker acts on stays as rmcp's client makes it: a 401/403
//! challenge (`AuthRequired`, `InsufficientScope`, which rmcp's `AuthClient`
//! answers), 404 for a session (`SessionExpired`: rmcp sets up a new one),
//! 202/204 (`Accepted`), a JSON-RPC error body, a rejected `server/discover`
//! (the handshake falls back), the size limits. GETs and DELETEs are rmcp's
//! reqwest client's.

use crate::mcp::client::replies;
use crate::mcp::media_type::MediaType;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, HeaderName, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::common::http_header::{HEADER_LAST_EVENT_ID, HEADER_SESSION_ID};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpClient,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use std::collections::HashMap;
use std::sync::Arc;

type HttpError = StreamableHttpError<reqwest::Error>;

/// The pooled reqwest client, POSTing for rmcp's transport.
#[derive(Clone, Debug)]
pub(crate) struct Pooled(pub(crate) reqwest::Client);

/// Headers rmcp's transport sets itself and a configured header may not.
const RESERVED: [&str; 3] = ["accept", HEADER_SESSION_ID, HEADER_LAST_EVENT_ID];

impl Pooled {
    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut request = self
            .0
            .post(uri.as_ref())
            .header(ACCEPT, "text/event-stream, application/json");
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            if RESERVED
                .iter()
                .any(|r| name.as_str().eq_ignore_ascii_case(r))
            {
                return Err(StreamableHttpError::ReservedHeaderConflict(
                    name.to_string(),
                ));
            }
            request = request.header(name, value);
        }
        let session_attached = session_id.is_some();
        if let Some(id) = session_id {
            request = request.header(HEADER_SESSION_ID, id.as_ref());
        }
        let response = request.json(&message).send().await?;
        let status = response.status();
        if let Some(challenge) = challenge(&response)? {
            return Err(challenge);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let media = MediaType::of_headers(response.headers());
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let awaits_no_response = !matches!(message, ClientJsonRpcMessage::Request(_));
        if !status.is_success() {
            return refused(response, &message, session_attached, session, media, limits).await;
        }
        if response.content_length() == Some(0) && awaits_no_response {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        match media {
            Some(MediaType::EventStream) => Ok(StreamableHttpPostResponse::Sse(
                bounded_sse(response.bytes_stream(), limits.max_sse_event_size),
                session,
            )),
            Some(MediaType::Json) => {
                let body = read_bounded(response, limits.max_json_response_size).await?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session)),
                    Err(_) if awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
                    Err(e) => Err(StreamableHttpError::Deserialize(
                        <serde_json::Error as serde::de::Error>::custom(replies::reason(&body, &e)),
                    )),
                }
            }
            // A notification or reply needs nothing from the body.
            None if awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
            None => Err(StreamableHttpError::UnexpectedContentType(
                response
                    .headers()
                    .get(reqwest::header::CONTENT_TYPE)
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            )),
        }
    }
}

/// A 401 or 403 with a `WWW-Authenticate` challenge, as rmcp's errors.
fn challenge(response: &reqwest::Response) -> Result<Option<HttpError>, HttpError> {
    let status = response.status();
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return Ok(None);
    }
    let Some(header) = response.headers().get(WWW_AUTHENTICATE) else {
        return Ok(None);
    };
    let header = header.to_str().map_err(|_| {
        StreamableHttpError::UnexpectedServerResponse(
            "invalid www-authenticate header value".into(),
        )
    })?;
    Ok(Some(if status == StatusCode::UNAUTHORIZED {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(header.to_owned()))
    } else {
        let scope = scope_of(header);
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
            header.to_owned(),
            scope,
        ))
    }))
}

/// The `scope` parameter of a `WWW-Authenticate` challenge (read as
/// rmcp's client reads it).
fn scope_of(header: &str) -> Option<String> {
    let at = header.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let rest = header.get(at..)?;
    let value = match rest.strip_prefix('"') {
        Some(quoted) => &quoted[..quoted.find('"')?],
        None => rest
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .next()
            .filter(|v| !v.is_empty())?,
    };
    Some(value.to_owned())
}

/// An answer other than 2xx: a JSON-RPC error body is the reply (a rejected
/// `server/discover` one the handshake falls back on); anything else is its
/// status, typed.
async fn refused(
    response: reqwest::Response,
    message: &ClientJsonRpcMessage,
    session_attached: bool,
    session: Option<String>,
    media: Option<MediaType>,
    limits: StreamableHttpResponseLimits,
) -> Result<StreamableHttpPostResponse, HttpError> {
    let status = response.status();
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let typed = HttpStatusError::new(status.as_u16(), retry_after);
    let auth = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    let mut error = None;
    if media == Some(MediaType::Json) && !auth && status != StatusCode::TOO_MANY_REQUESTS {
        match read_bounded(response, limits.max_json_response_size).await {
            Ok(body) => {
                if let Ok(ServerJsonRpcMessage::Error(e)) = serde_json::from_slice(&body) {
                    error = Some(e);
                }
            }
            Err(StreamableHttpError::ResponseBodyTooLarge { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let discover = match message {
        ClientJsonRpcMessage::Request(r)
            if matches!(r.request, ClientRequest::DiscoverRequest(_))
                && !session_attached
                && status.is_client_error()
                && !auth =>
        {
            Some(r.id.clone())
        }
        _ => None,
    };
    match (discover, error) {
        (Some(id), error) => {
            let data = error.map(|e| e.error).unwrap_or_else(|| {
                ErrorData::invalid_request(
                    format!("server/discover rejected with HTTP {status}"),
                    None,
                )
            });
            Ok(StreamableHttpPostResponse::Json(
                ServerJsonRpcMessage::error(data, Some(id)),
                None,
            ))
        }
        (None, Some(error)) => Ok(StreamableHttpPostResponse::Json(
            ServerJsonRpcMessage::Error(error),
            session,
        )),
        (None, None) => Err(StreamableHttpError::HttpStatus(typed)),
    }
}

/// The whole body, failing when it is over `limit` bytes.
async fn read_bounded(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, HttpError> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: limit });
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if chunk.len() > limit - body.len() {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: limit });
        }
        body.extend_from_slice(&chunk);
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

type SseReply = Result<BoxedSseResponse, HttpError>;

impl StreamableHttpClient for Pooled {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = StreamableHttpResponseLimits::default();
        self.post(uri, message, session_id, auth_token, custom_headers, limits)
            .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post(uri, message, session_id, auth_token, custom_headers, limits)
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post(uri, message, session_id, auth_token, custom_headers, limits)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.0
            .delete_session(uri, session_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> SseReply {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> SseReply {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_token,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
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
    fn the_scope_of_a_challenge_is_read_quoted_or_bare() {
        assert_eq!(
            scope_of(r#"Bearer error="insufficient_scope", scope="files:read files:write""#)
                .as_deref(),
            Some("files:read files:write")
        );
        assert_eq!(
            scope_of("Bearer scope=admin, x=y").as_deref(),
            Some("admin")
        );
        assert_eq!(scope_of("Bearer realm=x"), None);
    }
}
