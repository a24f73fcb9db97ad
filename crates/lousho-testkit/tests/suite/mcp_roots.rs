//! Roots (issue 31): the client's roots and a server's own, listed by the
//! server — server-everything's `get-roots-list` (2025-11-25, a request of
//! its own), the Python SDK's resolver (2026-07-28, an input-required
//! round) — and `set_roots` telling connected servers they changed.

use super::fixture::call;
use super::mcp_interop::everything;
use super::peers::{python, repo_root};
use lousho::mcp::{ConnectOptions, McpRoot};
use lousho::{McpServer, connect_mcp};
use serde_json::json;
use std::time::Duration;

/// A fresh folder of this test run.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("roots-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `dir`'s `file://` URI.
fn uri(dir: &std::path::Path) -> String {
    McpRoot::folder(dir).uri
}

#[tokio::test]
async fn server_everything_lists_the_clients_and_its_own_roots_and_hears_of_changes() {
    let Some(index) = everything() else { return };
    let workspace = scratch("workspace");
    let data = scratch("data");
    let entry = McpServer::stdio("node")
        .args([index.display().to_string(), "stdio".into()])
        .roots([&data]);
    let mcp = connect_mcp(
        [("ev", entry)],
        ConnectOptions::default().roots([McpRoot::folder(&workspace)]),
    )
    .await
    .unwrap();
    let tool = mcp
        .tools()
        .get("ev__get-roots-list")
        .expect("registered only for clients that declare roots")
        .clone();
    let out = call(&tool, json!({})).await;
    let text = out.to_model_text();
    assert!(text.contains("(2 total)"), "{text}");
    let (first, second) = (uri(&workspace), uri(&data));
    assert!(
        text.find(&first).unwrap() < text.find(&second).unwrap(),
        "the client's roots first: {text}"
    );

    // New roots: the server hears `roots/list_changed` and asks again (its
    // tool shows what it last heard, so ask until it shows the new ones).
    let other = scratch("other");
    mcp.set_roots([McpRoot::folder(&other).with_name("other")])
        .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let text = loop {
        let text = call(&tool, json!({})).await.to_model_text();
        if text.contains(&uri(&other)) {
            break text;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server never asked for the new roots: {text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(text.contains("other"), "the name: {text}");
    assert!(!text.contains(&first), "{text}");
    assert!(text.contains(&second), "its own stay: {text}");
    mcp.close().await;
}

#[tokio::test]
async fn a_2026_server_gets_the_roots_in_an_input_round() {
    let Some(python) = python() else { return };
    let script = repo_root().join("interop/python/rounds_server.py");
    let entry = McpServer::stdio(python.display().to_string())
        .args([script.display().to_string(), "--only-2026".into()]);
    let workspace = scratch("workspace-2026");
    let mcp = connect_mcp(
        [("py", entry)],
        ConnectOptions::default().roots([McpRoot::folder(&workspace)]),
    )
    .await
    .unwrap();
    let tool = mcp.tools().get("py__roots").unwrap().clone();
    let out = tokio::time::timeout(Duration::from_secs(30), call(&tool, json!({})))
        .await
        .expect("the call never ended");
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.to_model_text(), uri(&workspace));
    mcp.close().await;
}
