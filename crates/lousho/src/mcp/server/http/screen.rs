//! The screen in front of rmcp's service: checks the host, reads a POST body
//! once (size and time limits), answers malformed JSON-RPC itself, applies
//! `notifications/cancelled` to the matching call — whose response stream is
//! then closed without a JSON-RPC answer, as the protocol asks.

use super::super::audit::{self, Decision};
use super::super::caller::Caller;
use super::super::cancel::{CancelRegistry, Principal, Registration};
use super::super::handler::LoushoServer;
use super::super::limits::{Limiter, PermitSlot, Refused};
use super::admission::{Admission, Admitted};
use super::client_id::ClientId;
use super::envelope::{self, Envelope};
use super::host::AllowedHosts;
use super::listen::{BODY_RATE_GRACE, BodyTooSlow};
use super::oauth::ResourceServer;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::body::{Body as HttpBody, Bytes, Frame, SizeHint};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// rmcp's Streamable HTTP service for our handler: stateless (the
/// default) or with a session per client.
pub(super) enum McpService {
    /// Each POST on its own.
    Stateless(StreamableHttpService<LoushoServer, NeverSessionManager>),
    /// `Mcp-Session-Id` sessions: the client can answer server requests.
    Stateful(StreamableHttpService<LoushoServer, LocalSessionManager>),
}

impl McpService {
    async fn handle(&self, request: Request) -> Response {
        match self {
            McpService::Stateless(s) => s.handle(request).await.map(Body::new),
            McpService::Stateful(s) => s.handle(request).await.map(Body::new),
        }
    }
}

/// rmcp's service behind our screen: a plain tower `Service` (an axum
/// `from_fn` middleware would box and clone the stack per request), and the
/// inner service is shared, not cloned: rmcp's own `Service::call` clones the
/// whole service (its config's host and origin lists included) for every
/// request, so requests go to `handle` directly.
#[derive(Clone)]
pub(super) struct Screened {
    pub(super) inner: Arc<McpService>,
    pub(super) screen: Screen,
}

/// What the screen needs.
#[derive(Clone)]
pub(super) struct Screen {
    pub(super) hosts: Arc<AllowedHosts>,
    pub(super) cancels: CancelRegistry,
    pub(super) max_body_bytes: usize,
    pub(super) body_timeout: Duration,
    /// The minimum body rate (for the `408` message; `listen` enforces it).
    pub(super) min_body_rate: u64,
    /// The call limits.
    pub(super) admission: Arc<Admission>,
    /// The per-caller limits of agent runs.
    pub(super) limiter: Option<Arc<Limiter>>,
}

impl tower_service::Service<Request> for Screened {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let inner = self.inner.clone();
        let screen = self.screen.clone();
        Box::pin(async move {
            if let Err(refused) = screen.hosts.check(&req) {
                super::drain::drain(req).await;
                return Ok(refused.into_response());
            }
            if req.method() != Method::POST {
                return Ok(inner.handle(req).await);
            }
            let json = is_json(&req);
            let started = Instant::now();
            let (req, body, call) = match screen_post(&screen, req).await {
                Ok(screened) => screened,
                Err(response) => return Ok(response),
            };
            let Some(call) = call else {
                return Ok(rejected_as_jsonrpc(inner.handle(req).await, json, &body));
            };
            let tool = call.tool.clone();
            if let Some(refused) = beyond_scope(&req, tool.as_deref()) {
                return Ok(refused);
            }
            let client = ClientId::of(&req);
            let mut req = req;
            if let Some(refused) = limit_run(&screen, &mut req, &client, &call, started).await {
                return Ok(refused);
            }
            let admitted = match screen.admission.admit(client, tool.as_deref()).await {
                Ok(admitted) => admitted,
                Err(busy) => {
                    let caller = req.extensions().get::<Caller>();
                    let tool = tool.as_deref().unwrap_or_default();
                    audit::call(caller, tool, Decision::Shed, "503", started);
                    return Ok(busy);
                }
            };
            let ScreenedCall {
                cancel,
                registration,
                ..
            } = call;
            // A `tools/call`: a cancel notification for it closes its response
            // stream without an answer (dropping rmcp's future cancels the run).
            let response = tokio::select! {
                biased;
                () = cancel.cancelled() => return Ok(closed_stream()),
                r = inner.handle(req) => rejected_as_jsonrpc(r, json, &body),
            };
            if !is_event_stream(&response) {
                return Ok(response);
            }
            Ok(response.map(|inner| {
                Body::new(UntilCancelled {
                    inner,
                    cancelled: Box::pin(cancel.cancelled_owned()),
                    _registration: registration,
                    _admitted: admitted,
                })
            }))
        })
    }
}

/// A `tools/call` past the screen.
struct ScreenedCall {
    /// Fires when the client cancels it.
    cancel: CancellationToken,
    /// Its entry in the cancel registry.
    registration: Registration,
    /// The tool it names.
    tool: Option<String>,
    /// Its JSON-RPC id as sent.
    rpc_id: serde_json::Value,
    /// Whether it resumes a call already started (`requestState`).
    resumes: bool,
}

/// Reads a POST body once (up to the size limit: `413` past it; within the
/// body timeout: `408` past it), answers malformed JSON-RPC itself, tags the
/// request with its principal, applies `notifications/cancelled` to the
/// matching in-flight call, and registers a `tools/call` so one can. `Err` is
/// the response to send instead of passing the request on.
async fn screen_post(
    screen: &Screen,
    req: Request,
) -> Result<(Request, Bytes, Option<ScreenedCall>), Response> {
    // An OAuth caller stays one principal across token refreshes.
    let principal = Principal(match req.extensions().get::<Caller>() {
        Some(caller) => caller.key(),
        None => req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .into(),
    });
    let (parts, body) = req.into_parts();
    let read = axum::body::to_bytes(body, screen.max_body_bytes);
    let bytes = match tokio::time::timeout(screen.body_timeout, read).await {
        Ok(Ok(b)) => b,
        Err(_) => {
            tracing::debug!(timeout = ?screen.body_timeout, "a request body arrived too slowly");
            return Err(too_slow(format!(
                "the request body did not arrive within {} s",
                screen.body_timeout.as_secs_f32()
            )));
        }
        Ok(Err(e)) if is_too_slow(&e) => {
            tracing::debug!(error = %e, "a request body arrived too slowly");
            return Err(too_slow(format!(
                "the request body arrived too slowly (under {} bytes a second on average after the first {} s)",
                screen.min_body_rate,
                BODY_RATE_GRACE.as_secs()
            )));
        }
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "rejected a request body");
            return Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request body over {} bytes", screen.max_body_bytes),
            )
                .into_response());
        }
    };
    let call = match envelope::check(&bytes) {
        Envelope::Cancel(id) => {
            screen.cancels.cancel(&principal, id);
            None
        }
        Envelope::Call {
            id,
            rpc_id,
            tool,
            resumes,
        } => {
            let cancel = CancellationToken::new();
            let registration = screen.cancels.register(&principal, id, cancel.clone());
            Some(ScreenedCall {
                cancel,
                registration,
                tool,
                rpc_id,
                resumes,
            })
        }
        Envelope::Ok => None,
        Envelope::Bad(response) => return Err(response),
    };
    Ok((
        Request::from_parts(parts, Body::from(bytes.clone())),
        bytes,
        call,
    ))
}

/// `403 insufficient_scope` for a call of a tool the caller's token does
/// not open (the challenge names every scope the tool needs: step-up).
fn beyond_scope(req: &Request, tool: Option<&str>) -> Option<Response> {
    let caller = req.extensions().get::<Caller>()?;
    let tool = tool?;
    let needed = caller.policy.for_tool(tool);
    if caller.lacks(&needed).is_empty() {
        return None;
    }
    audit::call(
        Some(caller),
        tool,
        Decision::InsufficientScope,
        "403",
        Instant::now(),
    );
    Some(match req.extensions().get::<Arc<ResourceServer>>() {
        Some(rs) => rs.insufficient_scope(&needed),
        None => (StatusCode::FORBIDDEN, "insufficient_scope").into_response(),
    })
}

/// The per-caller limits of an agent run (not of the retry of a round,
/// which goes on with a run already started): its permit goes to the
/// handler in the request's extensions; past a limit the `429` to answer
/// (`503` when the store keeping the counts failed).
async fn limit_run(
    screen: &Screen,
    req: &mut Request,
    client: &ClientId,
    call: &ScreenedCall,
    started: Instant,
) -> Option<Response> {
    let limiter = screen.limiter.as_ref()?;
    let tool = call.tool.as_deref()?;
    if call.resumes || !screen.admission.is_run(tool) {
        return None;
    }
    let refused = match limiter.admit(&client.name()).await {
        Ok(permit) => {
            req.extensions_mut().insert(PermitSlot::new(permit));
            return None;
        }
        Err(refused) => refused,
    };
    let caller = req.extensions().get::<Caller>();
    let (status, retry_after, data) = match &refused {
        Refused::Exceeded(e) => {
            let secs = e.retry_after_secs();
            let data = serde_json::json!({
                "limit": e.which.name(),
                "max": e.limit,
                "retryAfterSeconds": secs,
            });
            (StatusCode::TOO_MANY_REQUESTS, secs, data)
        }
        Refused::Store(e) => {
            tracing::warn!(error = %e, "could not check a caller's limits");
            (StatusCode::SERVICE_UNAVAILABLE, 1, serde_json::Value::Null)
        }
    };
    tracing::info!(client = ?client, %refused, "refused an agent run past a per-caller limit");
    audit::call(
        caller,
        tool,
        Decision::RateLimited,
        status.as_str(),
        started,
    );
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": call.rpc_id,
        "error": { "code": RATE_LIMITED, "message": refused.to_string(), "data": data },
    });
    let mut res = (status, axum::Json(body)).into_response();
    res.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    Some(res)
}

/// The JSON-RPC error code of a run refused by a per-caller limit (in the
/// implementation-defined server-error range; `data.limit` names the limit).
const RATE_LIMITED: i64 = -32029;

/// `408`, and the connection closes.
fn too_slow(message: String) -> Response {
    let mut res = (StatusCode::REQUEST_TIMEOUT, message).into_response();
    res.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

/// Whether reading the body failed because it came under the minimum rate.
fn is_too_slow(e: &axum::Error) -> bool {
    let first: &(dyn std::error::Error + 'static) = e;
    std::iter::successors(Some(first), |e| e.source()).any(|e| e.is::<BodyTooSlow>())
}

/// rmcp answers `415` both to a wrong `Content-Type` and to a JSON body it
/// cannot read; the latter becomes the JSON-RPC error the protocol names.
fn rejected_as_jsonrpc<B>(response: axum::http::Response<B>, json: bool, body: &[u8]) -> Response
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    if json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        tracing::debug!("rmcp could not read a JSON body; answering with a JSON-RPC error");
        return envelope::unreadable(body);
    }
    response.map(Body::new)
}

/// Whether the request says its body is JSON (what rmcp checks first).
fn is_json(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        })
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
}

/// The answer to a call cancelled before it answered: an event stream that
/// ends at once, with no JSON-RPC message on it.
fn closed_stream() -> Response {
    let mut res = (StatusCode::OK, Body::empty()).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    res
}

/// A call's event stream (progress, then the result) that ends, without the
/// result, when the call is cancelled; keeps the call registered meanwhile.
struct UntilCancelled {
    inner: Body,
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
    _registration: Registration,
    _admitted: Admitted,
}

impl HttpBody for UntilCancelled {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if self.cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
