//! Wire-faithful mock servers for the OpenAI Chat Completions and Anthropic
//! Messages APIs, on `127.0.0.1:0`, driven by a script of [`MockReply`]s and
//! recording every request's headers and body.
//!
//! ```
//! use lousho_testkit::mock_provider::{MockProvider, MockReply};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mock = MockProvider::openai().reply(MockReply::text_reply("Hello!")).start().await;
//! // point a provider at mock.base_url(), run it, then:
//! assert_eq!(mock.requests().len(), 0);
//! # }
//! ```

mod anthropic;
mod openai;
mod pairs;
mod reply;
mod structured;

pub use reply::MockReply;

use axum::Router;
use axum::body::Body as HttpBody;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use reply::Body;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Which API the mock speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
}

/// One request the mock received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, …
    pub method: String,
    /// The path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers, names lower-cased.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON (`Value::Null` if it was not JSON).
    pub body: Value,
    /// The client's address: two requests from one address came over one
    /// (pooled) connection.
    pub peer: SocketAddr,
}

impl RecordedRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

struct Shared {
    wire: Wire,
    api_key: Option<String>,
    script: Mutex<VecDeque<MockReply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    requested: Notify,
    served: AtomicUsize,
    disconnects: AtomicUsize,
    disconnected: Notify,
    /// Anthropic: the thinking signatures issued, with the text each signs.
    signatures: Mutex<HashMap<String, String>>,
}

/// Configures a mock before it starts.
#[must_use]
pub struct MockProviderBuilder {
    wire: Wire,
    api_key: Option<String>,
    script: Vec<MockReply>,
}

impl MockProviderBuilder {
    /// Adds one reply to the script.
    pub fn reply(mut self, reply: MockReply) -> Self {
        self.script.push(reply);
        self
    }

    /// Adds replies to the script.
    pub fn replies(mut self, replies: impl IntoIterator<Item = MockReply>) -> Self {
        self.script.extend(replies);
        self
    }

    /// Answers 401 (in the API's format) unless the request carries this key.
    pub fn require_api_key(mut self, key: &str) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Binds `127.0.0.1:0` and serves.
    pub async fn start(self) -> MockProvider {
        let shared = Arc::new(Shared {
            wire: self.wire,
            api_key: self.api_key,
            script: Mutex::new(self.script.into()),
            requests: Mutex::new(Vec::new()),
            requested: Notify::new(),
            served: AtomicUsize::new(0),
            disconnects: AtomicUsize::new(0),
            disconnected: Notify::new(),
            signatures: Mutex::new(HashMap::new()),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .await;
        });
        MockProvider { addr, shared, task }
    }
}

/// A running mock provider. Dropping it stops accepting connections.
pub struct MockProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockProvider {
    /// A mock of OpenAI's Chat Completions API.
    pub fn openai() -> MockProviderBuilder {
        MockProviderBuilder {
            wire: Wire::OpenAi,
            api_key: None,
            script: Vec::new(),
        }
    }

    /// A mock of Anthropic's Messages API.
    pub fn anthropic() -> MockProviderBuilder {
        MockProviderBuilder {
            wire: Wire::Anthropic,
            api_key: None,
            script: Vec::new(),
        }
    }

    /// The base URL to give the provider: `http://127.0.0.1:<port>/v1` for
    /// OpenAI (like `OPENAI_BASE_URL`), `http://127.0.0.1:<port>` for
    /// Anthropic (like `ANTHROPIC_BASE_URL`).
    pub fn base_url(&self) -> String {
        match self.shared.wire {
            Wire::OpenAi => format!("http://{}/v1", self.addr),
            Wire::Anthropic => format!("http://{}", self.addr),
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().expect("lock").clone()
    }

    /// Waits until `n` requests came in; false on timeout.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.shared.requested.notified();
            if self.requests().len() >= n {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.requests().len() >= n;
            }
        }
    }

    /// How many streamed responses ended because the client went away
    /// before the stream was complete.
    pub fn disconnects(&self) -> usize {
        self.shared.disconnects.load(Ordering::SeqCst)
    }

    /// Waits until a client disconnected mid-stream; false on timeout.
    pub async fn wait_for_disconnect(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.shared.disconnected.notified();
            if self.disconnects() > 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.disconnects() > 0;
            }
        }
    }
}

fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

fn json_response(status: u16, body: String) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/json")
        .body(HttpBody::from(body))
        .expect("response")
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let headers = header_map(&parts.headers);
    shared.requests.lock().expect("lock").push(RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        headers: headers.clone(),
        body: body.clone(),
        peer,
    });
    shared.requested.notify_waiters();
    let wire = shared.wire;
    let (path, error_body): (&str, fn(&str, &str) -> String) = match wire {
        Wire::OpenAi => (openai::PATH, openai::error_body),
        Wire::Anthropic => (anthropic::PATH, anthropic::error_body),
    };
    if parts.uri.path() != path || parts.method != axum::http::Method::POST {
        return json_response(
            404,
            error_body("not_found_error", &format!("no route {}", parts.uri.path())),
        );
    }
    if let Some(key) = &shared.api_key {
        let denied = match wire {
            Wire::OpenAi => {
                openai::check_auth(headers.get("authorization").map(String::as_str), key)
            }
            Wire::Anthropic => anthropic::check_auth(
                headers.get("x-api-key").map(String::as_str),
                headers.get("anthropic-version").map(String::as_str),
                key,
            ),
        };
        if let Some((status, body)) = denied {
            return json_response(status, body);
        }
    }
    let bad_output = match wire {
        Wire::OpenAi => structured::check_openai(&body).or_else(|| pairs::check_openai(&body)),
        Wire::Anthropic => {
            structured::check_anthropic(&body).or_else(|| pairs::check_anthropic(&body))
        }
    };
    if let Some(message) = bad_output {
        return json_response(400, error_body("invalid_request_error", &message));
    }
    if wire == Wire::Anthropic
        && let Some((status, body)) =
            anthropic::check_request(&body, &shared.signatures.lock().expect("lock"))
    {
        return json_response(status, body);
    }
    let Some(reply) = shared.script.lock().expect("lock").pop_front() else {
        return json_response(
            500,
            error_body("api_error", "mock: the script has no more replies"),
        );
    };
    let serial = shared.served.fetch_add(1, Ordering::SeqCst) + 1;
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = match &reply.body {
        Body::Error {
            status,
            kind,
            message,
        } => json_response(*status, error_body(kind, message)),
        Body::Canned(canned) => {
            let (status, body, headers) = match wire {
                Wire::OpenAi => openai::canned(*canned),
                Wire::Anthropic => anthropic::canned(*canned),
            };
            let mut response = json_response(status, body);
            for (name, value) in headers {
                if let (Ok(n), Ok(v)) = (
                    axum::http::HeaderName::from_bytes(name.as_bytes()),
                    axum::http::HeaderValue::from_str(&value),
                ) {
                    response.headers_mut().insert(n, v);
                }
            }
            response
        }
        Body::Raw {
            status,
            content_type,
            body,
        } => Response::builder()
            .status(StatusCode::from_u16(*status).unwrap_or(StatusCode::OK))
            .header(header::CONTENT_TYPE, content_type.as_str())
            .body(HttpBody::from(body.clone()))
            .expect("response"),
        Body::Stream(_) => {
            let (frames, keep_alive) = match wire {
                Wire::OpenAi => (openai::frames(&reply, &body, serial), openai::KEEP_ALIVE),
                Wire::Anthropic => (
                    anthropic::frames(
                        &reply,
                        &body,
                        serial,
                        &mut shared.signatures.lock().expect("lock"),
                    ),
                    anthropic::KEEP_ALIVE,
                ),
            };
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "text/event-stream; charset=utf-8")
                .header(header::CACHE_CONTROL, "no-cache")
                .body(event_stream(shared.clone(), frames, &reply, keep_alive))
                .expect("response")
        }
    };
    for (name, value) in &reply.headers {
        if let (Ok(n), Ok(v)) = (
            axum::http::HeaderName::from_bytes(name.as_bytes()),
            axum::http::HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(n, v);
        }
    }
    response
}

/// Counts a disconnect when the body is dropped before it finished.
struct DisconnectGuard {
    shared: Arc<Shared>,
    finished: AtomicBool,
}

impl Drop for DisconnectGuard {
    fn drop(&mut self) {
        if !self.finished.load(Ordering::SeqCst) {
            self.shared.disconnects.fetch_add(1, Ordering::SeqCst);
            self.shared.disconnected.notify_waiters();
        }
    }
}

struct StreamState {
    frames: VecDeque<String>,
    sent: usize,
    chunk_delay: Duration,
    disconnect_after: Option<usize>,
    hold_until: Option<Instant>,
    keep_alive: &'static str,
    guard: DisconnectGuard,
}

fn event_stream(
    shared: Arc<Shared>,
    frames: Vec<String>,
    reply: &MockReply,
    keep_alive: &'static str,
) -> HttpBody {
    let state = StreamState {
        frames: frames.into(),
        sent: 0,
        chunk_delay: reply.chunk_delay,
        disconnect_after: reply.disconnect_after,
        hold_until: reply.hold.then(|| Instant::now() + Duration::from_secs(30)),
        keep_alive,
        guard: DisconnectGuard {
            shared,
            finished: AtomicBool::new(false),
        },
    };
    let stream = futures::stream::unfold(state, |mut s| async move {
        if s.disconnect_after == Some(s.sent) {
            // Breaking the body aborts the connection mid-stream (intended:
            // not a client disconnect).
            s.guard.finished.store(true, Ordering::SeqCst);
            // Let hyper flush what was sent (it flushes while the body is
            // pending); an error drops its unwritten buffer.
            tokio::time::sleep(Duration::from_millis(30)).await;
            let err = std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "mock: scripted disconnect",
            );
            s.disconnect_after = None;
            s.frames.clear();
            s.hold_until = None;
            return Some((Err(err), s));
        }
        if let Some(frame) = s.frames.pop_front() {
            if !s.chunk_delay.is_zero() {
                tokio::time::sleep(s.chunk_delay).await;
            }
            s.sent += 1;
            return Some((Ok(frame), s));
        }
        if let Some(until) = s.hold_until
            && Instant::now() < until
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
            return Some((Ok(s.keep_alive.to_owned()), s));
        }
        s.guard.finished.store(true, Ordering::SeqCst);
        None
    });
    HttpBody::from_stream(stream)
}

impl std::fmt::Debug for MockProviderBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockProviderBuilder")
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for MockProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockProvider")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}
