//! Raw MCP servers that misbehave on purpose (no rmcp: they write exactly
//! the bytes a broken or hostile server would), over stdio (the
//! `lousho-fixture-mcp malformed|ping-flood` modes) and over Streamable HTTP
//! in-process ([`serve_http`]).
//!
//! - **malformed**: `tools/call` of `deep` answers with a result whose
//!   `structuredContent` is nested 200 levels, `no_result` with neither `result` nor `error`, `bad_error` with
//!   `"error": "boom"`, `huge_number` with `1e999` in its `structuredContent`; `echo`
//!   answers properly (the connection stays usable).
//! - **ping-flood**: `tools/call` of `flood` (`{"count": n}`, default
//!   100 000) sends `n` pings first, reading the client's answers meanwhile,
//!   and then its result, `max_unanswered=<m>`: the most pings that were
//!   sent and not yet answered at any point (how much the client let queue
//!   up). With `"exit": true` the server exits right after the result,
//!   leaving the client's answers still on their way with nobody to read
//!   them.

use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The tools of the malformed mode.
pub const MALFORMED_TOOLS: [&str; 4] = ["deep", "no_result", "bad_error", "huge_number"];

/// The line answering a request of the malformed mode (`None` for
/// notifications and answers).
pub fn malformed_answer(request: &Value) -> Option<String> {
    let id = request.get("id")?.clone();
    let method = request.get("method")?.as_str()?;
    let ok = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let tool = request.pointer("/params/name").and_then(Value::as_str);
    let id_text = id.to_string();
    Some(match (method, tool) {
        ("initialize", _) => ok(json!({
            "protocolVersion": request.pointer("/params/protocolVersion").cloned().unwrap_or(json!("2025-11-25")),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0"}
        })),
        ("tools/list", _) => {
            let tools: Vec<Value> = MALFORMED_TOOLS
                .iter()
                .chain(&["echo", "flood"])
                .map(|n| json!({"name": n, "description": n, "inputSchema": {"type": "object"}}))
                .collect();
            ok(json!({ "tools": tools }))
        }
        ("tools/call", Some("deep")) => format!(
            r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"content":[],"structuredContent":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        ),
        ("tools/call", Some("no_result")) => format!(r#"{{"jsonrpc":"2.0","id":{id_text}}}"#),
        ("tools/call", Some("bad_error")) => {
            format!(r#"{{"jsonrpc":"2.0","id":{id_text},"error":"boom"}}"#)
        }
        ("tools/call", Some("huge_number")) => format!(
            r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"content":[],"structuredContent":{{"n":1e999}}}}}}"#
        ),
        ("tools/call", _) => ok(json!({"content": [{"type": "text", "text": "fine"}]})),
        ("ping", _) => ok(json!({})),
        _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}})
            .to_string(),
    })
}

/// Serves the malformed mode on stdin/stdout until stdin closes.
pub fn run_malformed_stdio() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(answer) = malformed_answer(&request)
            && writeln!(out, "{answer}")
                .and_then(|()| out.flush())
                .is_err()
        {
            break;
        }
    }
}

/// Serves the ping-flood mode on stdin/stdout until stdin closes.
pub fn run_ping_flood_stdio() {
    let answered = Arc::new(AtomicUsize::new(0));
    let (requests_tx, requests) = std::sync::mpsc::channel::<Value>();
    let counter = answered.clone();
    // Reads all the time: the client's answers are counted, requests passed on.
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("method").is_some() {
                if requests_tx.send(message).is_err() {
                    break;
                }
            } else if message.get("result").is_some() || message.get("error").is_some() {
                counter.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for request in requests {
        let tool = request.pointer("/params/name").and_then(Value::as_str);
        let line = if tool == Some("flood") {
            let count = request
                .pointer("/params/arguments/count")
                .and_then(Value::as_u64)
                .unwrap_or(100_000) as usize;
            let before = answered.load(Ordering::SeqCst);
            let mut max_unanswered = 0;
            for i in 0..count {
                let ping = json!({"jsonrpc": "2.0", "id": format!("ping-{i}"), "method": "ping"});
                if writeln!(out, "{ping}").is_err() {
                    return;
                }
                if i % 64 == 0 {
                    let done = answered.load(Ordering::SeqCst).saturating_sub(before);
                    let unanswered = (i + 1).saturating_sub(done);
                    max_unanswered = max_unanswered.max(unanswered);
                }
            }
            let id = request.get("id").cloned().unwrap_or(Value::Null);
            let result = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [
                {"type": "text", "text": format!("max_unanswered={max_unanswered}")}
            ]}});
            if request.pointer("/params/arguments/exit") == Some(&json!(true)) {
                let _ = writeln!(out, "{result}").and_then(|()| out.flush());
                std::process::exit(0);
            }
            result.to_string()
        } else {
            match malformed_answer(&request) {
                Some(answer) => answer,
                None => continue,
            }
        };
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}

/// How the HTTP server sends its replies to `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpReplies {
    /// `application/json` bodies.
    Json,
    /// One-event `text/event-stream` bodies.
    Sse,
}

/// Serves the malformed mode over stateless Streamable HTTP on 127.0.0.1;
/// returns the MCP endpoint's URL. The server lives as long as the runtime.
pub async fn serve_http(replies: HttpReplies) -> String {
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: axum::body::Bytes| async move {
            use axum::http::{StatusCode, header};
            use axum::response::IntoResponse;
            let Ok(request) = serde_json::from_slice::<Value>(&body) else {
                return StatusCode::BAD_REQUEST.into_response();
            };
            let Some(answer) = malformed_answer(&request) else {
                return StatusCode::ACCEPTED.into_response();
            };
            let is_call = request.get("method").and_then(Value::as_str) == Some("tools/call");
            if is_call && replies == HttpReplies::Sse {
                let body = format!("event: message\ndata: {answer}\n\n");
                ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
            } else {
                ([(header::CONTENT_TYPE, "application/json")], answer).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/mcp")
}
