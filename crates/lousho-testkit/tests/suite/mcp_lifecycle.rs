//! Connecting, sharing one connect, retrying, closing, lazy reconnects, status.

use super::fixture::{call, fixture, line_count, logged_pids, scratch};
use lousho::Agent;
use lousho::mcp::{ConnectOptions, OnError, ServerStatus};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::{McpServer, connect_mcp};
use serde_json::json;

fn echo_then_done() -> ScriptedModel {
    ScriptedModel::repeating([
        ScriptedTurn::tool_call("fx__echo", json!({"text": "hi"})),
        ScriptedTurn::text("done"),
    ])
}

#[tokio::test]
async fn concurrent_sends_share_one_connect() {
    let dir = scratch("share");
    let log = dir.join("spawns");
    let agent = Agent::builder()
        .model(lousho::model::testing::TestModel::new().call_tools(["fx__echo"]))
        .mcp_server(
            "fx",
            fixture("serve")
                .env("FIXTURE_SPAWN_LOG", log.display().to_string())
                .env("FIXTURE_SLOW_START_MS", "300"),
        )
        .build()
        .unwrap();
    let sends = (0..5).map(|_| {
        let agent = agent.clone();
        async move { agent.send("go").await }
    });
    for reply in futures::future::join_all(sends).await {
        let reply = reply.unwrap();
        assert_eq!(reply.tool_calls.len(), 1);
        assert!(
            !reply.tool_calls[0].output.is_error,
            "{:?}",
            reply.tool_calls
        );
    }
    assert_eq!(
        logged_pids(&log, "serve").len(),
        1,
        "one spawn for five concurrent sends"
    );
    agent.close().await;
}

#[tokio::test]
async fn failed_connect_names_the_server_and_the_next_call_retries() {
    let dir = scratch("retry");
    let gate = dir.join("ready");
    let agent = Agent::builder()
        .model(echo_then_done())
        .mcp_server(
            "fx",
            fixture("serve")
                .env("FIXTURE_EXIT_UNLESS", gate.display().to_string())
                .capture_stderr(4096),
        )
        .build()
        .unwrap();
    let err = agent.send("go").await.unwrap_err().to_string();
    assert!(err.contains("`fx`"), "{err}");
    assert!(
        err.contains("is missing"),
        "stderr tail in the error: {err}"
    );
    std::fs::write(&gate, "").unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.tool_calls[0].output.to_model_text(), "hi");
    agent.close().await;
}

#[tokio::test]
async fn spawn_failure_names_the_server_and_the_command() {
    let err = connect_mcp(
        [("ghost", McpServer::stdio("/nonexistent/mcp-server-xyz"))],
        ConnectOptions::default(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("`ghost`") && err.contains("/nonexistent/mcp-server-xyz"),
        "{err}"
    );
}

#[tokio::test]
async fn agent_ready_connects_every_server_in_parallel() {
    let dir = scratch("parallel");
    let log = dir.join("spawns");
    // Each server answers nothing until all three have been spawned: connected
    // one after the other, the first would wait for the others forever and
    // `ready` would fail at the startup timeout. No timing is assumed.
    let gated = |_: usize| {
        fixture("serve")
            .env("FIXTURE_START_WHEN_SPAWNED", "3")
            .env("FIXTURE_SPAWN_LOG", log.display().to_string())
    };
    let agent = Agent::builder()
        .model("test")
        .mcp_servers((0..3).map(|i| (format!("s{i}"), gated(i))))
        .build()
        .unwrap();
    agent
        .ready()
        .await
        .expect("servers connected one after the other (each waits for all three to be spawned)");
    assert_eq!(
        logged_pids(&log, "serve").len(),
        3,
        "spawn log: {:?}",
        std::fs::read_to_string(&log)
    );
    let tools = agent.tools().unwrap();
    assert!(
        tools.contains("s0__echo") && tools.contains("s2__echo"),
        "{tools:?}"
    );
    agent.close().await;
}

#[tokio::test]
async fn ready_and_close_do_nothing_without_servers() {
    let agent = Agent::builder().model("test").build().unwrap();
    agent.ready().await.unwrap();
    agent.close().await;
    agent.close().await;
}

#[tokio::test]
async fn close_twice_is_fine_and_a_later_call_reconnects() {
    let dir = scratch("reconnect");
    let log = dir.join("spawns");
    let mcp = connect_mcp(
        [(
            "fx",
            fixture("serve").env("FIXTURE_SPAWN_LOG", log.display().to_string()),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let tools = mcp.tools();
    let echo = tools.get("fx__echo").unwrap().clone();
    assert_eq!(call(&echo, json!({"text": "a"})).await.to_model_text(), "a");
    mcp.close().await;
    mcp.close().await;
    assert_eq!(mcp.status()["fx"], ServerStatus::Idle);
    let first = logged_pids(&log, "serve")[0];
    assert_eq!(
        call(&echo, json!({"text": "b"})).await.to_model_text(),
        "b",
        "lazy reconnect"
    );
    assert_eq!(mcp.status()["fx"], ServerStatus::Connected);
    let pids = logged_pids(&log, "serve");
    assert_eq!(pids.len(), 2);
    assert_ne!(pids[1], first);
    mcp.close().await;
}

#[tokio::test]
async fn agent_close_stops_the_server_and_a_later_send_reconnects() {
    let dir = scratch("agentclose");
    let log = dir.join("spawns");
    let agent = Agent::builder()
        .model(echo_then_done())
        .mcp_server(
            "fx",
            fixture("serve").env("FIXTURE_SPAWN_LOG", log.display().to_string()),
        )
        .build()
        .unwrap();
    agent.send("go").await.unwrap();
    let first = logged_pids(&log, "serve")[0];
    agent.close().await;
    agent.close().await;
    assert!(
        !super::fixture::process_exists(first),
        "close stopped and reaped the server"
    );
    agent.send("go").await.unwrap();
    assert_eq!(logged_pids(&log, "serve").len(), 2);
    agent.close().await;
}

#[tokio::test]
async fn without_lazy_a_call_after_close_fails() {
    let mcp = connect_mcp(
        [("fx", fixture("serve"))],
        ConnectOptions::default().lazy(false),
    )
    .await
    .unwrap();
    let echo = mcp.tools().get("fx__echo").unwrap().clone();
    mcp.close().await;
    let out = call(&echo, json!({"text": "b"})).await;
    assert!(out.is_error);
    let text = out.to_model_text();
    assert!(text.contains("`fx`") && text.contains("lazy"), "{text}");
    assert_eq!(mcp.status()["fx"], ServerStatus::Idle);
}

#[tokio::test]
async fn skip_leaves_a_failing_server_out_and_throw_fails() {
    let servers = || {
        [
            ("good", fixture("serve")),
            ("bad", McpServer::stdio("/nonexistent/bad-server")),
        ]
    };
    let mcp = connect_mcp(servers(), ConnectOptions::default().on_error(OnError::Skip))
        .await
        .unwrap();
    let names: Vec<&str> = mcp.server_names().collect();
    assert_eq!(names, ["good"]);
    assert_eq!(mcp.status()["good"], ServerStatus::Connected);
    assert!(mcp.tools().contains("good__echo"));
    mcp.close().await;

    let dir = scratch("throw");
    let log = dir.join("spawns");
    let err = connect_mcp(
        [
            (
                "good",
                fixture("serve").env("FIXTURE_SPAWN_LOG", log.display().to_string()),
            ),
            ("bad", McpServer::stdio("/nonexistent/bad-server")),
        ],
        ConnectOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("`bad`"), "{err}");
    // Throw closed the server that did connect.
    let pid = logged_pids(&log, "serve")[0];
    assert!(
        !super::fixture::process_exists(pid),
        "the good server was stopped"
    );
}

#[tokio::test]
async fn status_reports_connected_failed_and_needs_auth() {
    let mcp = lousho::mcp::McpClient::new(
        [
            ("ok", fixture("serve")),
            (
                "broken",
                fixture("serve").env("FIXTURE_EXIT_UNLESS", "/nonexistent/gate"),
            ),
            (
                "oauth",
                McpServer::http("http://127.0.0.1:9/mcp").oauth(Default::default()),
            ),
        ],
        ConnectOptions::default(),
    );
    assert!(mcp.status().values().all(|s| *s == ServerStatus::Idle));
    assert!(mcp.connect_all().await.is_err());
    let status = mcp.status();
    assert_eq!(status["ok"], ServerStatus::Connected);
    assert!(
        matches!(&status["broken"], ServerStatus::Failed(reason) if reason.contains("`broken`")),
        "{status:?}"
    );
    assert_eq!(status["oauth"], ServerStatus::NeedsAuth);
    mcp.close().await;
    assert_eq!(mcp.status()["ok"], ServerStatus::Idle);
}

#[tokio::test]
async fn stdio_env_is_added_to_the_inherited_environment() {
    let mcp = connect_mcp(
        [(
            "fx",
            fixture("serve").env("LOUSHO_TEST_EXTRA", "extra-value"),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let env = mcp.tools().get("fx__env").unwrap().clone();
    assert_eq!(
        call(&env, json!({"name": "LOUSHO_TEST_EXTRA"}))
            .await
            .to_model_text(),
        "extra-value"
    );
    let path = call(&env, json!({"name": "PATH"})).await.to_model_text();
    assert_eq!(path, std::env::var("PATH").unwrap(), "PATH is inherited");
    mcp.close().await;
}

#[tokio::test]
async fn one_handle_feeds_several_agents() {
    let dir = scratch("shared");
    let log = dir.join("spawns");
    let mcp = connect_mcp(
        [(
            "fx",
            fixture("serve").env("FIXTURE_SPAWN_LOG", log.display().to_string()),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    for _ in 0..2 {
        let agent = Agent::builder()
            .model(echo_then_done())
            .tools(mcp.tools())
            .build()
            .unwrap();
        let reply = agent.send("go").await.unwrap();
        assert_eq!(reply.tool_calls[0].output.to_model_text(), "hi");
    }
    let agent = Agent::builder()
        .model(echo_then_done())
        .tool_source(std::sync::Arc::new(mcp.clone()))
        .build()
        .unwrap();
    agent.send("go").await.unwrap();
    assert_eq!(line_count(&log), 1, "all agents used the one connection");
    mcp.close().await;
}
