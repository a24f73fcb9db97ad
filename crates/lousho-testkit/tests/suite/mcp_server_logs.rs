//! A server's log messages (`notifications/message`) become `tracing`
//! events under the target `lousho::mcp::server_log`, naming the server,
//! at the level matching the MCP one; the entry's `logLevel` is sent as
//! `logging/setLevel` (2025-11-25) or in each call's `_meta` (2026-07-28).
//! Against a server on the official Python SDK.

use super::fixture::call;
use super::mcp_logging::capture_logs;
use super::peers::{python, repo_root};
use lousho::mcp::ConnectOptions;
use lousho::tool::LogLevel;
use lousho::{McpServer, connect_mcp};
use serde_json::json;
use std::time::Duration;

pub(super) fn features_script() -> String {
    repo_root()
        .join("interop/python/client_features_server.py")
        .display()
        .to_string()
}

/// Calls the `log` tool of a Python server (`args` after the script) with
/// `level` asked, and returns what the subscriber saw.
async fn logs_of(extra: &[&str], level: Option<LogLevel>) -> String {
    let python = python().unwrap();
    let (logs, _guard) = capture_logs("lousho::mcp::server_log=debug");
    let mut entry = McpServer::stdio(python.display().to_string())
        .args(std::iter::once(features_script()).chain(extra.iter().map(|a| a.to_string())));
    if let Some(level) = level {
        entry = entry.log_level(level);
    }
    let mcp = connect_mcp([("py", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let tool = mcp.tools().get("py__log").unwrap().clone();
    let out = tokio::time::timeout(Duration::from_secs(30), call(&tool, json!({"text": "hi"})))
        .await
        .expect("the call never ended");
    assert!(!out.is_error, "{out:?}");
    mcp.close().await;
    logs.text()
}

#[tokio::test]
async fn a_servers_log_messages_are_tracing_events_naming_it_at_the_asked_level() {
    if python().is_none() {
        return;
    }
    let logs = logs_of(&[], Some(LogLevel::Warning)).await;
    // `logging/setLevel warning` was sent: no debug or info lines.
    let line = logs
        .lines()
        .find(|l| l.contains("warning line: hi"))
        .unwrap_or_else(|| panic!("no warning line: {logs}"));
    assert!(line.contains(" WARN "), "{line}");
    assert!(line.contains("lousho::mcp::server_log"), "{line}");
    assert!(
        line.contains("server=\"py\"") || line.contains("server=py"),
        "{line}"
    );
    assert!(line.contains("features"), "the logger: {line}");
    let error = logs.lines().find(|l| l.contains("error line: hi")).unwrap();
    assert!(error.contains("ERROR"), "{error}");
    assert!(!logs.contains("debug line"), "{logs}");
    assert!(!logs.contains("info line"), "{logs}");

    // Without `logLevel` nothing is asked: the server sends what it likes.
    let logs = logs_of(&[], None).await;
    let debug = logs.lines().find(|l| l.contains("debug line: hi")).unwrap();
    assert!(debug.contains("DEBUG"), "{debug}");
    let info = logs.lines().find(|l| l.contains("info line: hi")).unwrap();
    assert!(info.contains(" INFO "), "{info}");
}

#[tokio::test]
async fn a_2026_server_gets_the_level_in_each_calls_meta() {
    if python().is_none() {
        return;
    }
    let logs = logs_of(&["--only-2026"], Some(LogLevel::Info)).await;
    assert!(logs.contains("info line: hi"), "{logs}");
    assert!(logs.contains("error line: hi"), "{logs}");
    assert!(!logs.contains("debug line"), "{logs}");
    // Without it, a 2026-07-28 server sends none.
    let logs = logs_of(&["--only-2026"], None).await;
    assert!(!logs.contains("line: hi"), "{logs}");
}
