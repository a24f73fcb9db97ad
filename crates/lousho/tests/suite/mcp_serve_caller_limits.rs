//! Per-caller limits of served agent runs (issue 33 §5,
//! `ServeOptions::caller_limits`): the run past a limit gets `429` with
//! `Retry-After` and a JSON-RPC error naming the limit — runs a minute,
//! runs at once (a run held open on an event), tokens a day counted from a
//! real provider's usage (the OpenAI mock over loopback). Without auth a
//! caller is the client's address.

use super::providers_common::openai_at;
use lousho::mcp::{CallerLimits, HttpOptions, McpServerHandle};
use lousho::tool::DefinedTool;
use lousho::{Agent, ServeOptions, ToolContext, ToolOutput, serve_mcp};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use lousho_testkit::serve::{CancelProbe, KeywordModel, fixture_options};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::Notify;

/// A call of the agent tool asking `message`.
fn run(id: u64, tool: &str, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {"message": message}}})
}

/// An answer: status, `Retry-After` (seconds), the JSON-RPC body.
struct Answer {
    status: u16,
    retry_after: Option<u64>,
    body: Value,
}

async fn post(server: &McpServerHandle, body: &Value) -> Answer {
    let res = reqwest::Client::new()
        .post(server.url().unwrap())
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25")
        .json(body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let retry_after = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().parse().unwrap());
    let body = res.json().await.unwrap_or(Value::Null);
    Answer {
        status,
        retry_after,
        body,
    }
}

/// Checks a refusal by `limit`: `429`, `Retry-After` within `max_secs`, the
/// request's id, the limit named in the error.
fn assert_refused(a: &Answer, id: u64, limit: &str, max_secs: u64) {
    assert_eq!(a.status, 429, "{}", a.body);
    let secs = a.retry_after.expect("Retry-After");
    assert!((1..=max_secs).contains(&secs), "Retry-After: {secs}");
    assert_eq!(a.body["id"], id, "{}", a.body);
    let error = &a.body["error"];
    assert_eq!(error["data"]["limit"], limit, "{error}");
    assert_eq!(error["data"]["retryAfterSeconds"], secs, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains(limit),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_past_the_minute_s_limit_gets_429_with_retry_after() {
    let probe = CancelProbe::default();
    let server = serve_mcp(
        fixture_options(&probe)
            .caller_limits(CallerLimits::new().runs_per_minute(3))
            .http(HttpOptions::new().port(0)),
    )
    .await
    .unwrap();
    for id in 1..=3 {
        let a = post(&server, &run(id, "test-agent", "hi")).await;
        assert_eq!(a.status, 200, "run {id}: {}", a.body);
        assert_eq!(a.body["result"]["isError"], false, "{}", a.body);
    }
    let over = post(&server, &run(4, "test-agent", "hi")).await;
    assert_refused(&over, 4, "runsPerMinute", 60);
    // Direct tools are not agent runs: not limited.
    let echo = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}});
    assert_eq!(post(&server, &echo).await.status, 200);
    server.close().await.unwrap();
}

/// `slow_wait` for the keyword model's `slow`: tells `started` it runs,
/// then holds its run until `release` fires.
fn held_tool(started: Arc<Notify>, release: Arc<Notify>) -> DefinedTool {
    DefinedTool::from_json(
        "slow_wait",
        "Wait until released",
        json!({"type": "object", "properties": {}}),
        move |_input: Value, _ctx: ToolContext| {
            let (started, release) = (started.clone(), release.clone());
            async move {
                let released = release.notified();
                started.notify_one();
                released.await;
                ToolOutput::text("released")
            }
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_at_once_gets_429_while_the_first_is_held() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let agent = Agent::builder()
        .name("held")
        .model(KeywordModel)
        .tool(held_tool(started.clone(), release.clone()))
        .build()
        .unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent)
            .caller_limits(CallerLimits::new().concurrent_runs(1))
            .http(HttpOptions::new().port(0)),
    )
    .await
    .unwrap();
    let server = Arc::new(server);
    let first = tokio::spawn({
        let server = server.clone();
        async move { post(&server, &run(1, "held", "slow")).await }
    });
    started.notified().await;
    let second = post(&server, &run(2, "held", "hi")).await;
    assert_refused(&second, 2, "concurrentRuns", 60);
    release.notify_one();
    let first = first.await.unwrap();
    assert_eq!(first.status, 200, "{}", first.body);
    // The slot is given back once the first run's answer is out: a run
    // after it gets in (retried while the give-back is on its way).
    let mut id = 3;
    loop {
        let a = post(&server, &run(id, "held", "hi")).await;
        if a.status == 200 {
            break;
        }
        assert_refused(&a, id, "concurrentRuns", 60);
        assert!(id < 200, "the slot of the first run came back");
        id += 1;
        tokio::task::yield_now().await;
    }
    Arc::into_inner(server).unwrap().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_refused_once_the_day_s_tokens_from_the_provider_are_spent() {
    // 70 tokens a run (the provider's usage); 100 a day: the second run
    // starts below the limit and crosses it, the third is refused.
    let mock = MockProvider::openai()
        .replies((0..3).map(|_| MockReply::text_reply("done").usage(60, 10)))
        .start()
        .await;
    let model = openai_at(&mock).build().unwrap();
    let agent = Agent::builder().name("paid").model(model).build().unwrap();
    let server = serve_with_100_tokens_a_day(agent).await;
    for id in 1..=2 {
        let a = post(&server, &run(id, "paid", "hi")).await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.body["result"]["isError"], false, "{}", a.body);
    }
    let over = post(&server, &run(3, "paid", "hi")).await;
    assert_refused(&over, 3, "tokensPerDay", 24 * 60 * 60);
    assert!(
        over.retry_after.unwrap() > 60,
        "the day is far from over: {:?}",
        over.retry_after
    );
    assert_eq!(mock.requests().len(), 2, "the refused run asked no model");
    server.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_s_tokens_count_toward_the_day_too() {
    // Each run's one turn asks for a tool and the run is out of turns: it
    // fails (an error result) after using 70 tokens. 100 a day: the second
    // failed run crosses the limit, the third is refused.
    let mock = MockProvider::openai()
        .replies((0..3).map(|i| {
            MockReply::new()
                .tool_call(&format!("c{i}"), "lookup", json!({}))
                .usage(60, 10)
        }))
        .start()
        .await;
    let model = openai_at(&mock).build().unwrap();
    let lookup = DefinedTool::from_json(
        "lookup",
        "Looks something up",
        json!({"type": "object"}),
        |_, _: ToolContext| async { "found" },
    );
    let agent = Agent::builder()
        .name("paid")
        .model(model)
        .tool(lookup)
        .max_turns(1)
        .build()
        .unwrap();
    let server = serve_with_100_tokens_a_day(agent).await;
    for id in 1..=2 {
        let a = post(&server, &run(id, "paid", "hi")).await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.body["result"]["isError"], true, "{}", a.body);
    }
    let over = post(&server, &run(3, "paid", "hi")).await;
    assert_refused(&over, 3, "tokensPerDay", 24 * 60 * 60);
    assert_eq!(mock.requests().len(), 2, "the refused run asked no model");
    server.close().await.unwrap();
}

/// Serves `agent` over loopback HTTP with 100 tokens a day per caller.
async fn serve_with_100_tokens_a_day(agent: Agent) -> McpServerHandle {
    serve_mcp(
        ServeOptions::new(agent)
            .caller_limits(CallerLimits::new().tokens_per_day(100))
            .http(HttpOptions::new().port(0)),
    )
    .await
    .unwrap()
}
