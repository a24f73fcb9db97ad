//! Timeouts, cancellation, crashes, garbage and slow starts: errors are
//! clear and bounded; nothing hangs.

use super::fixture::{call, fixture, scratch, wait_for_line};
use lousho::connect_mcp;
use lousho::mcp::{ConnectOptions, ServerStatus};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::{Agent, CancellationToken, ToolContext};
use serde_json::json;
use std::time::{Duration, Instant};

/// The fixture server, its slow tool writing `started` and `cancelled` to
/// `file` as they happen.
fn logging_fixture(file: &std::path::Path) -> lousho::McpServer {
    fixture("serve").env("FIXTURE_CANCEL_FILE", file.display().to_string())
}

/// "At once" on a loaded machine: far below every timeout the code under test
/// could be waiting for instead (a call's 60 s).
const AT_ONCE: Duration = Duration::from_secs(10);

#[tokio::test]
async fn cancelling_a_run_sends_cancelled_to_the_server() {
    let dir = scratch("cancel");
    let file = dir.join("cancelled");
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("fx__slow", json!({"ms": 20000})),
        ScriptedTurn::text("x"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .mcp_server("fx", logging_fixture(&file))
        .build()
        .unwrap();
    agent.ready().await.unwrap();
    let token = CancellationToken::new();
    let t2 = token.clone();
    let started = file.clone();
    tokio::spawn(async move {
        wait_for_line(&started, "started", "the slow call never started").await;
        t2.cancel();
    });
    let err = agent.send("go").cancel(token).await.unwrap_err();
    assert!(matches!(err, lousho::AgentError::Cancelled), "{err}");
    wait_for_line(&file, "cancelled", "the server never saw the cancellation").await;
    agent.close().await;
}

#[tokio::test]
async fn the_call_timeout_fires_and_progress_restarts_it() {
    let dir = scratch("timeout");
    let file = dir.join("cancelled");
    let mcp = connect_mcp(
        [(
            "fx",
            logging_fixture(&file).call_timeout(Duration::from_secs(2)),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let tools = mcp.tools();
    let started = Instant::now();
    let out = call(tools.get("fx__slow").unwrap(), json!({"ms": 60000})).await;
    assert!(
        out.is_error && out.to_model_text().contains("2s"),
        "{out:?}"
    );
    // Cut at the timeout, long before the call's own minute.
    assert!(started.elapsed() < Duration::from_secs(30));
    // 10 × 300 ms = 3 s in all, but progress every 300 ms keeps a 2 s timeout alive.
    let out = call(
        tools.get("fx__progress").unwrap(),
        json!({"ms": 300, "steps": 10}),
    )
    .await;
    assert_eq!(out.to_model_text(), "done after 10 steps", "{out:?}");
    // The timed-out call was cancelled at the server.
    wait_for_line(&file, "cancelled", "no cancellation after the timeout").await;
    mcp.close().await;
}

#[tokio::test]
async fn a_crash_mid_call_is_an_error_result_at_once_and_the_next_call_reconnects() {
    let file = scratch("crash").join("calls");
    let mcp = connect_mcp([("fx", logging_fixture(&file))], ConnectOptions::default())
        .await
        .unwrap();
    let tools = mcp.tools();
    // A slow call in flight when the server dies fails too, at once.
    let slow = tools.get("fx__slow").unwrap().clone();
    let pending = tokio::spawn(async move { call(&slow, json!({"ms": 120000})).await });
    wait_for_line(&file, "started", "the slow call never started").await;
    let started = Instant::now();
    let out = call(tools.get("fx__crash").unwrap(), json!({})).await;
    assert!(out.is_error, "{out:?}");
    // At once: far below the 60 s call timeout it would otherwise wait for.
    assert!(started.elapsed() < AT_ONCE, "took {:?}", started.elapsed());
    assert!(out.to_model_text().contains("`fx`"), "{out:?}");
    let other = tokio::time::timeout(AT_ONCE, pending)
        .await
        .expect("pending call hung")
        .unwrap();
    assert!(other.is_error, "{other:?}");
    assert!(
        matches!(mcp.status()["fx"], ServerStatus::Failed(_)),
        "{:?}",
        mcp.status()
    );
    let out = call(tools.get("fx__echo").unwrap(), json!({"text": "back"})).await;
    assert_eq!(out.to_model_text(), "back");
    assert_eq!(mcp.connect_attempts("fx").unwrap(), 2);
    mcp.close().await;
}

#[tokio::test]
async fn garbage_on_stdout_is_a_clear_error_not_a_hang() {
    let started = Instant::now();
    let err = connect_mcp(
        [(
            "noisy",
            fixture("garbage").startup_timeout(Duration::from_millis(1500)),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "took {:?}",
        started.elapsed()
    );
    assert!(err.contains("`noisy`"), "{err}");
    assert!(
        err.contains("non-MCP text to stdout") && err.contains("Welcome to my server"),
        "{err}"
    );
    // What the server wrote to stdout is not shown as its stderr (which it
    // left alone: inherited, nothing captured).
    assert!(!err.contains("stderr (tail)"), "{err}");
}

#[tokio::test]
async fn a_banner_line_on_stdout_is_tolerated() {
    let mcp = connect_mcp(
        [(
            "fx",
            fixture("serve").env("FIXTURE_BANNER", "hello from a chatty server"),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        call(mcp.tools().get("fx__echo").unwrap(), json!({"text": "ok"}))
            .await
            .to_model_text(),
        "ok"
    );
    mcp.close().await;
}

#[tokio::test]
async fn a_server_slower_than_the_startup_timeout_fails_clearly() {
    let err = connect_mcp(
        [(
            "sloth",
            fixture("serve")
                .env("FIXTURE_SLOW_START_MS", "5000")
                .startup_timeout(Duration::from_millis(300)),
        )],
        ConnectOptions::default(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("`sloth`") && err.contains("300ms"), "{err}");
    // Within the timeout it is fine.
    let mcp = connect_mcp(
        [("ok", fixture("serve").env("FIXTURE_SLOW_START_MS", "300"))],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    mcp.close().await;
}

#[tokio::test]
async fn captured_stderr_tail_shows_in_errors_and_status() {
    let mcp = lousho::mcp::McpClient::new(
        [(
            "fx",
            fixture("serve")
                .env("FIXTURE_STDERR", "fatal: DATABASE_URL is not set")
                .env("FIXTURE_EXIT_UNLESS", "/nonexistent")
                .capture_stderr(1024),
        )],
        ConnectOptions::default(),
    );
    let err = mcp.connect_all().await.unwrap_err().to_string();
    assert!(err.contains("DATABASE_URL is not set"), "{err}");
    let ServerStatus::Failed(reason) = &mcp.status()["fx"] else {
        panic!()
    };
    assert!(reason.contains("DATABASE_URL is not set"), "{reason}");
}

#[tokio::test]
async fn a_tool_dropped_by_its_caller_cancels_at_the_server() {
    let dir = scratch("drop");
    let file = dir.join("cancelled");
    let mcp = connect_mcp([("fx", logging_fixture(&file))], ConnectOptions::default())
        .await
        .unwrap();
    let slow = mcp.tools().get("fx__slow").unwrap().clone();
    let ctx = ToolContext::new("c1");
    let token = ctx.cancel.clone();
    let task = tokio::spawn(async move { slow.call(json!({"ms": 20000}), ctx).await });
    wait_for_line(&file, "started", "the slow call never started").await;
    token.cancel();
    let r = task.await.unwrap();
    assert!(
        matches!(r, Err(lousho::tool::ToolError::Cancelled)),
        "{r:?}"
    );
    wait_for_line(&file, "cancelled", "the server never saw the cancellation").await;
    mcp.close().await;
}

#[tokio::test]
async fn a_result_over_16_mib_is_a_clear_error_not_a_hang() {
    let mcp = connect_mcp([("fx", fixture("serve"))], ConnectOptions::default())
        .await
        .unwrap();
    let tools = mcp.tools();
    let started = Instant::now();
    let out = call(tools.get("fx__huge").unwrap(), json!({})).await;
    assert!(
        out.is_error && out.to_model_text().contains("16 MiB"),
        "{:?}",
        &out.to_model_text()[..200.min(out.to_model_text().len())]
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    // The connection stays usable.
    assert_eq!(
        call(
            tools.get("fx__echo").unwrap(),
            json!({"text": "still here"})
        )
        .await
        .to_model_text(),
        "still here"
    );
    mcp.close().await;
}
