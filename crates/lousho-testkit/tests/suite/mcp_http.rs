//! Streamable HTTP servers: tools, static headers, failures.

use super::fixture::call;
use lousho::mcp::{ConnectOptions, McpError, ServerStatus};
use lousho::{McpServer, connect_mcp};
use lousho_testkit::mcp_fixture::{Fixture, serve_http, serve_http_at};
use serde_json::json;

#[tokio::test]
async fn http_tools_work_and_static_headers_are_sent_on_every_request() {
    for stateless in [false, true] {
        let server = serve_http(stateless).await;
        let mcp = connect_mcp(
            [(
                "web",
                McpServer::http(&server.url)
                    .header("Authorization", "Bearer tok-123")
                    .header("X-Tenant", "acme"),
            )],
            ConnectOptions::default(),
        )
        .await
        .unwrap();
        let tools = mcp.tools();
        assert!(tools.contains("web__echo"));
        assert_eq!(
            call(
                tools.get("web__echo").unwrap(),
                json!({"text": "over http"})
            )
            .await
            .to_model_text(),
            "over http"
        );
        let out = call(tools.get("web__mixed").unwrap(), json!({})).await;
        assert_eq!(out.structured, Some(json!({"answer": 42})));
        let seen = server.seen_headers.lock().unwrap().clone();
        assert!(seen.len() >= 3);
        for h in &seen {
            if h.get("content-type").is_some_and(|c| c.contains("json")) {
                assert_eq!(
                    h.get("authorization").map(String::as_str),
                    Some("Bearer tok-123"),
                    "{h:?}"
                );
                assert_eq!(h.get("x-tenant").map(String::as_str), Some("acme"));
            }
        }
        mcp.close().await;
        server.stop().await;
    }
}

#[tokio::test]
async fn http_list_changed_refreshes_the_tools() {
    let server = serve_http(false).await;
    let mcp = connect_mcp(
        [("web", McpServer::http(&server.url))],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    call(
        mcp.tools().get("web__add_tool").unwrap(),
        json!({"text": "fresh"}),
    )
    .await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while !mcp.tools().contains("web__fresh") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no refresh over HTTP"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    mcp.close().await;
    server.stop().await;
}

#[tokio::test]
async fn an_unreachable_http_server_is_an_error_naming_the_server() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let err = connect_mcp(
        [(
            "gone",
            McpServer::http(format!("http://127.0.0.1:{port}/mcp")),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::Http { .. }), "{err}");
    assert!(err.to_string().contains("`gone`"), "{err}");
}

#[tokio::test]
async fn an_http_error_status_is_reported() {
    let server = serve_http(false).await;
    let wrong = server.url.replace("/mcp", "/nothing-here");
    let err = connect_mcp(
        [("lost", McpServer::http(wrong))],
        ConnectOptions::default(),
    )
    .await
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("`lost`") && msg.contains("404"), "{msg}");
    if let McpError::Http { status, .. } = &err {
        assert_eq!(*status, Some(404));
    }
    server.stop().await;
}

#[tokio::test]
async fn oauth_entries_without_a_token_store_need_auth() {
    let entry: McpServer =
        serde_json::from_value(json!({"url": "http://127.0.0.1:9/mcp", "oauth": {"redirectUri": "http://127.0.0.1:8976/cb"}})).unwrap();
    let mcp = lousho::mcp::McpClient::new([("secure", entry)], ConnectOptions::default());
    let err = mcp.connect_all().await.unwrap_err();
    assert!(matches!(err, McpError::TokensRequired { .. }));
    assert!(err.to_string().contains("ConnectOptions::tokens"), "{err}");
    assert_eq!(mcp.status()["secure"], ServerStatus::NeedsAuth);
}

/// A server that restarted knows none of its sessions: it answers the next
/// call with 404, and rmcp sets up a new session and sends it again: the
/// call works.
#[tokio::test]
async fn a_restarted_http_server_is_reconnected_to() {
    let server = serve_http(false).await;
    let url = server.url.clone();
    let mcp = connect_mcp([("web", McpServer::http(&url))], ConnectOptions::default())
        .await
        .unwrap();
    let echo = mcp.tools().get("web__echo").unwrap().clone();
    let before = call(&echo, json!({"text": "before"})).await;
    assert_eq!(before.to_model_text(), "before");
    server.stop().await;
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let restarted = serve_http_at(Fixture::new(), false, &addr).await;
    let first = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        call(&echo, json!({"text": "after"})),
    )
    .await
    .expect("the call after the restart hung");
    assert!(!first.is_error, "{}", first.to_model_text());
    assert_eq!(first.to_model_text(), "after");
    mcp.close().await;
    restarted.stop().await;
}
