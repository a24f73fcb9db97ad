//! A lousho agent calling a lousho-served agent over MCP: the served run's
//! model requests (tokens and cost, as the server reports them in the
//! result's `_meta`) count in the caller's reply, as an in-process
//! `as_tool` child's do.

use lousho::mcp::HttpOptions;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Price, PriceTable, Usage};
use lousho::policy::PermissionRule;
use lousho::{Agent, McpServer, ServeOptions, serve_mcp};
use serde_json::json;

#[tokio::test]
async fn a_served_agents_usage_adds_to_the_callers_reply() {
    let served = Agent::builder()
        .model(ScriptedModel::repeating([ScriptedTurn::text(
            "served done",
        )
        .usage(40, 4)]))
        .prices(PriceTable::empty().with("scripted", Price::new(1.0, 1.0)))
        .build()
        .unwrap();
    let server = serve_mcp(
        ServeOptions::new(served)
            .name("helper")
            .http(HttpOptions::new().port(0)),
    )
    .await
    .unwrap();

    let caller = Agent::builder()
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("served__helper", json!({"message": "hi"})).usage(100, 10),
            ScriptedTurn::text("caller done").usage(200, 20),
        ]))
        .prices(PriceTable::empty().with("scripted", Price::new(2.0, 2.0)))
        .mcp_server("served", McpServer::http(server.url().unwrap()))
        .permission_rule(PermissionRule::allow("served__*"))
        .build()
        .unwrap();
    let reply = caller.send("go").await.unwrap();
    assert_eq!(reply.tool_calls[0].output.to_model_text(), "served done");
    let tokens: Vec<(u64, u64)> = reply
        .requests
        .iter()
        .map(|r| (r.usage.input_tokens, r.usage.output_tokens))
        .collect();
    // The caller's first request, the served run's request (added when its
    // tool call returned), then the caller's second request.
    assert_eq!(
        tokens,
        [(100, 10), (40, 4), (200, 20)],
        "{:?}",
        reply.requests
    );
    assert_eq!(reply.usage, Usage::new(340, 34));
    // Costs: the caller's at its prices, the served run's as its server priced it.
    let costs: Vec<Option<f64>> = reply.requests.iter().map(|r| r.cost_usd).collect();
    let expected = [2.0 * 110.0, 44.0, 2.0 * 220.0].map(|c| Some(c / 1e6));
    for (got, want) in costs.iter().zip(expected) {
        assert!((got.unwrap() - want.unwrap()).abs() < 1e-12, "{costs:?}");
    }
    assert!(reply.cost_usd.is_some());
    caller.close().await;
    server.close().await.unwrap();
}
