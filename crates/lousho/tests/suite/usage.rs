//! Token usage per model request and summed, and the cost estimate from a
//! price table.

use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Price, PriceTable, Usage};
use lousho::tool::DefinedTool;
use lousho::{Agent, Approval, ToolContext};
use serde_json::json;

fn noop(approval: Approval) -> DefinedTool {
    DefinedTool::from_json(
        "noop",
        "does nothing",
        json!({"type": "object"}),
        |_, _: ToolContext| async { "ok" },
    )
    .approval(approval)
}

fn script() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::tool_call("noop", json!({})).usage(100, 20),
        ScriptedTurn::text("done").usage(150, 30),
    ])
}

#[tokio::test]
async fn a_reply_carries_each_requests_usage_their_sum_and_the_cost() {
    let agent = Agent::builder()
        .model(script())
        .tool(noop(Approval::Never))
        .prices(PriceTable::empty().with("scripted", Price::new(2.0, 10.0)))
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    let per_request: Vec<Usage> = reply.requests.iter().map(|r| r.usage).collect();
    assert_eq!(per_request, [Usage::new(100, 20), Usage::new(150, 30),]);
    assert!(reply.requests.iter().all(|r| r.model == "scripted"));
    assert_eq!(reply.usage, Usage::new(250, 50));
    // (250 × 2 + 50 × 10) / 1e6
    let cost = reply.cost_usd.expect("the model has a price");
    assert!((cost - 0.001).abs() < 1e-12, "{cost}");
    assert!((reply.requests[0].cost_usd.unwrap() - 0.0004).abs() < 1e-12);
}

#[tokio::test]
async fn an_unpriced_model_gives_usage_without_a_cost() {
    let agent = Agent::builder()
        .model(script())
        .tool(noop(Approval::Never))
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.requests.len(), 2);
    assert_eq!(reply.cost_usd, None, "the builtin table has no `scripted`");
}

#[tokio::test]
async fn a_resumed_run_keeps_the_requests_before_the_pause() {
    let agent = Agent::builder()
        .model(script())
        .tool(noop(Approval::Always))
        .prices(PriceTable::empty().with("scripted", Price::new(2.0, 10.0)))
        .build()
        .unwrap();
    let paused = agent.send("go").await.unwrap();
    assert!(paused.is_interrupted());
    assert_eq!(paused.requests.len(), 1);
    let state = lousho::RunState::from_json(&paused.state.unwrap().to_json().unwrap()).unwrap();
    let call_id = state.pending().next().unwrap().call_id.clone();
    let reply = agent
        .resume(
            state,
            [(call_id, lousho::policy::ApprovalDecision::Approve)]
                .into_iter()
                .collect::<lousho::policy::Decisions>(),
        )
        .await
        .unwrap();
    assert_eq!(reply.requests.len(), 2);
    assert_eq!(reply.usage, Usage::new(250, 50));
    assert!(reply.cost_usd.is_some());
}

#[cfg(feature = "spec")]
#[tokio::test]
async fn a_spec_files_telemetry_section_sets_prices_and_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.yaml");
    std::fs::write(
        &path,
        "model: test\ntelemetry:\n  endpoint: http://127.0.0.1:4318\n  serviceName: support\n  recordContent: false\n  prices:\n    test: { input: 1.0, output: 2.0 }\n",
    )
    .unwrap();
    let spec = lousho::spec::SpecLoader::new().load(&path).unwrap();
    assert_eq!(
        spec.telemetry.endpoint.as_deref(),
        Some("http://127.0.0.1:4318")
    );
    assert_eq!(spec.telemetry.service_name.as_deref(), Some("support"));
    let agent = spec.agent_builder().unwrap().build().unwrap();
    let reply = agent.send("hi").await.unwrap();
    let usage = reply.usage;
    let expected = (usage.input_tokens as f64 + 2.0 * usage.output_tokens as f64) / 1e6;
    assert!(usage.total() > 0);
    assert!((reply.cost_usd.unwrap() - expected).abs() < 1e-12);
}
