//! What an MCP tool's listing and results become for the model (issue 30
//! §4): app-only tools (MCP Apps) are not offered, `structuredContent` is
//! checked against the `outputSchema`, and an image from an MCP tool reaches
//! the OpenAI-compatible mock as an image part.

use super::fixture::{call, fixture, scratch};
use lousho::mcp::ConnectOptions;
use lousho::model::OpenAi;
use lousho::{Agent, connect_mcp};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::json;

#[tokio::test]
async fn app_only_tools_are_not_offered_and_structured_results_are_checked() {
    let dir = scratch("content");
    let file = dir.join("tools.json");
    let object = json!({"type": "object"});
    let tools = json!([
        {"name": "echo", "inputSchema": object, "annotations": {"readOnlyHint": true}},
        {"name": "widget_refresh", "inputSchema": object,
         "_meta": {"ui": {"resourceUri": "ui://widget", "visibility": ["app"]}}},
        {"name": "widget_show", "inputSchema": object,
         "_meta": {"ui": {"resourceUri": "ui://widget", "visibility": ["model", "app"]}}},
        // `mixed` answers {"answer": 42}: the schema wants a string.
        {"name": "mixed", "inputSchema": object, "annotations": {"readOnlyHint": true},
         "outputSchema": {"type": "object", "properties": {"answer": {"type": "string"}},
                          "required": ["answer"]}},
        // `gentle` answers text without structuredContent.
        {"name": "gentle", "inputSchema": object,
         "outputSchema": {"type": "object"}},
    ]);
    std::fs::write(&file, tools.to_string()).unwrap();
    let entry = fixture("serve").env("FIXTURE_TOOLS_FILE", file.display().to_string());
    let mcp = connect_mcp([("srv", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let set = mcp.tools();
    let names: Vec<&str> = set.iter().map(|t| t.spec().name.as_str()).collect();
    assert!(names.contains(&"srv__widget_show"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("widget_refresh")),
        "{names:?}"
    );

    let mixed = set.get("srv__mixed").unwrap();
    let out = call(mixed, json!({})).await;
    assert!(out.is_error, "{out:?}");
    let text = out.to_model_text();
    assert!(
        text.contains("outputSchema") && text.contains("field `/answer`"),
        "{text}"
    );

    let gentle = set.get("srv__gentle").unwrap();
    let out = call(gentle, json!({})).await;
    assert!(
        out.is_error && out.to_model_text().contains("no structuredContent"),
        "{out:?}"
    );

    let echo = set.get("srv__echo").unwrap();
    let out = call(echo, json!({"text": "hi"})).await;
    assert!(!out.is_error, "{out:?}");
    mcp.close().await;
}

#[tokio::test]
async fn an_image_from_an_mcp_tool_reaches_the_openai_compatible_mock_as_an_image_part() {
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("call_m", "srv__mixed", json!({})))
        .reply(MockReply::text_reply("I see the image."))
        .start()
        .await;
    let model = OpenAi::builder("gpt-test")
        .api_key("sk-test")
        .base_url(mock.base_url())
        .build()
        .unwrap();
    let agent = Agent::builder()
        .model(model)
        .mcp_server("srv", fixture("serve"))
        .build()
        .unwrap();
    let reply = agent.send("show me").await.unwrap();
    assert_eq!(reply.text, "I see the image.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    let tool = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool message in {messages:?}"));
    assert_eq!(tool["tool_call_id"], "call_m");
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("[image image/png"),
        "{tool}"
    );
    // The tool messages are followed by a user message with the image.
    let after = messages.last().unwrap();
    assert_eq!(after["role"], "user", "{messages:?}");
    let parts = after["content"].as_array().unwrap();
    assert!(
        parts.contains(
            &json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,aW1hZ2U="}})
        ),
        "{parts:?}"
    );
    assert!(
        parts[0]["text"].as_str().unwrap().contains("call_m"),
        "{parts:?}"
    );
    agent.close().await;
}
