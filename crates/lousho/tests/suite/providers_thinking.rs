//! Thinking and reasoning against the wire-faithful mocks, over loopback
//! HTTP: Anthropic thinking blocks go back with their signatures unchanged
//! across tool rounds (the mock refuses a signature it did not issue for
//! that text, and a tool loop's assistant turn that does not start with its
//! thinking), redacted thinking is kept, thinking streams as its own event,
//! and OpenAI-style reasoning effort and reasoning tokens.

use super::providers_common::{SECRET, weather_tool};
use futures::StreamExt;
use lousho::model::{
    Anthropic, Message, Model, ModelError, ModelRequest, ModelSettings, OpenAi, Part,
    ProviderBlock, ReasoningEffort, Role, Thinking, ToolCall, Usage,
};
use lousho::{Agent, AgentEvent, Reply};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Runs `agent` on `message`, returning the thinking it streamed and the reply.
async fn run(agent: &Agent, message: &str) -> (String, Reply) {
    let mut stream = agent.send(message).stream();
    let mut thinking = String::new();
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            AgentEvent::ThinkingDelta(t) => thinking.push_str(&t),
            AgentEvent::Done(reply) => return (thinking, *reply),
            _ => {}
        }
    }
    panic!("no reply");
}

/// The provider blocks of the reply's assistant turns, in order.
fn kept_blocks(reply: &Reply) -> Vec<Value> {
    reply
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::Provider(b) => Some(b.block.clone()),
            _ => None,
        })
        .collect()
}

fn without_cache_control(mut block: Value) -> Value {
    if let Some(map) = block.as_object_mut() {
        map.remove("cache_control");
    }
    block
}

#[tokio::test]
async fn anthropic_thinking_signatures_round_trip_across_two_tool_rounds() {
    let mock = MockProvider::anthropic()
        .require_api_key(SECRET)
        .reply(
            MockReply::new()
                .thinking("I should look up Paris first.")
                .text("Checking.")
                .tool_call("toolu_1", "get_weather", json!({"city": "Paris"}))
                .usage(100, 80),
        )
        .reply(
            MockReply::new()
                .thinking("Now Rome.")
                .redacted_thinking("EncryptedOpaqueData==")
                .tool_call("toolu_2", "get_weather", json!({"city": "Rome"}))
                .usage(200, 60),
        )
        .reply(MockReply::text_reply("Sunny in both.").usage(300, 10))
        .start()
        .await;
    let model = Anthropic::builder("claude-sonnet-4-5")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .build()
        .unwrap();
    let agent = Agent::builder()
        .model(model)
        .prompt("You are a weather bot.")
        .tool(weather_tool(Arc::new(Mutex::new(Vec::new()))))
        .settings(ModelSettings::default().thinking(Thinking::Budget(2048)))
        .build()
        .unwrap();
    let (thinking, reply) = run(&agent, "Weather in Paris and Rome?").await;

    // Thinking streamed as its own events, never in the answer.
    assert_eq!(thinking, "I should look up Paris first.Now Rome.");
    assert_eq!(reply.text, "Sunny in both.");
    assert!(
        !reply
            .messages
            .iter()
            .any(|m| m.text().contains("Paris first"))
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "no request was refused");
    for r in &requests {
        assert_eq!(
            r.body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert_eq!(
            r.body["max_tokens"],
            4096 + 2048,
            "the answer keeps its room"
        );
    }

    // The thinking kept in the conversation, as the API sent it.
    let kept = kept_blocks(&reply);
    assert_eq!(kept.len(), 3);
    assert_eq!(kept[0]["type"], "thinking");
    assert_eq!(kept[0]["thinking"], "I should look up Paris first.");
    let first_signature = kept[0]["signature"].as_str().unwrap();
    assert!(!first_signature.is_empty());
    assert_eq!(kept[1]["type"], "thinking");
    assert_eq!(kept[1]["thinking"], "Now Rome.");
    assert_eq!(
        kept[2],
        json!({"type": "redacted_thinking", "data": "EncryptedOpaqueData=="})
    );

    // The second request: the first turn starts with its thinking block,
    // signature unchanged, then the text and the tool call.
    let turn1 = &requests[1].body["messages"][1];
    assert_eq!(turn1["role"], "assistant");
    let content = turn1["content"].as_array().unwrap();
    let kinds: Vec<&str> = content
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use"]);
    assert_eq!(content[0], kept[0]);

    // The third request carries both earlier turns' thinking, unchanged.
    let messages = &requests[2].body["messages"];
    assert_eq!(messages[1]["content"][0], kept[0]);
    let turn2: Vec<Value> = messages[3]["content"]
        .as_array()
        .unwrap()
        .iter()
        .cloned()
        .map(without_cache_control)
        .collect();
    assert_eq!(turn2[0], kept[1]);
    assert_eq!(turn2[1], kept[2]);
    assert_eq!(turn2[2]["type"], "tool_use");
    // No breakpoint on a thinking block (the mock would refuse one).
    assert!(
        messages[3]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] != "tool_use")
            .all(|b| b.get("cache_control").is_none())
    );
    assert_eq!(reply.usage, Usage::new(600, 150));
}

#[tokio::test]
async fn a_changed_thinking_signature_is_refused_like_the_api_does() {
    let mock = MockProvider::anthropic()
        .reply(MockReply::new().thinking("Think.").tool_call(
            "toolu_1",
            "get_weather",
            json!({"city": "Oslo"}),
        ))
        .reply(MockReply::text_reply("never sent"))
        .start()
        .await;
    let model = Anthropic::builder("claude-sonnet-4-5")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .build()
        .unwrap();
    let settings = ModelSettings::default().thinking(Thinking::Budget(1024));
    let request = ModelRequest::new(vec![Message::user("Weather?")]).settings(settings.clone());
    let mut stream = model.stream(&request);
    let mut block = None;
    while let Some(event) = stream.next().await {
        if let lousho::model::ModelEvent::Provider(b) = event.unwrap() {
            block = Some(b);
        }
    }
    let mut block: ProviderBlock = block.expect("the thinking block");
    block.block["thinking"] = json!("Think harder.");
    let assistant = Message {
        role: Role::Assistant,
        parts: vec![
            Part::Provider(block),
            Part::ToolCall(ToolCall {
                id: "toolu_1".into(),
                name: "get_weather".into(),
                arguments: json!({"city": "Oslo"}),
            }),
        ],
    };
    let result = lousho::model::ToolResult {
        call_id: "toolu_1".into(),
        name: "get_weather".into(),
        output: lousho::ToolOutput::text("sunny"),
    };
    let request = ModelRequest::new(vec![
        Message::user("Weather?"),
        assistant,
        Message::tool_results([result]),
    ])
    .settings(settings);
    let mut stream = model.stream(&request);
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(
        matches!(&err, ModelError::BadRequest { status: 400, message, .. } if message.contains("signature")),
        "{err}"
    );
}

#[tokio::test]
async fn anthropic_effort_asks_for_adaptive_thinking() {
    let mock = MockProvider::anthropic()
        .reply(MockReply::text_reply("ok"))
        .start()
        .await;
    let model = Anthropic::builder("claude-opus-4-6")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .build()
        .unwrap();
    let agent = Agent::builder()
        .model(model)
        .settings(ModelSettings::default().thinking(Thinking::Effort(ReasoningEffort::Medium)))
        .build()
        .unwrap();
    agent.send("Hi").await.unwrap();
    let body = &mock.requests()[0].body;
    assert_eq!(body["thinking"], json!({"type": "adaptive"}));
    assert_eq!(body["output_config"], json!({"effort": "medium"}));
    assert_eq!(body["max_tokens"], 4096);
}

#[tokio::test]
async fn openai_reasoning_effort_is_sent_and_reasoning_tokens_counted_apart() {
    let mock = MockProvider::openai()
        .require_api_key(SECRET)
        .reply(
            MockReply::new()
                .thinking("Six times seven.")
                .text("42")
                .usage(50, 120)
                .reasoning_tokens(100),
        )
        .reply(MockReply::text_reply("plain").usage(10, 5))
        .start()
        .await;
    let model = OpenAi::builder("o4-mini")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .build()
        .unwrap();
    let agent = Agent::builder()
        .model(model)
        .settings(ModelSettings::default().thinking(Thinking::Effort(ReasoningEffort::High)))
        .build()
        .unwrap();
    let (thinking, reply) = run(&agent, "What is 6 x 7?").await;
    assert_eq!(reply.text, "42");
    assert_eq!(thinking, "Six times seven.");
    assert_eq!(
        reply.usage,
        Usage {
            reasoning_tokens: 100,
            ..Usage::new(50, 120)
        }
    );
    // Reasoning is billed as output: o4-mini $1.10 in, $4.40 out.
    let want = (50.0 * 1.10 + 120.0 * 4.40) / 1e6;
    assert!((reply.cost_usd.unwrap() - want).abs() < 1e-12);
    assert_eq!(mock.requests()[0].body["reasoning_effort"], "high");

    // Without thinking settings nothing is sent.
    let plain = Agent::builder()
        .model(
            OpenAi::builder("o4-mini")
                .api_key(SECRET)
                .base_url(mock.base_url())
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    plain.send("Hi").await.unwrap();
    assert!(mock.requests()[1].body.get("reasoning_effort").is_none());
}
