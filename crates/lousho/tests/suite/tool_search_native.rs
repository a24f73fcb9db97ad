//! Tool search on Anthropic's side: every definition is sent, the deferred
//! ones with `defer_loading: true`, beside the `tool_search_tool_bm25` server
//! tool; the API's search blocks go back verbatim in the next request. The
//! wire-faithful mock refuses what the API refuses (a `tool_reference` to an
//! undefined tool, all tools deferred, `defer_loading` without a search tool).

use super::providers_common::SECRET;
use lousho::Agent;
use lousho::model::Anthropic;
use lousho::tool::search::SEARCH_TOOL_NAME;
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use lousho_testkit::tools::catalog_agent_tools;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn tools_of(body: &Value) -> &Vec<Value> {
    body["tools"].as_array().unwrap()
}

#[tokio::test]
async fn anthropic_searches_natively_and_its_blocks_go_back_verbatim() {
    let mock = MockProvider::anthropic()
        .require_api_key(SECRET)
        .reply(
            MockReply::new()
                .text("Let me find a refund tool.")
                .tool_search(
                    "srvtoolu_01",
                    "refund a payment",
                    ["stripe__refund_payment"],
                )
                .tool_call(
                    "toolu_01",
                    "stripe__refund_payment",
                    json!({"payment_intent": "pi_1"}),
                ),
        )
        .reply(MockReply::text_reply("Refunded."))
        .start()
        .await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let model = Anthropic::builder("claude-test")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .build()
        .unwrap();
    let agent = Agent::builder()
        .model(model)
        .tools(catalog_agent_tools(calls.clone()))
        .build()
        .unwrap();
    let reply = agent.send("Refund pi_1").await.unwrap();
    assert_eq!(reply.text, "Refunded.");
    assert_eq!(*calls.lock().unwrap(), ["stripe__refund_payment"]);

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    let tools = tools_of(first);
    assert_eq!(
        tools[0],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    assert_eq!(tools.len(), 201, "the search tool and all 200 definitions");
    assert!(tools[1..].iter().all(|t| t["defer_loading"] == json!(true)));
    assert!(
        !tools.iter().any(|t| t["name"] == SEARCH_TOOL_NAME),
        "no client-side search"
    );
    // Generally available since 2026-02: no beta header.
    assert!(!requests[0].headers.contains_key("anthropic-beta"));
    // Deferred definitions are not in the model's context.
    assert_eq!(reply.requests[0].tool_definition_tokens, 0);

    // The second request carries the assistant turn as the API sent it.
    let assistant = &requests[1].body["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    let kinds: Vec<&str> = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "text",
            "server_tool_use",
            "tool_search_tool_result",
            "tool_use"
        ]
    );
    let content = &assistant["content"];
    assert_eq!(
        content[1],
        json!({"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25",
               "input": {"query": "refund a payment"}})
    );
    assert_eq!(
        content[2]["content"]["tool_references"],
        json!([{"type": "tool_reference", "tool_name": "stripe__refund_payment"}])
    );
    // The session's history keeps the blocks too (sent back in later runs).
    assert!(
        reply.messages[1]
            .parts
            .iter()
            .any(|p| matches!(p, lousho::model::Part::Provider(_)))
    );
}

#[tokio::test]
async fn without_native_search_anthropic_gets_the_client_side_tool() {
    let mock = MockProvider::anthropic()
        .require_api_key(SECRET)
        .reply(MockReply::text_reply("ok"))
        .start()
        .await;
    let model = Anthropic::builder("claude-test")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .native_tool_search(false)
        .build()
        .unwrap();
    let agent = Agent::builder()
        .model(model)
        .tools(catalog_agent_tools(Arc::new(Mutex::new(Vec::new()))))
        .build()
        .unwrap();
    agent.send("hi").await.unwrap();
    let body = &mock.requests()[0].body;
    let names: Vec<&str> = tools_of(body)
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, [SEARCH_TOOL_NAME]);
    assert!(
        !tools_of(body)
            .iter()
            .any(|t| t.get("defer_loading").is_some())
    );
}

#[tokio::test]
async fn the_mock_refuses_a_reference_to_an_undefined_tool() {
    // A conversation whose earlier search found a tool the request no longer
    // defines: the API answers 400, and so does the mock.
    let mock = MockProvider::anthropic()
        .require_api_key(SECRET)
        .reply(MockReply::text_reply("never sent"))
        .start()
        .await;
    let client = reqwest::Client::new();
    let response = client
        .post(format!("{}/v1/messages", mock.base_url()))
        .header("x-api-key", SECRET)
        .header("anthropic-version", "2023-06-01")
        .json(&json!({
            "model": "claude-test", "max_tokens": 10,
            "tools": [{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
                      {"name": "a", "description": "", "input_schema": {"type": "object"}, "defer_loading": true}],
            "messages": [
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": [
                    {"type": "server_tool_use", "id": "s1", "name": "tool_search_tool_bm25", "input": {"query": "b"}},
                    {"type": "tool_search_tool_result", "tool_use_id": "s1", "content": {
                        "type": "tool_search_tool_search_result",
                        "tool_references": [{"type": "tool_reference", "tool_name": "b"}]}}]},
                {"role": "user", "content": "y"}
            ]
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"].as_str().unwrap().contains("'b'"),
        "{body}"
    );
}
