//! lousho's MCP client and calls that become tasks (the
//! `io.modelcontextprotocol/tasks` extension, SEP-2663): created, polled to
//! their result, status messages shown through the progress hook, and
//! cancelled with the run.
//!
//! The peer is lousho's own server (`lousho-test-server`) over stdio: its
//! agent tool, and a direct tool that opted in (`long_steps`), answer a
//! client with the extension with a task. No third-party server to hand
//! speaks SEP-2663 tasks: the official Python SDK 2.3.0 and TypeScript SDK
//! have none, and server-everything's `simulate-research-query`
//! (`taskSupport: "required"`) is the 2025-11-25 experimental form
//! (SEP-1686, `tasks/result`), which rmcp 3 no longer speaks.

use super::peers::test_server;
use lousho::mcp::{ConnectOptions, McpClient};
use lousho::tool::{ToolContext, ToolError};
use lousho::{McpServer, connect_mcp};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// Connects the test server (with `long_steps`); the progress hook's
/// messages land in the returned list.
async fn connect(tasks: bool) -> (McpClient, Arc<Mutex<Vec<String>>>) {
    let messages = Arc::new(Mutex::new(Vec::new()));
    let seen = messages.clone();
    let options = ConnectOptions::default().on_progress(move |p| {
        if let Some(m) = p.message {
            seen.lock().unwrap().push(m);
        }
    });
    let entry = McpServer::stdio(test_server().to_string_lossy())
        .arg("--task-tool")
        .tasks(tasks);
    let mcp = connect_mcp([("served", entry)], options).await.unwrap();
    (mcp, messages)
}

async fn call(mcp: &McpClient, tool: &str, input: Value, ctx: ToolContext) -> String {
    let tool = mcp.tools().get(tool).unwrap().clone();
    let out = tokio::time::timeout(LIMIT, tool.call(input, ctx))
        .await
        .expect("the call never ended")
        .unwrap();
    assert!(!out.is_error, "{out:?}");
    out.to_model_text()
}

fn seen(messages: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    messages.lock().unwrap().clone()
}

#[tokio::test]
async fn a_served_agents_call_runs_as_a_task_to_its_result_and_is_cancelled_with_the_run() {
    let (mcp, messages) = connect(true).await;

    // Polled to its result (its steps may fall between two polls).
    let ctx = ToolContext::new("c1");
    let state = ctx.state.clone();
    let text = call(
        &mcp,
        "served__test-agent",
        json!({"message": "lookup order 42"}),
        ctx,
    )
    .await;
    assert_eq!(
        text,
        "Tool results: lookup_order: {\"id\":\"42\",\"status\":\"shipped\"}"
    );
    let shown = seen(&messages);
    assert!(
        shown.iter().any(|m| m == "the agent is working"),
        "the task's status messages reach the hook: {shown:?}"
    );
    assert_eq!(
        state.get("mcp.task.c1"),
        Some(Value::Null),
        "a finished task is forgotten"
    );

    // A direct tool that opted in: its progress is the task's status.
    let text = call(
        &mcp,
        "served__long_steps",
        json!({"steps": 12}),
        ToolContext::new("c2"),
    )
    .await;
    assert_eq!(text, "done after 12 steps");
    let shown = seen(&messages);
    assert!(
        shown
            .iter()
            .any(|m| m.starts_with("step ") && m.ends_with("/12)")),
        "the tool's progress shows as the task's status: {shown:?}"
    );

    // Cancelled with the run: the served run stops. Its steps came as
    // status messages.
    let slow = mcp.tools().get("served__test-agent").unwrap().clone();
    let ctx = ToolContext::new("c3");
    let cancel = ctx.cancel.clone();
    let state = ctx.state.clone();
    let running =
        tokio::spawn(async move { slow.call(json!({"message": "please be slow"}), ctx).await });
    tokio::time::timeout(LIMIT, async {
        while !seen(&messages).iter().any(|m| m.contains("slow_wait")) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the slow run never called slow_wait");
    let kept = state
        .get("mcp.task.c3")
        .expect("the task id is in the run state");
    assert_eq!(kept["tool"], "test-agent", "{kept}");
    assert!(kept["taskId"].is_string(), "{kept}");
    cancel.cancel();
    let end = tokio::time::timeout(LIMIT, running).await.unwrap().unwrap();
    assert!(matches!(end, Err(ToolError::Cancelled)), "{end:?}");
    tokio::time::timeout(LIMIT, async {
        loop {
            let status = call(
                &mcp,
                "served__cancel_status",
                json!({}),
                ToolContext::new("s"),
            )
            .await;
            if status == "{\"cancelled\":1}" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the served run's tool never saw its cancellation");
    mcp.close().await;
}

#[tokio::test]
async fn with_tasks_off_the_call_waits_for_its_result() {
    let (mcp, messages) = connect(false).await;
    let text = call(
        &mcp,
        "served__test-agent",
        json!({"message": "lookup order 42"}),
        ToolContext::new("c1"),
    )
    .await;
    assert_eq!(
        text,
        "Tool results: lookup_order: {\"id\":\"42\",\"status\":\"shipped\"}"
    );
    let shown = seen(&messages);
    assert!(
        !shown.iter().any(|m| m == "the agent is working"),
        "no task: {shown:?}"
    );
    mcp.close().await;
}
