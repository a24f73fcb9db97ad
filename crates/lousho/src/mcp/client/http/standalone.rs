//! Knowing when the session's standalone SSE stream is open.
//!
//! After `initialize`, a server that hands out a session id can send requests
//! and notifications that belong to no client request (an elicitation from a
//! tool, `tools/list_changed`) only on the GET stream the client opens for the
//! session. rmcp opens that stream in the background once the handshake is
//! done; a server without an event store (the TypeScript SDK's default) drops
//! whatever it sends before the stream is there. So a connection is not handed
//! over until the GET has been answered (opened, or refused with 405), or a
//! short wait has passed: the first tool call can then not lose the server's
//! questions.
//!
//! [`WatchedClient`] wraps the HTTP client rmcp drives and reports on a
//! [`StandaloneStream`] handle; every call is passed on, with the replies it
//! brings checked ([`reply_check`](super::reply_check)).

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcRequest, RequestId};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

use super::reply_check;
use crate::mcp::client::replies::{Replies, request_id, trace_sent};

/// The most a connect waits for the standalone stream after the tool list is
/// in. A server that holds the GET's headers back is still usable after it.
pub(crate) const STANDALONE_WAIT: Duration = Duration::from_secs(2);

/// Where the session's standalone stream is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StreamState {
    /// No session yet (or a stateless server: no GET will be made).
    NoSession,
    /// `initialize` returned a session id: rmcp is about to open the GET.
    Expected,
    /// The GET was answered: open, refused, or failed.
    Answered,
}

/// A handle that tells when the standalone stream of a connection is settled.
#[derive(Clone, Debug)]
pub(crate) struct StandaloneStream {
    state: watch::Receiver<StreamState>,
}

impl StandaloneStream {
    /// Waits until the GET stream is answered, when one is expected, for at
    /// most `limit`; returns whether it was answered (true also when none is
    /// expected).
    pub(crate) async fn settled(&self, limit: Duration) -> bool {
        let mut state = self.state.clone();
        let wait = state.wait_for(|s| *s != StreamState::Expected);
        matches!(tokio::time::timeout(limit, wait).await, Ok(Ok(_)))
    }
}

/// An HTTP client for rmcp's transport that reports on the standalone stream.
#[derive(Clone)]
pub(crate) struct WatchedClient<C> {
    inner: C,
    state: Arc<watch::Sender<StreamState>>,
    replies: Replies,
}

impl<C> WatchedClient<C> {
    /// Wraps `inner`; the handle reports on the stream this client opens;
    /// replies are checked against `replies`.
    pub(crate) fn new(inner: C, replies: Replies) -> (Self, StandaloneStream) {
        let (tx, rx) = watch::channel(StreamState::NoSession);
        let client = Self {
            inner,
            state: Arc::new(tx),
            replies,
        };
        (client, StandaloneStream { state: rx })
    }

    /// `stream` with its events checked: unreadable replies to requests in
    /// flight become errors.
    fn checked(&self, stream: BoxedSseResponse) -> BoxedSseResponse {
        reply_check::checked(stream, self.replies.clone())
    }

    /// What a POST brought, checked: a reply that could not be read (the
    /// JSON body of [`Pooled`](super::Pooled)'s typed `Deserialize` error)
    /// becomes an error for `request`, an SSE stream is checked event by
    /// event.
    fn screened<E: std::error::Error + Send + Sync + 'static>(
        &self,
        request: Option<RequestId>,
        response: Result<StreamableHttpPostResponse, StreamableHttpError<E>>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<E>> {
        match (response, request) {
            (Err(StreamableHttpError::Deserialize(e)), Some(id)) => {
                match self.replies.unreadable(id, e.to_string()) {
                    Some(error) => Ok(StreamableHttpPostResponse::Json(error, None)),
                    None => Err(StreamableHttpError::Deserialize(e)),
                }
            }
            (response, _) => response.map(|r| reply_check::after_post(&self.replies, r)),
        }
    }

    fn set(&self, state: StreamState) {
        self.state.send_replace(state);
    }
}

fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::InitializeRequest(_),
            ..
        })
    )
}

fn has_session(response: &StreamableHttpPostResponse) -> bool {
    match response {
        StreamableHttpPostResponse::Json(_, session)
        | StreamableHttpPostResponse::Sse(_, session) => session.is_some(),
        _ => false,
    }
}

type SseResult<E> = Result<BoxedSseResponse, StreamableHttpError<E>>;

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for WatchedClient<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let initialize = is_initialize(&message);
        let request = (!initialize)
            .then(|| request_id(&message).cloned())
            .flatten();
        reply_check::before_post(&self.replies, &message);
        trace_sent("http", &message);
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.after_post(initialize, response.as_ref().ok());
        self.screened(request, response)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let initialize = is_initialize(&message);
        let request = (!initialize)
            .then(|| request_id(&message).cloned())
            .flatten();
        reply_check::before_post(&self.replies, &message);
        trace_sent("http", &message);
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.after_post(initialize, response.as_ref().ok());
        self.screened(request, response)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let initialize = is_initialize(&message);
        let request = (!initialize)
            .then(|| request_id(&message).cloned())
            .flatten();
        reply_check::before_post(&self.replies, &message);
        trace_sent("http", &message);
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.after_post(initialize, response.as_ref().ok());
        self.screened(request, response)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> SseResult<Self::Error> {
        let standalone = session_id.is_some() && last_event_id.is_none();
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.after_get(standalone);
        stream.map(|s| self.checked(s))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> SseResult<Self::Error> {
        let standalone = session_id.is_some() && last_event_id.is_none();
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.after_get(standalone);
        stream.map(|s| self.checked(s))
    }
}

impl<C> WatchedClient<C> {
    fn after_post(&self, initialize: bool, response: Option<&StreamableHttpPostResponse>) {
        if initialize && response.is_some_and(has_session) {
            self.set(StreamState::Expected);
        }
    }

    fn after_get(&self, standalone: bool) {
        if standalone {
            self.set(StreamState::Answered);
        }
    }
}
