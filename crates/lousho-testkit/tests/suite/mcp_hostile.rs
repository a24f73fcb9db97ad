//! A hostile or broken server (#12 items 7 and 12): a reply to a call that
//! cannot be read fails that call at once, over stdio and HTTP; a flood of
//! server→client pings does not make the client queue without bound.

use super::fixture::{call, fixture};
use super::mcp_logging::capture_logs;
use lousho::McpServer;
use lousho::connect_mcp;
use lousho::mcp::ConnectOptions;
use lousho_testkit::hostile::{HttpReplies, MALFORMED_TOOLS, serve_http};
use serde_json::json;
use std::time::{Duration, Instant};

/// What each of [`MALFORMED_TOOLS`] is told.
const REASONS: &[&str] = &[
    "recursion limit exceeded",
    "neither `result` nor `error`",
    "`error` is not a JSON-RPC error object",
    "number out of range",
];

/// Far below the call timeout: a reply that was dropped would wait it out.
const AT_ONCE: Duration = Duration::from_secs(10);

async fn every_malformed_reply_fails_its_call_at_once(entry: McpServer, reasons: &[&str]) {
    let mcp = connect_mcp(
        [("bad", entry.call_timeout(Duration::from_secs(120)))],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let tools = mcp.tools();
    for (tool, reason) in MALFORMED_TOOLS.iter().zip(reasons) {
        let started = Instant::now();
        let out = call(tools.get(&format!("bad__{tool}")).unwrap(), json!({})).await;
        let text = out.to_model_text();
        assert!(out.is_error, "{tool}: {text}");
        assert!(
            text.contains(&format!(
                "MCP server `bad` sent an invalid response to `{tool}`: "
            )) && text.contains(reason),
            "{tool}: {text}"
        );
        assert!(
            started.elapsed() < AT_ONCE,
            "{tool} took {:?}",
            started.elapsed()
        );
    }
    // The connection is still good.
    let out = call(tools.get("bad__echo").unwrap(), json!({})).await;
    assert_eq!(out.to_model_text(), "fine", "{out:?}");
    mcp.close().await;
}

#[tokio::test]
async fn malformed_replies_over_stdio_fail_their_call_at_once() {
    every_malformed_reply_fails_its_call_at_once(fixture("malformed"), REASONS).await;
}

#[tokio::test]
async fn malformed_replies_in_sse_events_fail_their_call_at_once() {
    let url = serve_http(HttpReplies::Sse).await;
    every_malformed_reply_fails_its_call_at_once(McpServer::http(&url), REASONS).await;
}

#[tokio::test]
async fn malformed_json_bodies_fail_their_call_at_once() {
    let url = serve_http(HttpReplies::Json).await;
    every_malformed_reply_fails_its_call_at_once(McpServer::http(&url), REASONS).await;
}

#[tokio::test]
async fn a_ping_flood_is_slowed_down_not_queued() {
    let mcp = connect_mcp(
        [(
            "flood",
            fixture("ping-flood").call_timeout(Duration::from_secs(120)),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let tools = mcp.tools();
    let out = call(
        tools.get("flood__flood").unwrap(),
        json!({"count": 100_000}),
    )
    .await;
    let text = out.to_model_text();
    let max: usize = text
        .strip_prefix("max_unanswered=")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    // The client holds at most 64 open; the pipes and read buffers between
    // the two hold a few thousand more pings and answers.
    assert!(max < 10_000, "{max} pings were left unanswered at once");
    let out = call(tools.get("flood__echo").unwrap(), json!({})).await;
    assert_eq!(out.to_model_text(), "fine", "{out:?}");
    mcp.close().await;
}

#[tokio::test]
async fn answers_left_for_a_server_that_exited_are_no_error_lines() {
    let (logs, _guard) = capture_logs("warn");
    let mcp = connect_mcp(
        [(
            "flood",
            fixture("ping-flood").call_timeout(Duration::from_secs(120)),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let tools = mcp.tools();
    let out = call(
        tools.get("flood__flood").unwrap(),
        json!({"count": 100_000, "exit": true}),
    )
    .await;
    assert!(
        out.to_model_text().starts_with("max_unanswered="),
        "{out:?}"
    );
    mcp.close().await;
    let logs = logs.text();
    let errors: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("ERROR") || l.contains("Broken pipe"))
        .collect();
    assert!(
        errors.is_empty(),
        "{} error lines, the first: {:?}",
        errors.len(),
        errors.first()
    );
}
