//! The Anthropic Messages provider against the wire-faithful mock, over
//! loopback HTTP.

use super::providers_common::{SECRET, env, fast_retry, weather_tool};
use futures::StreamExt;
use lousho::model::{
    Anthropic, AnthropicBuilder, FinishReason, ModelSettings, resolve_model_with_env,
};
use lousho::model::{Message, ModelError, ModelEvent, ModelRequest, ToolCall, Usage};
use lousho::tool::Content;
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentError, AgentEvent, CancellationToken, Model, ToolContext, ToolOutput};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn provider(mock: &MockProvider) -> AnthropicBuilder {
    Anthropic::builder("claude-test")
        .api_key(SECRET)
        .base_url(mock.base_url())
}

async fn collect(model: &Anthropic, request: &ModelRequest) -> Result<Vec<ModelEvent>, ModelError> {
    let mut stream = model.stream(request);
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        events.push(e?);
    }
    Ok(events)
}

#[tokio::test]
async fn the_agent_loop_runs_a_tool_and_sends_system_messages_tools_and_results() {
    let mock = MockProvider::anthropic()
        .require_api_key(SECRET)
        .reply(
            MockReply::new()
                .text("Let me check.")
                .fragments(5)
                .tool_call("toolu_01", "get_weather", json!({"city": "Paris"}))
                .usage(40, 12),
        )
        .reply(MockReply::text_reply("It is sunny in Paris.").usage(60, 8))
        .start()
        .await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(provider(&mock).build().unwrap())
        .prompt("You are a weather bot.")
        .tool(weather_tool(calls.clone()))
        .build()
        .unwrap();
    let reply = agent.send("Weather in Paris?").await.unwrap();

    assert_eq!(reply.text, "It is sunny in Paris.");
    assert_eq!(*calls.lock().unwrap(), ["Paris"]);
    assert_eq!(reply.usage, Usage::new(100, 20));
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);

    let first = &requests[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.header("x-api-key"), Some(SECRET));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(first.header("authorization"), None);
    assert_eq!(first.body["model"], "claude-test");
    assert_eq!(first.body["max_tokens"], 4096);
    assert_eq!(first.body["stream"], true);
    // Prompt caching is on by default: breakpoints on the system prompt,
    // the last tool and the conversation (see providers_cache.rs).
    assert_eq!(
        first.body["system"],
        json!([{"type": "text", "text": "You are a weather bot.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        first.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?", "cache_control": {"type": "ephemeral"}}]}])
    );
    let tool = &first.body["tools"][0];
    assert_eq!(tool["name"], "get_weather");
    assert_eq!(tool["description"], "Current weather for a city");
    assert_eq!(tool["input_schema"]["type"], "object");
    assert_eq!(tool["input_schema"]["properties"]["city"]["type"], "string");

    assert_eq!(
        requests[1].body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": [{"type": "text", "text": "sunny in Paris"}], "cache_control": {"type": "ephemeral"}},
            ]},
        ])
    );
}

fn image_tool() -> DefinedTool {
    DefinedTool::from_json(
        "snapshot",
        "Takes a picture",
        json!({"type": "object", "properties": {}}),
        |_: Value, _: ToolContext| async {
            ToolOutput::from_content(vec![
                Content::text("here it is"),
                Content::image("iVBORw0KGgo=", "image/png"),
            ])
        },
    )
    .read_only()
}

fn failing_tool() -> DefinedTool {
    DefinedTool::from_json(
        "explode",
        "Always fails",
        json!({"type": "object", "properties": {}}),
        |_: Value, _: ToolContext| async { ToolOutput::error("disk on fire") },
    )
    .read_only()
}

#[tokio::test]
async fn two_tool_calls_in_one_turn_send_image_and_error_results_in_one_user_turn() {
    let mock = MockProvider::anthropic()
        .reply(
            MockReply::new()
                .tool_call("toolu_a", "snapshot", json!({}))
                .tool_call("toolu_b", "explode", json!({})),
        )
        .reply(MockReply::text_reply(
            "Got the picture; the other tool failed.",
        ))
        .start()
        .await;
    let agent = Agent::builder()
        .model(provider(&mock).build().unwrap())
        .tool(image_tool())
        .tool(failing_tool())
        .build()
        .unwrap();
    let reply = agent.send("Go").await.unwrap();
    assert_eq!(reply.tool_calls.len(), 2);
    let messages = &mock.requests()[1].body["messages"];
    assert_eq!(
        messages[1]["content"].as_array().unwrap().len(),
        2,
        "both tool_use blocks in one assistant turn"
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": [
                {"type": "text", "text": "here it is"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            ]},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": [{"type": "text", "text": "disk on fire"}], "is_error": true,
             "cache_control": {"type": "ephemeral"}},
        ]})
    );
}

#[tokio::test]
async fn fragmented_input_json_is_reassembled_and_usage_collected() {
    let mock = MockProvider::anthropic()
        .reply(
            MockReply::new()
                .text_pieces(["Hel", "lo"])
                .tool_call_fragments(
                    "toolu_1",
                    "search",
                    ["{\"q\": \"a\\", "\"b\", \"tags\": [", "\"x\", \"y\"]}"],
                )
                .tool_call_fragments("toolu_2", "noop", Vec::<String>::new())
                .usage(25, 17),
        )
        .start()
        .await;
    let model = provider(&mock).build().unwrap();
    let events = collect(&model, &ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(
        events,
        [
            ModelEvent::TextDelta("Hel".into()),
            ModelEvent::TextDelta("lo".into()),
            ModelEvent::ToolCall(ToolCall {
                id: "toolu_1".into(),
                name: "search".into(),
                arguments: json!({"q": "a\"b", "tags": ["x", "y"]})
            }),
            ModelEvent::ToolCall(ToolCall {
                id: "toolu_2".into(),
                name: "noop".into(),
                arguments: json!({})
            }),
            ModelEvent::Usage(Usage::new(25, 17)),
            ModelEvent::Finished(FinishReason::ToolCalls),
        ]
    );
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_after_that_delay_then_succeeds() {
    let mock = MockProvider::anthropic()
        .reply(
            MockReply::error(
                429,
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
            )
            .header("retry-after", "1"),
        )
        .reply(MockReply::text_reply("finally"))
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(provider(&mock).retry(fast_retry(&notices)).build().unwrap())
        .build()
        .unwrap();
    assert_eq!(agent.send("hi").await.unwrap().text, "finally");
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(
        *notices.lock().unwrap(),
        [(1, Duration::from_secs(1), true)]
    );
}

#[tokio::test]
async fn a_401_is_an_authentication_error_and_not_retried() {
    let mock = MockProvider::anthropic()
        .require_api_key("sk-ant-right")
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(provider(&mock).retry(fast_retry(&notices)).build().unwrap())
        .build()
        .unwrap();
    let err = agent.send("hi").await.unwrap_err();
    assert!(
        matches!(&err, AgentError::Model(ModelError::Authentication { status: 401, message, .. }) if message.contains("invalid x-api-key")),
        "{err:?}"
    );
    assert_eq!(mock.requests().len(), 1);
    assert!(notices.lock().unwrap().is_empty());
    assert!(!format!("{err:?}{err}").contains(SECRET));
}

#[tokio::test]
async fn overloaded_529_is_retried_up_to_the_bound_then_an_overloaded_error() {
    let mock = MockProvider::anthropic()
        .replies((0..5).map(|_| MockReply::error(529, "overloaded_error", "Overloaded")))
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let model = provider(&mock)
        .retry(fast_retry(&notices).max_retries(3))
        .build()
        .unwrap();
    let err = collect(&model, &ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Overloaded { status: 529, message, .. } if message.contains("Overloaded")),
        "{err:?}"
    );
    assert_eq!(mock.requests().len(), 4);
    assert_eq!(notices.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn errors_in_the_stream_are_typed_and_retried_only_before_output() {
    let mock = MockProvider::anthropic()
        .reply(MockReply::new().stream_error("overloaded_error", "Overloaded"))
        .reply(MockReply::text_reply("second try"))
        .reply(
            MockReply::new()
                .text("partial ")
                .stream_error("overloaded_error", "Overloaded again"),
        )
        .reply(MockReply::error(
            400,
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
        ))
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let model = provider(&mock).retry(fast_retry(&notices)).build().unwrap();
    let request = ModelRequest::new(vec![Message::user("hi")]);
    let events = collect(&model, &request).await.unwrap();
    assert_eq!(events[0], ModelEvent::TextDelta("second ".into()));
    assert_eq!(notices.lock().unwrap().len(), 1);

    let mut stream = model.stream(&request);
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ModelEvent::TextDelta("partial ".into())
    );
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(
        matches!(&err, ModelError::Overloaded { status: 529, .. }),
        "{err:?}"
    );
    drop(stream);
    assert_eq!(
        notices.lock().unwrap().len(),
        1,
        "no retry after output started"
    );

    let err = collect(&model, &request).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::ContextLengthExceeded { message, .. } if message.contains("prompt is too long")),
        "{err:?}"
    );
    assert_eq!(mock.requests().len(), 4);
}

#[tokio::test]
async fn malformed_sse_and_truncated_streams_are_errors() {
    let mock = MockProvider::anthropic()
        .reply(MockReply::raw_sse("event: message_start\ndata: {\"type\": \"message_start\", \"message\": {\n\n"))
        .reply(MockReply::raw_sse(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n\
             event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
        ))
        .start()
        .await;
    let model = provider(&mock)
        .retry(lousho::model::RetryPolicy::none())
        .build()
        .unwrap();
    let request = ModelRequest::new(vec![Message::user("hi")]);
    let err = collect(&model, &request).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::InvalidResponse { message, .. } if message.contains("cannot parse")),
        "{err:?}"
    );
    let err = collect(&model, &request).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::InvalidResponse { message, .. } if message.contains("never started")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_mid_stream_disconnect_after_output_is_a_network_error() {
    let mock = MockProvider::anthropic()
        .reply(MockReply::text_reply("one two three").disconnect_after(4))
        .start()
        .await;
    let model = provider(&mock).build().unwrap();
    let mut stream = model.stream(&ModelRequest::new(vec![Message::user("hi")]));
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ModelEvent::TextDelta("one ".into())
    );
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(&err, ModelError::Network { .. }), "{err:?}");
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn cancelling_mid_stream_closes_the_connection_promptly() {
    let mock = MockProvider::anthropic()
        .reply(MockReply::text_reply("Hello there").hold())
        .start()
        .await;
    let agent = Agent::builder()
        .model(provider(&mock).build().unwrap())
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let mut stream = agent.send("hi").cancel(cancel.clone()).stream();
    assert!(matches!(
        stream.next().await,
        Some(Ok(AgentEvent::TextDelta(_)))
    ));
    cancel.cancel();
    assert!(
        mock.wait_for_disconnect(Duration::from_secs(10)).await,
        "the server never saw the client go"
    );
}

#[tokio::test]
async fn model_strings_settings_and_a_multi_turn_session_are_sent_correctly() {
    let mock = MockProvider::anthropic()
        .require_api_key(SECRET)
        .reply(MockReply::text_reply("first"))
        .reply(MockReply::text_reply("second"))
        .start()
        .await;
    let e = env(&[
        ("ANTHROPIC_API_KEY", SECRET),
        ("ANTHROPIC_BASE_URL", &mock.base_url()),
    ]);
    let model = resolve_model_with_env("anthropic/claude-haiku-4-5", &e).unwrap();
    assert_eq!(model.name(), "anthropic/claude-haiku-4-5");
    let agent = Agent::builder()
        .model(model)
        .settings(ModelSettings::default().max_tokens(512).temperature(0.1))
        .build()
        .unwrap();
    let session = agent.session();
    assert_eq!(session.send("one").await.unwrap().text, "first");
    assert_eq!(session.send("two").await.unwrap().text, "second");
    let body = &mock.requests()[1].body;
    assert_eq!(body["model"], "claude-haiku-4-5");
    assert_eq!(body["max_tokens"], 512);
    assert_eq!(
        body["temperature"], 0.1,
        "the f32 is sent as the decimal written"
    );
    assert!(body.get("system").is_none());
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "one", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [{"type": "text", "text": "first"}]},
            {"role": "user", "content": [{"type": "text", "text": "two", "cache_control": {"type": "ephemeral"}}]},
        ])
    );
}

#[tokio::test]
async fn a_503_with_retry_after_waits_that_long() {
    let mock = MockProvider::anthropic()
        .reply(
            MockReply::error(503, "api_error", "Service unavailable")
                .header("retry-after-ms", "40"),
        )
        .reply(MockReply::text_reply("back"))
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let model = provider(&mock).retry(fast_retry(&notices)).build().unwrap();
    let events = collect(&model, &ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(events[0], ModelEvent::TextDelta("back".into()));
    assert_eq!(
        *notices.lock().unwrap(),
        [(1, Duration::from_millis(40), true)]
    );
}
