//! Streamable HTTP: stateless, JSON responses (SSE only when progress streams),
//! POST only, Host/Origin checked, optional bearer auth.

use super::cancel::{CancelRegistry, Principal, cancelled_request_id};
use super::error::ServeError;
use super::handler::LoushoServer;
use super::options::{Auth, HttpOptions};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Binds the listener (port 0 picks a free port).
pub(crate) async fn bind(opts: &HttpOptions) -> Result<TcpListener, ServeError> {
    if !opts.path.starts_with('/') {
        return Err(ServeError::InvalidPath(opts.path.clone()));
    }
    let host = opts.host.trim_start_matches('[').trim_end_matches(']');
    let addr = format!("{}:{}", bracket(host), opts.port);
    TcpListener::bind(&addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

/// Whether a bind host only listens on this machine.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The router: the MCP endpoint at `opts.path`, behind the bearer check.
pub(crate) fn router(
    server: LoushoServer,
    cancels: CancelRegistry,
    opts: &HttpOptions,
    auth: Option<&Auth>,
    bound: SocketAddr,
    shutdown: &CancellationToken,
) -> axum::Router {
    let mut hosts: Vec<String> = vec![
        "localhost".into(),
        "127.0.0.1".into(),
        "::1".into(),
        "[::1]".into(),
    ];
    let host = opts.host.trim_start_matches('[').trim_end_matches(']');
    if !is_loopback(host) {
        hosts.push(host.to_owned());
        hosts.push(bound.ip().to_string());
    }
    hosts.extend(opts.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .flat_map(|h| [format!("http://{h}:*"), format!("https://{h}:*")])
        .collect();
    origins.extend(opts.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(opts.max_body_bytes)
        .with_cancellation_token(shutdown.child_token());
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let screened = Screened {
        inner: Arc::new(service),
        screen: Screen {
            cancels,
            max_body_bytes: opts.max_body_bytes,
        },
    };
    let app = axum::Router::new().route_service(&opts.path, screened);
    match auth {
        Some(Auth::Bearer(token)) => {
            let expected: Arc<[u8]> = format!("Bearer {}", token.0).into_bytes().into();
            app.layer(middleware::from_fn_with_state(expected, require_bearer))
        }
        None => app,
    }
}

/// rmcp's stateless Streamable HTTP service for our handler.
type McpService = StreamableHttpService<LoushoServer, NeverSessionManager>;

/// rmcp's service behind our POST screen: a plain tower `Service` (an axum
/// `from_fn` middleware would box and clone the stack per request), and the
/// inner service is shared, not cloned: rmcp's own
/// `Service::call` clones the whole service (its config's host and origin
/// lists included) for every request, so requests go to `handle` directly.
#[derive(Clone)]
struct Screened {
    inner: Arc<McpService>,
    screen: Screen,
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
            let req = if req.method() == Method::POST {
                match screen_post(&screen, req).await {
                    Ok(req) => req,
                    Err(response) => return Ok(response),
                }
            } else {
                req
            };
            Ok(inner.handle(req).await.map(Body::new))
        })
    }
}

/// Reads a POST body once (up to the size limit: `413` past it), answers
/// malformed JSON or JSON-RPC with a JSON-RPC error (`-32700` / `-32600`),
/// tags the request with its principal, and applies `notifications/cancelled`
/// to the matching in-flight call (see `cancel.rs`). `Err` is the response to
/// send instead of passing the request on.
async fn screen_post(screen: &Screen, req: Request) -> Result<Request, Response> {
    let principal = Principal(
        req.headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .into(),
    );
    let (mut parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, screen.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => {
            tracing::debug!(error = %e, "rejected a request body");
            return Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request body over {} bytes", screen.max_body_bytes),
            )
                .into_response());
        }
    };
    match check_envelope(&bytes) {
        Envelope::Cancel(id) => {
            screen.cancels.cancel(&principal, id);
        }
        Envelope::Ok => {}
        Envelope::Bad(response) => return Err(response),
    }
    parts.extensions.insert(principal);
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// What the POST screen needs.
#[derive(Clone)]
struct Screen {
    cancels: CancelRegistry,
    max_body_bytes: usize,
}

/// The outcome of checking a body's JSON-RPC envelope.
enum Envelope {
    Ok,
    Cancel(String),
    Bad(Response),
}

/// The JSON-RPC envelope of a POST body (strings borrowed from the body when
/// they hold no escapes).
#[derive(serde::Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    id: Option<serde_json::Value>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    result: Option<serde::de::IgnoredAny>,
    error: Option<serde::de::IgnoredAny>,
}

fn check_envelope(body: &[u8]) -> Envelope {
    let parsed: RawEnvelope = match serde_json::from_slice(body) {
        Ok(e) => e,
        Err(e) if e.is_data() => {
            // Valid JSON of the wrong shape (an array, a string, …).
            return Envelope::Bad(jsonrpc_error(
                None,
                -32600,
                "Invalid Request: send one JSON-RPC 2.0 message object",
            ));
        }
        Err(_) => {
            return Envelope::Bad(jsonrpc_error(
                None,
                -32700,
                "Parse error: the body is not valid JSON",
            ));
        }
    };
    let id = parsed.id.filter(|v| v.is_string() || v.is_number());
    if parsed.jsonrpc.as_deref() != Some("2.0")
        || (parsed.method.is_none() && parsed.result.is_none() && parsed.error.is_none())
    {
        return Envelope::Bad(jsonrpc_error(
            id,
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 message",
        ));
    }
    if parsed.method.as_deref() == Some("notifications/cancelled")
        && let Some(id) = cancelled_request_id(body)
    {
        return Envelope::Cancel(id);
    }
    Envelope::Ok
}

fn jsonrpc_error(id: Option<serde_json::Value>, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(serde_json::Value::Null),
        "error": { "code": code, "message": message },
    });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// Rejects requests without the right `Authorization: Bearer` header.
async fn require_bearer(State(expected): State<Arc<[u8]>>, req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    if given.is_some_and(|g| constant_time_eq(g, &expected)) {
        return next.run(req).await;
    }
    let mut res = (StatusCode::UNAUTHORIZED, "missing or invalid bearer token").into_response();
    res.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    res
}

/// Compares in time that depends only on the lengths, not on where the bytes differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let len = a.len().max(b.len());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..len {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= x ^ y;
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_matches_only_equal_bytes() {
        assert!(constant_time_eq(b"Bearer abc", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer abd", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer ab", b"Bearer abc"));
        assert!(!constant_time_eq(b"", b"x"));
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for h in ["127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["0.0.0.0", "192.0.2.1", "example.com"] {
            assert!(!is_loopback(h), "{h}");
        }
    }
}
