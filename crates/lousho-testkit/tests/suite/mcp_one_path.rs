//! One protocol engine (issue 29): a 2025-11-25 session (with the
//! `initialize` handshake) and a 2026-07-28 session (per-request metadata)
//! take one and the same path for every request, over stdio and over
//! Streamable HTTP: rmcp's service, through lousho's own extension point
//! (the stdio `Transport`, the HTTP client under rmcp's transport), which
//! say at trace level what passes them. A second path beside rmcp — a lane
//! that writes or POSTs a call itself — would not pass there, and the
//! counts below would not add up.

use super::fixture::{call, fixture};
use super::mcp_logging::{Logs, capture_logs};
use lousho::McpServer;
use lousho::connect_mcp;
use lousho::mcp::ConnectOptions;
use lousho::tool::{ToolContext, ToolError};
use lousho_testkit::mcp_fixture::{Fixture, serve_http_fixture};
use serde_json::json;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

/// The trace lines of `transport` that have every one of `words`.
fn count(logs: &Logs, transport: &str, words: &[&str]) -> usize {
    let tag = format!("transport=\"{transport}\"");
    logs.text()
        .lines()
        .filter(|l| l.contains(&tag) && words.iter().all(|w| l.contains(w)))
        .count()
}

async fn every_request_takes_the_one_path(entry: McpServer, transport: &str, era: &str) {
    let (logs, _guard) = capture_logs("lousho::mcp::client=trace");
    let (progressed, mut progress) = tokio::sync::watch::channel(0usize);
    let options = ConnectOptions::default().on_progress(move |_| {
        progressed.send_modify(|n| *n += 1);
    });
    let mcp = connect_mcp([("fx", entry)], options).await.unwrap();
    let text = logs.text();
    assert!(
        text.contains("MCP session negotiated")
            && text.contains(&format!("protocol_version={era}")),
        "not a {era} session: {text}"
    );
    let tools = mcp.tools();
    let out = call(tools.get("fx__echo").unwrap(), json!({"text": "hi"})).await;
    assert_eq!(out.to_model_text(), "hi", "{out:?}");
    let out = call(
        tools.get("fx__progress").unwrap(),
        json!({"ms": 10, "steps": 2}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    tokio::time::timeout(LIMIT, progress.wait_for(|n| *n >= 1))
        .await
        .expect("no progress reached the hook")
        .unwrap();

    // A call cancelled once it is on its way.
    let slow = tools.get("fx__slow").unwrap().clone();
    let ctx = ToolContext::new("c1");
    let cancel = ctx.cancel.clone();
    let task = tokio::spawn(async move { slow.call(json!({"ms": 20000}), ctx).await });
    let sent = tokio::time::timeout(LIMIT, async {
        while count(
            &logs,
            transport,
            &["sent an MCP request", "method=tools/call"],
        ) < 3
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    if sent.await.is_err() {
        panic!(
            "the third call never reached the transport: {}",
            logs.text()
        );
    }
    cancel.cancel();
    let cancelled = task.await.unwrap();
    assert!(
        matches!(cancelled, Err(ToolError::Cancelled)),
        "{cancelled:?}"
    );
    // rmcp cancels a 2026-07-28 call over HTTP by closing its response
    // stream (no session to POST a notification on); everywhere else it
    // sends `notifications/cancelled`, through the same transport.
    if !(transport == "http" && era == "2026-07-28") {
        let told = tokio::time::timeout(LIMIT, async {
            while count(&logs, transport, &["method=notifications/cancelled"]) == 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        if told.await.is_err() {
            panic!(
                "the cancellation never went through the transport: {}",
                logs.text()
            );
        }
    }
    mcp.close().await;

    // Every call, listing, progress and cancellation passed the one
    // extension point, and nothing else carried a call.
    assert_eq!(
        count(
            &logs,
            transport,
            &["sent an MCP request", "method=tools/call"]
        ),
        3,
        "{}",
        logs.text()
    );
    assert!(
        count(
            &logs,
            transport,
            &["sent an MCP request", "method=tools/list"]
        ) >= 1
    );
    assert!(count(&logs, transport, &["received an MCP response"]) >= 3);
    assert!(
        count(
            &logs,
            transport,
            &[
                "received an MCP notification",
                "method=notifications/progress"
            ]
        ) >= 1
    );
    let other = if transport == "stdio" {
        "http"
    } else {
        "stdio"
    };
    assert_eq!(count(&logs, other, &["sent an MCP"]), 0);
}

#[tokio::test]
async fn a_2025_11_25_session_over_stdio_takes_the_one_path() {
    every_request_takes_the_one_path(fixture("serve"), "stdio", "2025-11-25").await;
}

#[tokio::test]
async fn a_2026_07_28_session_over_stdio_takes_the_one_path() {
    let entry = fixture("serve").env("FIXTURE_ONLY_2026", "1");
    every_request_takes_the_one_path(entry, "stdio", "2026-07-28").await;
}

#[tokio::test]
async fn a_2025_11_25_session_over_http_takes_the_one_path() {
    let server = serve_http_fixture(Fixture::new(), false).await;
    every_request_takes_the_one_path(McpServer::http(&server.url), "http", "2025-11-25").await;
    server.stop().await;
}

#[tokio::test]
async fn a_2026_07_28_session_over_http_takes_the_one_path() {
    let server = serve_http_fixture(Fixture::new().only_2026_07_28(), false).await;
    every_request_takes_the_one_path(McpServer::http(&server.url), "http", "2026-07-28").await;
    server.stop().await;
}
