//! Budgets (issue 35 §2) against the OpenAI mock over loopback HTTP: each
//! kind of limit ends a run with `RunStatus::BudgetExceeded`, what was
//! spent and the partial reply, and a conversation a session can go on
//! with; a session's budget counts its runs together.

use super::providers_common::{openai_at, weather_tool};
use lousho::agent::{Budget, BudgetLimit, BudgetScope, RunStatus};
use lousho::model::{Model, OpenAi, Price, PriceTable, Role};
use lousho::{Agent, Reply};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn model(mock: &MockProvider) -> OpenAi {
    openai_at(mock).build().unwrap()
}

/// Two tool rounds (150 tokens each: 100 in, 50 out), then an answer.
async fn three_turns() -> MockProvider {
    MockProvider::openai()
        .reply(
            MockReply::new()
                .text("First Paris.")
                .tool_call("call_1", "get_weather", json!({"city": "Paris"}))
                .usage(100, 50),
        )
        .reply(
            MockReply::new()
                .text("Now Rome.")
                .tool_call("call_2", "get_weather", json!({"city": "Rome"}))
                .usage(100, 50),
        )
        .reply(MockReply::text_reply("Sunny in both.").usage(100, 50))
        .start()
        .await
}

/// Runs the weather agent with `budget` against `mock`; the reply and the
/// cities the tool was called for.
async fn run_with(mock: &MockProvider, budget: Budget, prices: PriceTable) -> (Reply, Vec<String>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(model(mock))
        .tool(weather_tool(calls.clone()))
        .budget(budget)
        .prices(prices)
        .build()
        .unwrap();
    let reply = agent.send("Weather in Paris and Rome?").await.unwrap();
    let cities = calls.lock().unwrap().clone();
    (reply, cities)
}

fn assert_stopped(reply: &Reply, limit: BudgetLimit) {
    assert_eq!(
        reply.status,
        RunStatus::BudgetExceeded {
            limit,
            scope: BudgetScope::Run
        }
    );
    assert!(reply.is_budget_exceeded());
    // The conversation stays valid: no tool call without its result.
    let last = reply.messages.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert_eq!(last.tool_calls().count(), 0);
}

/// Stopped after the second turn: its calls did not run.
async fn stops_after_second_turn(budget: Budget, limit: BudgetLimit) {
    let mock = three_turns().await;
    let (reply, cities) = run_with(&mock, budget, PriceTable::empty()).await;
    assert_stopped(&reply, limit);
    assert_eq!(reply.text, "Now Rome.", "the partial reply");
    assert_eq!(cities, ["Paris"]);
    assert_eq!(reply.turns, 2);
    assert_eq!(reply.usage.total(), 300, "what was spent");
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn total_tokens_stop_the_run() {
    stops_after_second_turn(Budget::new().total_tokens(300), BudgetLimit::TotalTokens).await;
}

#[tokio::test]
async fn input_tokens_stop_the_run() {
    stops_after_second_turn(Budget::new().input_tokens(150), BudgetLimit::InputTokens).await;
}

#[tokio::test]
async fn output_tokens_stop_the_run() {
    stops_after_second_turn(Budget::new().output_tokens(100), BudgetLimit::OutputTokens).await;
}

#[tokio::test]
async fn turns_stop_the_run() {
    stops_after_second_turn(Budget::new().turns(2), BudgetLimit::Turns).await;
}

#[tokio::test]
async fn tool_calls_stop_the_run() {
    stops_after_second_turn(Budget::new().tool_calls(1), BudgetLimit::ToolCalls).await;
}

#[tokio::test]
async fn cost_stops_the_run() {
    let mock = three_turns().await;
    let name = model(&mock).name().to_owned();
    // $1 per million in and out: 150 tokens a turn is $0.00015.
    let prices = PriceTable::empty().with(name, Price::new(1.0, 1.0));
    let (reply, cities) = run_with(&mock, Budget::new().cost_usd(0.0002), prices).await;
    assert_stopped(&reply, BudgetLimit::Cost);
    assert_eq!(cities, ["Paris"]);
    assert!((reply.cost_usd.unwrap() - 0.0003).abs() < 1e-9);
}

#[tokio::test]
async fn wall_time_cuts_the_model_stream() {
    // The answer starts, then the stream hangs (keep-alives only).
    let mock = MockProvider::openai()
        .reply(MockReply::new().text("Partial answ").hold())
        .start()
        .await;
    let (reply, _) = run_with(
        &mock,
        Budget::new().wall_time(Duration::from_millis(300)),
        PriceTable::empty(),
    )
    .await;
    assert_stopped(&reply, BudgetLimit::WallTime);
    assert_eq!(reply.text, "Partial answ");
    assert!(
        mock.wait_for_disconnect(Duration::from_secs(10)).await,
        "the request was dropped"
    );
}

#[tokio::test]
async fn a_budget_that_is_not_reached_changes_nothing() {
    let mock = three_turns().await;
    let (reply, cities) = run_with(
        &mock,
        Budget::new().total_tokens(10_000).tool_calls(5).turns(5),
        PriceTable::empty(),
    )
    .await;
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(reply.text, "Sunny in both.");
    assert_eq!(cities, ["Paris", "Rome"]);
}

#[tokio::test]
async fn a_session_budget_counts_its_runs_together() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("One.").usage(100, 50))
        .reply(MockReply::text_reply("Two.").usage(100, 50))
        .start()
        .await;
    let agent = Agent::builder().model(model(&mock)).build().unwrap();
    let session = agent.session().budget(Budget::new().total_tokens(300));
    let first = session.send("one").await.unwrap();
    assert_eq!(first.status, RunStatus::Completed);
    let second = session.send("two").await.unwrap();
    assert_eq!(second.status, RunStatus::Completed);
    assert_eq!(session.spent().usage.total(), 300);
    assert_eq!(session.spent().turns, 2);
    // The third run stops before it asks the model.
    let third = session.send("three").await.unwrap();
    assert_eq!(
        third.status,
        RunStatus::BudgetExceeded {
            limit: BudgetLimit::TotalTokens,
            scope: BudgetScope::Session
        }
    );
    assert_eq!(third.turns, 0);
    assert_eq!(mock.requests().len(), 2);
    // The session's history still loads and holds the completed runs.
    assert_eq!(session.history().len(), 5);
}

#[cfg(feature = "spec")]
#[test]
fn a_spec_file_sets_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.yaml");
    std::fs::write(
        &path,
        "model: test\nbudget:\n  totalTokens: 5000\n  costUsd: 0.5\n  wallTimeMs: 60000\n  turns: 4\n  toolCalls: 10\n",
    )
    .unwrap();
    let spec = lousho::spec::SpecLoader::new()
        .without_env()
        .load(&path)
        .unwrap();
    let budget = spec.budget.unwrap();
    assert_eq!(budget.total_tokens, Some(5000));
    assert_eq!(budget.cost_usd, Some(0.5));
    assert_eq!(budget.wall_time, Some(Duration::from_secs(60)));
    assert_eq!(budget.turns, Some(4));
    assert_eq!(budget.tool_calls, Some(10));
    assert_eq!(budget.input_tokens, None);

    std::fs::write(&path, "model: test\nbudget:\n  costUsd: -1\n").unwrap();
    let e = lousho::spec::SpecLoader::new()
        .without_env()
        .load(&path)
        .unwrap_err();
    assert!(e.to_string().contains("costUsd"), "{e}");
}
