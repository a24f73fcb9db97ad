//! `tools/call` over Streamable HTTP without the trip through rmcp's worker.
//!
//! Through rmcp's `Peer`, a call goes to the service task over a channel, on
//! to the HTTP worker task over another, which spawns a task for the POST,
//! and the reply travels back the same way: four task hops and their wake-ups
//! per call. Here the caller POSTs the call itself, with the session id,
//! protocol-version header and credentials rmcp last sent
//! ([`LaneState::capture`]): on the plain shared reqwest client with
//! lousho's own POST and a typed read of the reply ([`own_post`]), otherwise
//! (an `oauth` entry's client) through the client rmcp's worker uses, so the
//! same headers, limits and status handling apply.
//!
//! A JSON reply is the result. An SSE reply is read here, each event once,
//! and checked as rmcp's streams are ([`reply_check`](super::reply_check)):
//! an unreadable reply fails its request at once. The result ends the call;
//! everything else on the stream (progress, logs, the server's own requests)
//! is handed to rmcp as if its transport had received it
//! ([`Inbound`](super::inbound::Inbound)), so the handler answers the
//! server's requests as before. A stream that closes before the result is
//! resumed with a GET and `Last-Event-ID` after the server's `retry` delay,
//! as the spec asks. A 404 for the session hands the call back to rmcp,
//! which sets up a new session and sends it again.
//!
//! Until rmcp has made a POST on the session (it lists the tools right after
//! the handshake), and for sessions without an `initialize` handshake (they
//! need per-request metadata only rmcp adds), calls keep rmcp's path.

use super::own_post::{self, Posted, Prepared};
use super::reply_check::is_message_event;
use super::standalone::Watched;
use crate::mcp::client::direct_calls::{FIRST_ID, Reply, call_message, cancellation};
use crate::mcp::client::replies::{failing, reply_id};
use crate::mcp::typed_call::read_call;
use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, JsonObject, NumberOrString, RequestId, RequestMetaObject,
    ServerJsonRpcMessage, ServerNotification, ServerResult,
};
use rmcp::service::ServiceError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

/// At most this many direct calls POST at once on one connection (as many as
/// rmcp's worker is allowed); more wait for a slot.
const MAX_IN_FLIGHT: usize = 256;
/// The first wait before resuming a stream whose server named no `retry`;
/// it doubles per attempt up to [`MAX_RESUME_WAIT`].
const RESUME_WAIT: Duration = Duration::from_secs(1);
const MAX_RESUME_WAIT: Duration = Duration::from_secs(30);
/// How long the `notifications/cancelled` of an abandoned call may take.
const CANCEL_LIMIT: Duration = Duration::from_secs(5);

/// What rmcp sent with its last POST on the session: where, the session id,
/// credentials and headers (the protocol version among them), and the reply
/// limits. Holds secrets, so it has no `Debug`.
pub(super) struct Session {
    uri: Arc<str>,
    id: Option<Arc<str>>,
    auth: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
    limits: StreamableHttpResponseLimits,
    /// The same, ready for lousho's own POST.
    prepared: Option<Prepared>,
}

/// The lane's state that the HTTP client sees too: the session as rmcp last
/// used it, and who waits for progress on which direct call.
#[derive(Default)]
pub(crate) struct LaneState {
    session: Mutex<Option<Arc<Session>>>,
    progress: Mutex<HashMap<i64, Arc<Notify>>>,
}

impl std::fmt::Debug for LaneState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaneState").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LaneState {
    /// Notes what rmcp sends a POST (other than `initialize`) with.
    pub(super) fn capture(
        &self,
        uri: &Arc<str>,
        id: Option<&Arc<str>>,
        auth: Option<&String>,
        headers: &HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) {
        let mut session = lock(&self.session);
        let same = session.as_ref().is_some_and(|s| {
            s.uri == *uri && s.id.as_ref() == id && s.auth.as_ref() == auth && s.headers == *headers
        });
        if !same {
            let prepared = Prepared::new(uri, id.map(|s| &**s), auth.map(String::as_str), headers);
            *session = Some(Arc::new(Session {
                uri: uri.clone(),
                id: id.cloned(),
                auth: auth.cloned(),
                headers: headers.clone(),
                limits,
                prepared,
            }));
        }
    }

    /// A message read from any of the session's streams: a progress
    /// notification about a direct call restarts its timeout.
    pub(super) fn note(&self, message: &ServerJsonRpcMessage) {
        if let ServerJsonRpcMessage::Notification(n) = message
            && let ServerNotification::ProgressNotification(p) = &n.notification
            && let NumberOrString::Number(id) = p.params.progress_token.0
            && id >= FIRST_ID
            && let Some(waiting) = lock(&self.progress).get(&id)
        {
            waiting.notify_one();
        }
    }
}

/// How a direct HTTP call ended: its reply, or `None` when the server no
/// longer knows the session (HTTP 404; the call did not run): rmcp's path
/// then sets up a new session and sends the call again.
pub(crate) type Outcome = Result<Option<Reply>, ServiceError>;

/// The HTTP client side of the lane: one POST exchange, one notification.
pub(super) trait Post: Send + Sync {
    /// POSTs `call` (the JSON of call `id`) and reads its reply; other
    /// messages on its stream go to `inbound`.
    fn exchange(
        &self,
        session: Arc<Session>,
        call: Bytes,
        id: i64,
        inbound: mpsc::Sender<ServerJsonRpcMessage>,
    ) -> BoxFuture<'static, Outcome>;

    /// POSTs a notification, ignoring the outcome.
    fn notify(
        &self,
        session: Arc<Session>,
        message: ClientJsonRpcMessage,
    ) -> BoxFuture<'static, ()>;
}

/// The direct calls of one HTTP connection. Cheap to clone.
#[derive(Clone)]
pub(crate) struct HttpCalls {
    client: Arc<dyn Post>,
    state: Arc<LaneState>,
    next: Arc<AtomicI64>,
    inbound: mpsc::Sender<ServerJsonRpcMessage>,
    closed: CancellationToken,
    slots: Arc<Semaphore>,
}

impl std::fmt::Debug for HttpCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpCalls").finish_non_exhaustive()
    }
}

/// One direct call: its reply, and a signal per progress notification about
/// it. Dropped before its reply, it sends `notifications/cancelled`.
pub(crate) struct HttpCall {
    pub(crate) id: i64,
    pub(crate) reply: BoxFuture<'static, Outcome>,
    pub(crate) progress: Arc<Notify>,
    done: Arc<AtomicBool>,
    calls: HttpCalls,
    session: Arc<Session>,
}

impl Drop for HttpCall {
    fn drop(&mut self) {
        lock(&self.calls.state.progress).remove(&self.id);
        if self.done.load(Ordering::Acquire) || self.calls.closed.is_cancelled() {
            return;
        }
        let message = ClientJsonRpcMessage::notification(
            cancellation(NumberOrString::Number(self.id)).into(),
        );
        let sent = self.calls.client.notify(self.session.clone(), message);
        let closed = self.calls.closed.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                tokio::select! {
                    () = closed.cancelled() => {}
                    _ = tokio::time::timeout(CANCEL_LIMIT, sent) => {}
                }
            });
        }
    }
}

impl HttpCalls {
    /// The lane over `client`, handing other messages to `inbound`; it ends
    /// when `closed` is cancelled.
    pub(super) fn new(
        client: Arc<dyn Post>,
        state: Arc<LaneState>,
        inbound: mpsc::Sender<ServerJsonRpcMessage>,
        closed: CancellationToken,
    ) -> Self {
        Self {
            client,
            state,
            next: Arc::new(AtomicI64::new(FIRST_ID)),
            inbound,
            closed,
            slots: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        }
    }

    /// Starts a `tools/call` of `tool`; `meta` joins the progress token in
    /// the request's `_meta`. `None` until rmcp has used the session.
    pub(crate) fn call(
        &self,
        tool: &str,
        arguments: &JsonObject,
        meta: Option<RequestMetaObject>,
    ) -> Option<HttpCall> {
        let session = lock(&self.state.session).clone()?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        // Arguments that do not serialise (a map of plain JSON always does)
        // take rmcp's path, which says why.
        let message = Bytes::from(call_message(id, tool, arguments, meta.as_ref()).ok()?);
        let progress = Arc::new(Notify::new());
        lock(&self.state.progress).insert(id, progress.clone());
        let done = Arc::new(AtomicBool::new(false));
        let exchange = self
            .client
            .exchange(session.clone(), message, id, self.inbound.clone());
        let (slots, closed, finished) = (self.slots.clone(), self.closed.clone(), done.clone());
        let reply = Box::pin(async move {
            let outcome = tokio::select! {
                biased;
                () = closed.cancelled() => Err(ServiceError::TransportClosed),
                outcome = async {
                    let _slot = slots.acquire_owned().await.map_err(|_| ServiceError::TransportClosed)?;
                    exchange.await
                } => outcome,
            };
            finished.store(true, Ordering::Release);
            outcome
        });
        Some(HttpCall {
            id,
            reply,
            progress,
            done,
            calls: self.clone(),
            session,
        })
    }
}

/// A transport failure as rmcp's own path reports it.
fn transport_error<E>(e: StreamableHttpError<E>) -> ServiceError
where
    E: std::error::Error + Send + Sync + 'static,
{
    ServiceError::TransportSend(DynamicTransportError::from_parts(
        "streamable-http",
        std::any::TypeId::of::<StreamableHttpError<E>>(),
        Box::new(e),
    ))
}

/// `message`, read whole, as the reply to call `id`: one that answers
/// another request is invalid.
pub(super) fn only_reply(message: ServerJsonRpcMessage, id: i64) -> Reply {
    reply_to(message, id).unwrap_or_else(|_| {
        Reply::Invalid("the server's JSON reply answers another request".into())
    })
}

/// `message` as the reply to call `id`, when it is one; otherwise it is
/// handed back (boxed: it is large and rare).
pub(super) fn reply_to(
    message: ServerJsonRpcMessage,
    id: i64,
) -> Result<Reply, Box<ServerJsonRpcMessage>> {
    let ours = RequestId::Number(id);
    match message {
        ServerJsonRpcMessage::Response(r) if r.id == ours => Ok(match r.result {
            ServerResult::CallToolResult(result) => Reply::Result(result),
            _ => Reply::Unexpected,
        }),
        ServerJsonRpcMessage::Error(e) if e.id.as_ref() == Some(&ours) => Ok(Reply::Error(e.error)),
        other => Err(Box::new(other)),
    }
}

impl<C> Post for Watched<C>
where
    C: StreamableHttpClient + Sync + 'static,
{
    fn exchange(
        &self,
        session: Arc<Session>,
        call: Bytes,
        id: i64,
        inbound: mpsc::Sender<ServerJsonRpcMessage>,
    ) -> BoxFuture<'static, Outcome> {
        let client = self.clone();
        Box::pin(async move {
            if let (Some(http), Some(prepared)) = (client.plain(), &session.prepared) {
                let posted = own_post::post(http, prepared, call.clone(), id, session.limits)
                    .await
                    .map_err(|e| {
                        transport_error(StreamableHttpError::<reqwest::Error>::Client(e))
                    })?;
                match posted {
                    Posted::Reply(reply) => return Ok(Some(reply)),
                    Posted::Stream(stream) => {
                        return client
                            .read_stream(&session, stream, id, &inbound)
                            .await
                            .map(Some);
                    }
                    // Not run: rmcp's client says why, in its typed errors.
                    Posted::Rejected => {}
                }
            }
            // The call as rmcp's message, read in one typed pass (not
            // through rmcp's untagged union, on every call of an `oauth`
            // entry); the general reading only says what is wrong.
            let message = match read_call(&call) {
                Some(message) => message,
                None => serde_json::from_slice::<ClientJsonRpcMessage>(&call).map_err(|e| {
                    transport_error(StreamableHttpError::<C::Error>::Deserialize(e))
                })?,
            };
            let reply = match client.post_as_rmcp(&session, message).await {
                Ok(StreamableHttpPostResponse::Json(message, _)) => only_reply(message, id),
                Ok(StreamableHttpPostResponse::Sse(stream, _)) => {
                    client.read_stream(&session, stream, id, &inbound).await?
                }
                Ok(_) => Reply::Invalid("the server accepted the call without a result".into()),
                Err(StreamableHttpError::UnexpectedServerResponse(text)) => {
                    Reply::Invalid(text.into_owned())
                }
                Err(StreamableHttpError::SessionExpired) => return Ok(None),
                Err(e) => return Err(transport_error(e)),
            };
            Ok(Some(reply))
        })
    }

    fn notify(
        &self,
        session: Arc<Session>,
        message: ClientJsonRpcMessage,
    ) -> BoxFuture<'static, ()> {
        let client = self.clone();
        Box::pin(async move {
            let _ = client.post_as_rmcp(&session, message).await;
        })
    }
}

impl<C> Watched<C>
where
    C: StreamableHttpClient + Sync + 'static,
{
    /// POSTs `message` with the client rmcp's worker uses, as the worker
    /// would on `session`. (The wrapped client: the lane reads and checks
    /// what comes back itself, once.)
    async fn post_as_rmcp(
        &self,
        session: &Session,
        message: ClientJsonRpcMessage,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        self.inner()
            .post_message_with_response_limits(
                session.uri.clone(),
                message,
                session.id.clone(),
                session.auth.clone(),
                session.headers.clone(),
                session.limits,
            )
            .await
    }

    /// The client, when it is the plain shared reqwest client (which lousho
    /// can POST with itself).
    fn plain(&self) -> Option<&reqwest::Client> {
        (self.inner() as &dyn std::any::Any).downcast_ref::<reqwest::Client>()
    }

    /// Reads the call's SSE stream up to its reply, resuming it with
    /// `Last-Event-ID` when it closes early.
    async fn read_stream(
        &self,
        session: &Session,
        mut stream: rmcp::transport::common::client_side_sse::BoxedSseResponse,
        id: i64,
        inbound: &mpsc::Sender<ServerJsonRpcMessage>,
    ) -> Result<Reply, ServiceError> {
        let mut last_event: Option<String> = None;
        let mut server_wait: Option<Duration> = None;
        let mut attempts: u32 = 0;
        loop {
            let failure = loop {
                let sse = match stream.next().await {
                    None => break None,
                    Some(Err(e)) => break Some(e),
                    Some(Ok(sse)) => sse,
                };
                if let Some(ms) = sse.retry {
                    server_wait = Some(Duration::from_millis(ms));
                }
                if sse.id.is_some() {
                    last_event = sse.id;
                }
                let Some(data) = sse.data.filter(|d| !d.trim().is_empty()) else {
                    continue;
                };
                if !is_message_event(sse.event.as_deref()) {
                    continue;
                }
                // Read once, and checked as rmcp's own streams are
                // (`reply_check`): progress is noted, an unreadable reply
                // fails its request at once.
                let message = match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                    Ok(message) => message,
                    Err(e) => {
                        if reply_id(data.as_bytes()) == Some(RequestId::Number(id)) {
                            return Ok(Reply::Invalid(failing(&id, data.as_bytes(), &e)));
                        }
                        match self.replies().invalid(data.as_bytes(), &e) {
                            Some(error) => error,
                            None => continue,
                        }
                    }
                };
                self.lane().note(&message);
                match reply_to(message, id) {
                    Ok(reply) => {
                        // Let a stream that ends here free its connection.
                        let _ = futures::FutureExt::now_or_never(stream.next());
                        return Ok(reply);
                    }
                    Err(other) => {
                        self.replies().received(&other);
                        if inbound.send(*other).await.is_err() {
                            return Err(ServiceError::TransportClosed);
                        }
                    }
                }
            };
            let Some(event) = last_event.clone() else {
                return match failure {
                    Some(e) => Err(transport_error(StreamableHttpError::<C::Error>::Sse(e))),
                    None => Ok(Reply::Invalid(
                        "the server closed the call's SSE stream without a result (and gave no event id to resume from)".into(),
                    )),
                };
            };
            let wait = server_wait.unwrap_or_else(|| {
                RESUME_WAIT
                    .saturating_mul(1 << attempts.min(5))
                    .min(MAX_RESUME_WAIT)
            });
            attempts = attempts.saturating_add(1);
            tokio::time::sleep(wait).await;
            let resumed = self
                .inner()
                .get_stream_with_max_sse_event_size(
                    session.uri.clone(),
                    session.id.clone(),
                    Some(event),
                    session.auth.clone(),
                    session.headers.clone(),
                    session.limits.max_sse_event_size,
                )
                .await;
            match resumed {
                Ok(s) => stream = s,
                Err(
                    e @ (StreamableHttpError::ServerDoesNotSupportSse
                    | StreamableHttpError::AuthRequired(_)
                    | StreamableHttpError::InsufficientScope(_)),
                ) => return Err(transport_error(e)),
                Err(e) => {
                    tracing::debug!(error = %e, "resuming the call's SSE stream failed; trying again");
                    stream = futures::stream::empty().boxed();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
