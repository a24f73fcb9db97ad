//! What the `connect_mcp` handle promises, against the fixture server and a
//! server on the official Python SDK: its tools keep their connection when the
//! handle is dropped (`let tools = connect_mcp(..).await?.tools();`), `close()`
//! still stops them and no server outlives the last holder; `lazy: false`
//! holds whichever way the tools reach an agent; a server `OnError::Skip` left
//! out stays in `status()` as `Failed(reason)`.

use super::fixture::{call, fixture, logged_pids, processes_tagged, scratch, unique_tag};
use lousho::Agent;
use lousho::mcp::{ConnectOptions, OnError, ServerStatus};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::{McpServer, connect_mcp};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A server on the official Python SDK (`interop/python/fastmcp_server.py`,
/// tools `add` and `shout`), tagged so its process can be found; `None`
/// (skip) when the venv is missing outside CI.
pub fn python_server(tag: &str) -> Option<McpServer> {
    let python = super::peers::python()?;
    let script = super::peers::repo_root().join("interop/python/fastmcp_server.py");
    Some(
        McpServer::stdio(python.display().to_string())
            .args([script.display().to_string(), tag.to_owned()]),
    )
}

/// Waits (bounded) until no process carries `tag`.
async fn gone(tag: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if processes_tagged(tag).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

fn calls(tool: &str, input: Value) -> ScriptedModel {
    ScriptedModel::repeating([
        ScriptedTurn::tool_call(tool, input),
        ScriptedTurn::text("done"),
    ])
}

#[tokio::test]
async fn tools_keep_working_after_the_handle_is_dropped_and_stop_with_the_last_one() {
    let tag = unique_tag("handle-drop");
    // The page's `const { tools } = await connectMcp(...)`, as a reader writes it.
    let tools = connect_mcp(
        [("fx", fixture("serve").arg(&tag))],
        ConnectOptions::default(),
    )
    .await
    .unwrap()
    .tools();
    let echo = tools.get("fx__echo").unwrap().clone();
    assert_eq!(
        call(&echo, json!({"text": "still here"}))
            .await
            .to_model_text(),
        "still here"
    );
    let agent = Agent::builder()
        .model(calls("fx__echo", json!({"text": "hi"})))
        .tools(tools)
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(
        reply.tool_calls[0].output.to_model_text(),
        "hi",
        "{:?}",
        reply.tool_calls
    );
    assert!(
        !processes_tagged(&tag).is_empty(),
        "the server runs while tools are held"
    );
    drop(agent);
    drop(echo);
    assert!(
        gone(&tag).await,
        "the server stopped with the last tool: {:?}",
        processes_tagged(&tag)
    );
}

#[tokio::test]
async fn close_stops_the_server_of_tools_that_outlive_the_handle() {
    let tag = unique_tag("handle-close");
    let log = scratch("handle-close").join("spawns");
    let mcp = connect_mcp(
        [(
            "fx",
            fixture("serve")
                .arg(&tag)
                .env("FIXTURE_SPAWN_LOG", log.display().to_string()),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let echo = mcp.tools().get("fx__echo").unwrap().clone();
    mcp.close().await;
    assert!(
        gone(&tag).await,
        "close stopped the server although a tool is held"
    );
    drop(mcp);
    // Lazy (the default): the tool reconnects by itself, handle or not.
    assert_eq!(
        call(&echo, json!({"text": "back"})).await.to_model_text(),
        "back"
    );
    assert_eq!(logged_pids(&log, "serve").len(), 2);
    drop(echo);
    assert!(
        gone(&tag).await,
        "the reconnected server stopped with the last tool"
    );
}

#[tokio::test]
async fn without_lazy_an_agent_with_the_handle_as_tool_source_does_not_reconnect_after_close() {
    let log = scratch("lazy-source").join("spawns");
    let mcp = connect_mcp(
        [(
            "fx",
            fixture("serve").env("FIXTURE_SPAWN_LOG", log.display().to_string()),
        )],
        ConnectOptions::default().lazy(false),
    )
    .await
    .unwrap();
    let by_source = Agent::builder()
        .model(calls("fx__echo", json!({"text": "hi"})))
        .tool_source(Arc::new(mcp.clone()))
        .build()
        .unwrap();
    let by_value = Agent::builder()
        .model(calls("fx__echo", json!({"text": "hi"})))
        .tools(mcp.tools())
        .build()
        .unwrap();
    assert_eq!(
        by_source.send("go").await.unwrap().tool_calls[0]
            .output
            .to_model_text(),
        "hi"
    );
    mcp.close().await;
    for agent in [&by_source, &by_value] {
        let reply = agent.send("go").await.unwrap();
        let out = &reply.tool_calls[0].output;
        assert!(out.is_error, "{out:?}");
        let text = out.to_model_text();
        assert!(text.contains("`fx`") && text.contains("lazy"), "{text}");
    }
    assert_eq!(logged_pids(&log, "serve").len(), 1, "nothing reconnected");
    assert_eq!(mcp.status()["fx"], ServerStatus::Idle);
    // The agent's own close() is the handle's close (same servers).
    by_source.close().await;
    assert!(
        by_source.send("go").await.unwrap().tool_calls[0]
            .output
            .is_error
    );
    assert_eq!(logged_pids(&log, "serve").len(), 1);
}

#[tokio::test]
async fn without_lazy_an_agent_with_the_handle_as_tool_source_does_not_reconnect_after_a_drop() {
    let log = scratch("lazy-drop").join("spawns");
    let mcp = connect_mcp(
        [(
            "fx",
            fixture("serve").env("FIXTURE_SPAWN_LOG", log.display().to_string()),
        )],
        ConnectOptions::default().lazy(false),
    )
    .await
    .unwrap();
    let agent = Agent::builder()
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("fx__crash", json!({})),
            ScriptedTurn::text("crashed"),
            ScriptedTurn::tool_call("fx__echo", json!({"text": "hi"})),
            ScriptedTurn::text("done"),
        ]))
        .tool_source(Arc::new(mcp.clone()))
        .build()
        .unwrap();
    let crashed = agent.send("crash").await.unwrap();
    assert!(
        crashed.tool_calls[0].output.is_error,
        "{:?}",
        crashed.tool_calls
    );
    let reply = agent.send("go").await.unwrap();
    let out = &reply.tool_calls[0].output;
    assert!(
        out.is_error && out.to_model_text().contains("lazy"),
        "{out:?}"
    );
    assert_eq!(logged_pids(&log, "serve").len(), 1, "nothing reconnected");
    mcp.close().await;
}

#[tokio::test]
async fn a_skipped_server_stays_in_status_as_failed() {
    let mcp = connect_mcp(
        [
            ("good", fixture("serve")),
            ("bad", McpServer::stdio("/nonexistent/bad-server")),
        ],
        ConnectOptions::default().on_error(OnError::Skip),
    )
    .await
    .unwrap();
    let status = mcp.status();
    assert_eq!(status["good"], ServerStatus::Connected);
    assert!(
        matches!(&status["bad"], ServerStatus::Failed(reason) if reason.contains("`bad`") && reason.contains("/nonexistent/bad-server")),
        "{status:?}"
    );
    assert!(mcp.tools().names().all(|n| n.starts_with("good__")));
    // An agent's ready() does not try it again, nor fail because of it.
    let agent = Agent::builder()
        .model("test")
        .tool_source(Arc::new(mcp.clone()))
        .build()
        .unwrap();
    agent.ready().await.unwrap();
    assert!(matches!(mcp.status()["bad"], ServerStatus::Failed(_)));
    mcp.close().await;
    assert!(matches!(mcp.status()["bad"], ServerStatus::Failed(_)));
}

#[tokio::test]
async fn python_sdk_tools_outlive_the_handle_and_stop_with_the_last_one() {
    let tag = unique_tag("py-handle");
    let Some(entry) = python_server(&tag) else {
        return;
    };
    let tools = connect_mcp([("py", entry)], ConnectOptions::default())
        .await
        .unwrap()
        .tools();
    let agent = Agent::builder()
        .model(calls("py__add", json!({"a": 2, "b": 3})))
        .tools(tools)
        .build()
        .unwrap();
    let reply = agent.send("add").await.unwrap();
    assert_eq!(
        reply.tool_calls[0].output.to_model_text(),
        "5",
        "{:?}",
        reply.tool_calls
    );
    drop(agent);
    assert!(
        gone(&tag).await,
        "the Python server stopped with the last tool"
    );
}

#[tokio::test]
async fn python_sdk_without_lazy_the_tool_source_does_not_reconnect() {
    let tag = unique_tag("py-lazy");
    let Some(entry) = python_server(&tag) else {
        return;
    };
    let mcp = connect_mcp([("py", entry)], ConnectOptions::default().lazy(false))
        .await
        .unwrap();
    let agent = Agent::builder()
        .model(calls("py__add", json!({"a": 2, "b": 3})))
        .tool_source(Arc::new(mcp.clone()))
        .build()
        .unwrap();
    assert_eq!(
        agent.send("go").await.unwrap().tool_calls[0]
            .output
            .to_model_text(),
        "5"
    );
    agent.close().await;
    assert!(gone(&tag).await);
    let reply = agent.send("go").await.unwrap();
    let out = &reply.tool_calls[0].output;
    assert!(
        out.is_error && out.to_model_text().contains("`py`"),
        "{out:?}"
    );
    assert!(processes_tagged(&tag).is_empty(), "no new Python server");
    assert_eq!(mcp.connect_attempts("py").unwrap(), 1);
}

#[tokio::test]
async fn python_sdk_a_skipped_server_stays_in_status_as_failed() {
    let tag = unique_tag("py-skip");
    let Some(entry) = python_server(&tag) else {
        return;
    };
    let mcp = connect_mcp(
        [
            ("py", entry),
            ("gone", McpServer::stdio("/nonexistent/py-server")),
        ],
        ConnectOptions::default().on_error(OnError::Skip),
    )
    .await
    .unwrap();
    let status = mcp.status();
    assert_eq!(status["py"], ServerStatus::Connected);
    assert!(
        matches!(&status["gone"], ServerStatus::Failed(r) if r.contains("`gone`")),
        "{status:?}"
    );
    assert!(mcp.tools().contains("py__add"));
    mcp.close().await;
}
