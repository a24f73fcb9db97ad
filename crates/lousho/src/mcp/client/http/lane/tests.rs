//! The lane against a scripted Streamable HTTP server on loopback: JSON and
//! SSE replies, what else a call's stream carries, a resumed stream, and the
//! cancellation of an abandoned call. (The server is axum, which comes with
//! `mcp-server`.)
#![cfg(feature = "mcp-server")]

use super::*;
use crate::mcp::client::http::shared_client;
use crate::mcp::client::replies::Replies;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

/// What the server saw: each POSTed body and each GET's `Last-Event-ID`.
#[derive(Clone)]
struct Seen {
    posts: UnboundedSender<(HeaderMap, Value)>,
    gets: UnboundedSender<Option<String>>,
}

fn sse(events: &[String], end: bool) -> Response {
    let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = events
        .iter()
        .map(|e| Ok(bytes::Bytes::from(e.clone())))
        .collect();
    let stream = futures::stream::iter(chunks);
    let body = if end {
        Body::from_stream(stream)
    } else {
        Body::from_stream(stream.chain(futures::stream::pending()))
    };
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(body)
        .unwrap_or_default()
}

fn result(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
}

fn data(message: &Value) -> String {
    format!("data: {message}\n\n")
}

async fn on_post(State(seen): State<Seen>, headers: HeaderMap, body: String) -> Response {
    let message: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let _ = seen.posts.send((headers, message.clone()));
    let id = message["id"].clone();
    let token = message["params"]["_meta"]["progressToken"].clone();
    match message["params"]["name"].as_str() {
        Some("json") => Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(result(&id, "plain").to_string()))
            .unwrap_or_default(),
        Some("stream") => {
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1}});
            let ping = json!({"jsonrpc": "2.0", "id": "server-1", "method": "ping"});
            sse(
                &[data(&progress), data(&ping), data(&result(&id, "streamed"))],
                true,
            )
        }
        Some("resume") => sse(&["id: e1\nretry: 10\ndata: \n\n".to_owned()], true),
        Some("no-id") => sse(&[": nothing\n\n".to_owned()], true),
        Some("hang") => sse(&[], false),
        Some("gone") => Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Body::empty())
            .unwrap_or_default(),
        _ if message.get("id").is_none() => Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Body::empty())
            .unwrap_or_default(),
        _ => Response::builder()
            .status(StatusCode::BAD_REQUEST)
            .body(Body::empty())
            .unwrap_or_default(),
    }
}

async fn on_get(State(seen): State<Seen>, headers: HeaderMap) -> Response {
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let _ = seen.gets.send(last);
    // The resumed stream of the `resume` call, whose id the test knows.
    sse(&[data(&result(&json!(FIRST_ID), "resumed"))], true)
}

struct Fixture {
    calls: HttpCalls,
    posts: mpsc::UnboundedReceiver<(HeaderMap, Value)>,
    gets: mpsc::UnboundedReceiver<Option<String>>,
    inbound: mpsc::Receiver<ServerJsonRpcMessage>,
    closed: CancellationToken,
}

async fn fixture() -> Fixture {
    let (posts_tx, posts) = mpsc::unbounded_channel();
    let (gets_tx, gets) = mpsc::unbounded_channel();
    let seen = Seen {
        posts: posts_tx,
        gets: gets_tx,
    };
    let app = axum::Router::new()
        .route("/mcp", post(on_post).get(on_get))
        .with_state(seen);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let state = Arc::new(LaneState::default());
    let client = shared_client().expect("client");
    let (client, _standalone) = Watched::new(client, Replies::default(), state.clone());
    let mut headers = HashMap::new();
    headers.insert(
        HeaderName::from_static("mcp-protocol-version"),
        HeaderValue::from_static("2025-11-25"),
    );
    let uri: Arc<str> = Arc::from(format!("http://{addr}/mcp"));
    let session: Arc<str> = Arc::from("session-1");
    state.capture(
        &uri,
        Some(&session),
        None,
        &headers,
        StreamableHttpResponseLimits::default(),
    );
    let (to_rmcp, inbound) = mpsc::channel(8);
    let closed = CancellationToken::new();
    let calls = HttpCalls::new(Arc::new(client), state, to_rmcp, closed.clone());
    Fixture {
        calls,
        posts,
        gets,
        inbound,
        closed,
    }
}

fn args() -> JsonObject {
    json!({"text": "hi"})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn text(reply: Outcome) -> String {
    match reply {
        Ok(Some(Reply::Result(r))) => r
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default(),
        other => panic!("not a result: {other:?}"),
    }
}

#[tokio::test]
async fn a_json_reply_is_the_result_and_the_session_headers_go_along() {
    let mut f = fixture().await;
    let mut call = f.calls.call("json", &args(), None).expect("a session");
    assert_eq!(call.id, FIRST_ID);
    assert_eq!(text((&mut call.reply).await), "plain");
    let (headers, body) = f.posts.recv().await.expect("posted");
    assert_eq!(headers["mcp-session-id"], "session-1");
    assert_eq!(headers["mcp-protocol-version"], "2025-11-25");
    assert_eq!(body["method"], "tools/call");
    assert_eq!(body["params"]["arguments"]["text"], "hi");
    assert_eq!(body["params"]["_meta"]["progressToken"], FIRST_ID);
    drop(call);
    // Answered: no cancellation follows.
    f.closed.cancel();
    assert!(f.posts.try_recv().is_err());
}

#[tokio::test]
async fn an_sse_reply_hands_progress_and_requests_to_rmcp_and_ends_at_the_result() {
    let mut f = fixture().await;
    let mut call = f.calls.call("json", &args(), None).expect("a session");
    let _ = (&mut call.reply).await;
    let mut call = f.calls.call("stream", &args(), None).expect("a session");
    let progressed = call.progress.clone();
    let noticed = tokio::spawn(async move { progressed.notified().await });
    assert_eq!(text((&mut call.reply).await), "streamed");
    noticed.await.expect("progress restarted the timeout");
    let first = f.inbound.recv().await.expect("the progress");
    assert!(matches!(first, ServerJsonRpcMessage::Notification(_)));
    let second = f.inbound.recv().await.expect("the server's request");
    assert!(matches!(second, ServerJsonRpcMessage::Request(_)));
}

#[tokio::test]
async fn a_stream_closed_before_the_result_is_resumed_after_the_server_s_retry() {
    let mut f = fixture().await;
    let mut call = f.calls.call("resume", &args(), None).expect("a session");
    assert_eq!(call.id, FIRST_ID, "the GET answers this id");
    assert_eq!(text((&mut call.reply).await), "resumed");
    assert_eq!(f.gets.recv().await, Some(Some("e1".to_owned())));
}

#[tokio::test]
async fn a_stream_closed_with_nothing_to_resume_fails_the_call_with_the_reason() {
    let f = fixture().await;
    let mut call = f.calls.call("no-id", &args(), None).expect("a session");
    match (&mut call.reply).await {
        Ok(Some(Reply::Invalid(why))) => assert!(why.contains("without a result"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_session_the_server_forgot_sends_the_call_back_to_rmcp() {
    let f = fixture().await;
    let mut call = f.calls.call("gone", &args(), None).expect("a session");
    assert!(matches!((&mut call.reply).await, Ok(None)));
}

/// Polls `call` (which sends it) until the server has its POST.
async fn posted(call: &mut HttpCall, f: &mut Fixture) -> Value {
    tokio::select! {
        reply = &mut call.reply => panic!("answered: {reply:?}"),
        seen = f.posts.recv() => seen.expect("the call").1,
    }
}

#[tokio::test]
async fn an_abandoned_call_is_cancelled_and_close_fails_calls_in_flight() {
    let mut f = fixture().await;
    let mut call = f.calls.call("hang", &args(), None).expect("a session");
    let id = call.id;
    assert_eq!(posted(&mut call, &mut f).await["id"], id);
    drop(call);
    let (_, cancelled) = f.posts.recv().await.expect("the cancellation");
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], id);

    let mut call = f.calls.call("hang", &args(), None).expect("a session");
    let _ = posted(&mut call, &mut f).await;
    f.closed.cancel();
    assert!(matches!(
        (&mut call.reply).await,
        Err(ServiceError::TransportClosed)
    ));
    drop(call);
    assert!(f.posts.try_recv().is_err(), "no cancellation after close");
}
