//! lousho as the client of a 2026-07-28 server that asks for input in
//! rounds (`input_required`): the official Python SDK's `MCPServer` with
//! resolvers, refusing the `initialize` handshake so the connection speaks
//! only 2026-07-28. Each question reaches the same handler a 2025-11-25
//! server's request does, and the call is retried with the answer.

use super::fixture::call;
use super::peers::{python, repo_root};
use lousho::mcp::{ConnectOptions, ElicitationRequest, ElicitationResponse};
use lousho::{McpServer, connect_mcp};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn script() -> String {
    repo_root()
        .join("interop/python/rounds_server.py")
        .display()
        .to_string()
}

/// An elicitation handler that answers `name` and records the questions.
fn answering(name: &'static str) -> (ConnectOptions, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let options = ConnectOptions::default().elicitation(move |request: ElicitationRequest| {
        seen.lock().unwrap().push(request.message.clone());
        async move {
            let mut content = request.defaults();
            content.insert("name".into(), json!(name));
            ElicitationResponse::Accept(content)
        }
    });
    (options, asked)
}

#[tokio::test]
async fn a_2026_server_over_stdio_asks_in_a_round_and_gets_the_handlers_answer() {
    let Some(python) = python() else { return };
    let entry =
        McpServer::stdio(python.display().to_string()).args([script(), "--only-2026".into()]);
    let (options, asked) = answering("Grace");
    let mcp = connect_mcp([("py", entry)], options).await.unwrap();
    let greet = mcp.tools().get("py__greet").unwrap().clone();
    let out = tokio::time::timeout(Duration::from_secs(30), call(&greet, json!({})))
        .await
        .expect("the call never ended");
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.to_model_text(), "hello Grace");
    assert_eq!(*asked.lock().unwrap(), ["Who is there?"]);
    mcp.close().await;
}

#[tokio::test]
async fn without_a_handler_the_round_is_declined_and_the_call_fails_in_words() {
    let Some(python) = python() else { return };
    let entry =
        McpServer::stdio(python.display().to_string()).args([script(), "--only-2026".into()]);
    let mcp = connect_mcp([("py", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let greet = mcp.tools().get("py__greet").unwrap().clone();
    let out = tokio::time::timeout(Duration::from_secs(30), call(&greet, json!({})))
        .await
        .expect("the call never ended");
    assert!(out.is_error, "{out:?}");
    // Not declared, so the server refuses to ask and says why.
    assert!(out.to_model_text().contains("elicitation"), "{out:?}");
    mcp.close().await;
}

#[tokio::test]
async fn a_2026_server_over_http_asks_in_a_round() {
    let Some(python) = python() else { return };
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut child = tokio::process::Command::new(python)
        .args([
            script(),
            "--only-2026".into(),
            "http".into(),
            port.to_string(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the Python server did not start")
        .unwrap()
        .unwrap();
    let url = line.trim_start_matches("listening on ").to_owned();
    // The line comes before uvicorn binds: wait for the port.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(tokio::time::Instant::now() < deadline, "not listening");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (options, asked) = answering("Linus");
    let mcp = connect_mcp([("py", McpServer::http(url))], options)
        .await
        .unwrap();
    let greet = mcp.tools().get("py__greet").unwrap().clone();
    for _ in 0..2 {
        let out = tokio::time::timeout(Duration::from_secs(30), call(&greet, json!({})))
            .await
            .expect("the call never ended");
        assert!(!out.is_error, "{out:?}");
        assert_eq!(out.to_model_text(), "hello Linus");
    }
    assert_eq!(asked.lock().unwrap().len(), 2, "asked once per call");
    mcp.close().await;
    child.kill().await.unwrap();
}
