//! Interop with pinned third-party servers (installed by `interop/install.sh`):
//! `@modelcontextprotocol/server-everything` over stdio and Streamable HTTP,
//! and a server on the official Python SDK over stdio and Streamable HTTP. Under `CI=true` a
//! missing peer fails the test; elsewhere it is skipped with a note.

use super::fixture::call;
use lousho::Tool;
use lousho::mcp::ConnectOptions;
use lousho::tool::Content;
use lousho::{McpServer, connect_mcp};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

pub(super) fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

/// The peer's path, or `None` (skip) when it is missing outside CI.
pub(super) fn peer(relative: &str) -> Option<PathBuf> {
    let path = interop_dir().join(relative);
    if path.exists() {
        return Some(path);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "interop peer {} is missing: run interop/install.sh",
            path.display()
        );
    }
    eprintln!(
        "skipping: interop peer {} is missing (run interop/install.sh)",
        path.display()
    );
    None
}

pub(super) fn everything() -> Option<PathBuf> {
    peer("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Waits (30 s at most) until `who`, a server process just started, listens
/// on `port`.
async fn wait_listening(port: u16, who: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{who} did not start listening"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn check_everything_tools(mcp: &lousho::mcp::McpClient, server: &str) {
    let tools = mcp.tools();
    let echo = tools
        .get(&format!("{server}__echo"))
        .unwrap_or_else(|| panic!("no echo tool in {tools:?}"));
    assert!(!echo.spec().needs_approval(), "echo is readOnly");
    let out = call(echo, json!({"message": "hello peer"})).await;
    assert!(out.to_model_text().contains("hello peer"), "{out:?}");
    let sum = call(
        tools.get(&format!("{server}__get-sum")).unwrap(),
        json!({"a": 2, "b": 40}),
    )
    .await;
    assert!(sum.to_model_text().contains("42"), "{sum:?}");
    let image = call(
        tools.get(&format!("{server}__get-tiny-image")).unwrap(),
        json!({}),
    )
    .await;
    assert!(
        image
            .content
            .iter()
            .any(|c| matches!(c, Content::Image { .. })),
        "{image:?}"
    );
    let structured = call(
        tools
            .get(&format!("{server}__get-structured-content"))
            .unwrap(),
        json!({"location": "New York"}),
    )
    .await;
    assert!(structured.structured.is_some(), "{structured:?}");
    let bad = call(echo, json!({})).await;
    assert!(bad.is_error, "missing argument → error result: {bad:?}");
    let tool: &std::sync::Arc<dyn Tool> = tools
        .get(&format!("{server}__gzip-file-as-resource"))
        .unwrap();
    assert_eq!(
        tool.spec().metadata["mcp"]["annotations"]["openWorldHint"],
        true
    );
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(index) = everything() else { return };
    let entry = McpServer::stdio("node").args([index.display().to_string(), "stdio".into()]);
    let mcp = connect_mcp([("everything", entry)], ConnectOptions::default())
        .await
        .unwrap();
    check_everything_tools(&mcp, "everything").await;
    mcp.close().await;
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let Some(index) = everything() else { return };
    let port = free_port();
    let mut child = tokio::process::Command::new("node")
        .arg(&index)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    wait_listening(port, "server-everything").await;
    let mcp = connect_mcp([("web", McpServer::http(url))], ConnectOptions::default())
        .await
        .unwrap();
    check_everything_tools(&mcp, "web").await;
    mcp.close().await;
    child.kill().await.unwrap();
}

#[tokio::test]
async fn python_sdk_server_over_stdio() {
    let Some(python) = peer(".venv/bin/python") else {
        return;
    };
    let script = interop_dir().join("python/fastmcp_server.py");
    let entry = McpServer::stdio(python.display().to_string()).arg(script.display().to_string());
    let mcp = connect_mcp([("py", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let tools = mcp.tools();
    let add = tools.get("py__add").unwrap();
    assert_eq!(add.spec().display_name.as_deref(), Some("Add numbers"));
    assert!(!add.spec().needs_approval());
    assert!(
        tools.get("py__shout").unwrap().spec().needs_approval(),
        "no annotations → asks"
    );
    assert!(
        call(add, json!({"a": 2, "b": 3}))
            .await
            .to_model_text()
            .contains('5')
    );
    assert_eq!(
        call(tools.get("py__shout").unwrap(), json!({"text": "hey"}))
            .await
            .to_model_text(),
        "HEY"
    );
    mcp.close().await;
}

/// A TypeScript SDK server that elicits on the session's standalone stream
/// (as the conformance suite's SEP-1034 scenario does) and answers GET late:
/// the connect waits for that stream, so the first call's question arrives.
#[tokio::test]
async fn an_elicitation_on_the_standalone_stream_reaches_the_first_call() {
    let Some(script) = peer("clients/standalone_elicit_server.mjs") else {
        return;
    };
    if peer("node_modules/@modelcontextprotocol/sdk/package.json").is_none() {
        return;
    }
    let mut child = tokio::process::Command::new("node")
        .arg(&script)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the TypeScript server did not start")
        .unwrap()
        .unwrap();
    let url = line.trim_start_matches("listening on ").to_owned();
    let options = ConnectOptions::default().elicitation(
        |request: lousho::mcp::ElicitationRequest| async move {
            lousho::mcp::ElicitationResponse::Accept(request.defaults())
        },
    );
    let mcp = connect_mcp([("ts", McpServer::http(url))], options)
        .await
        .unwrap();
    let ask = mcp.tools().get("ts__ask").unwrap().clone();
    let out = tokio::time::timeout(Duration::from_secs(10), call(&ask, json!({})))
        .await
        .expect("the elicitation was lost: the call never ended");
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.to_model_text(), r#"accept: {"name":"John Doe"}"#);
    mcp.close().await;
    child.kill().await.unwrap();
}

/// The official Python SDK's server over Streamable HTTP answers a call on an
/// SSE stream that first carries progress and an elicitation: the call goes
/// through rmcp's service (its request id is one of rmcp's), the
/// elicitation reaches the handler and its answer the tool, the progress
/// reaches the hook, and the result ends the call.
#[tokio::test]
async fn python_sdk_server_over_streamable_http_streams_progress_and_elicits_mid_call() {
    let Some(python) = peer(".venv/bin/python") else {
        return;
    };
    let port = free_port();
    let script = interop_dir().join("python/fastmcp_server.py");
    let mut child = tokio::process::Command::new(python)
        .arg(script)
        .args(["http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    wait_listening(port, "the Python server").await;
    // How many "answered" progress notifications the hook has seen.
    let (answered, mut answers) = tokio::sync::watch::channel(0usize);
    let options = ConnectOptions::default()
        .elicitation(|request: lousho::mcp::ElicitationRequest| async move {
            lousho::mcp::ElicitationResponse::Accept(request.defaults())
        })
        .on_progress(move |p| {
            if p.message.as_deref() == Some("answered") {
                answered.send_modify(|n| *n += 1);
            }
        });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mcp = connect_mcp([("py", McpServer::http(url))], options)
        .await
        .unwrap();
    let greet = mcp.tools().get("py__greet").unwrap().clone();
    for _ in 0..2 {
        let out = tokio::time::timeout(Duration::from_secs(20), call(&greet, json!({})))
            .await
            .expect("the call never ended");
        assert!(!out.is_error, "{out:?}");
        let text = out.to_model_text();
        assert!(text.starts_with("hello Ada (request "), "{text}");
        let id: i64 = text
            .trim_start_matches("hello Ada (request ")
            .trim_end_matches(')')
            .parse()
            .unwrap_or_else(|_| panic!("no request id in {text}"));
        assert!(id < 1 << 32, "the call did not take rmcp's path (id {id})");
    }
    // Each call's progress reached the hook (rmcp runs it on its own task,
    // so the last one may land just after the result).
    tokio::time::timeout(Duration::from_secs(10), answers.wait_for(|n| *n == 2))
        .await
        .expect("the progress notifications never reached the hook")
        .unwrap();
    mcp.close().await;
    child.kill().await.unwrap();
}
