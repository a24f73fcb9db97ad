//! The OpenAI Chat Completions provider (and OpenRouter, Ollama, compatible
//! servers) against the wire-faithful mock, over loopback HTTP.

use super::providers_common::{SECRET, fast_retry, openai_at, weather_tool};
use futures::StreamExt;
use lousho::model::{FinishReason, OpenAi};
use lousho::model::{Message, ModelError, ModelEvent, ModelRequest, ToolCall, Usage};
use lousho::{Agent, AgentError, AgentEvent, CancellationToken, Model};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn args(call: &Value) -> Value {
    serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap()
}

async fn collect(model: &OpenAi, request: &ModelRequest) -> Result<Vec<ModelEvent>, ModelError> {
    let mut stream = model.stream(request);
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        events.push(e?);
    }
    Ok(events)
}

#[tokio::test]
async fn the_agent_loop_runs_a_tool_and_sends_messages_tools_and_results() {
    let mock = MockProvider::openai()
        .require_api_key(SECRET)
        .reply(
            MockReply::new()
                .text("Let me check.")
                .fragments(6)
                .tool_call("call_1", "get_weather", json!({"city": "Paris"}))
                .usage(11, 7),
        )
        .reply(MockReply::text_reply("It is sunny in Paris.").usage(20, 5))
        .start()
        .await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(openai_at(&mock).build().unwrap())
        .prompt("You are a weather bot.")
        .tool(weather_tool(calls.clone()))
        .build()
        .unwrap();
    let reply = agent.send("Weather in Paris?").await.unwrap();

    assert_eq!(reply.text, "It is sunny in Paris.");
    assert_eq!(*calls.lock().unwrap(), ["Paris"]);
    assert_eq!(reply.usage, Usage::new(31, 12));
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);

    let first = &requests[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(
        first.header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    assert_eq!(first.header("content-type"), Some("application/json"));
    assert_eq!(first.body["model"], "gpt-test");
    assert_eq!(first.body["stream"], true);
    assert_eq!(first.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        first.body["messages"],
        json!([
            {"role": "system", "content": "You are a weather bot."},
            {"role": "user", "content": "Weather in Paris?"},
        ])
    );
    let tool = &first.body["tools"][0];
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["name"], "get_weather");
    assert_eq!(
        tool["function"]["description"],
        "Current weather for a city"
    );
    assert_eq!(tool["function"]["parameters"]["type"], "object");
    assert_eq!(
        tool["function"]["parameters"]["properties"]["city"]["type"],
        "string"
    );
    assert_eq!(tool["function"]["parameters"]["required"], json!(["city"]));

    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], "Let me check.");
    let call = &messages[2]["tool_calls"][0];
    assert_eq!(call["id"], "call_1");
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "get_weather");
    assert_eq!(args(call), json!({"city": "Paris"}));
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny in Paris"})
    );
}

#[tokio::test]
async fn two_tool_calls_in_one_turn_both_run_and_both_results_go_back() {
    let mock = MockProvider::openai()
        .reply(
            MockReply::new()
                .fragments(7)
                .tool_call("call_a", "get_weather", json!({"city": "Oslo"}))
                .fragments(2)
                .tool_call("call_b", "get_weather", json!({"city": "Lima"})),
        )
        .reply(MockReply::text_reply("Both sunny."))
        .start()
        .await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(openai_at(&mock).build().unwrap())
        .tool(weather_tool(calls.clone()))
        .build()
        .unwrap();
    let reply = agent.send("Oslo and Lima?").await.unwrap();
    assert_eq!(reply.text, "Both sunny.");
    let mut cities = calls.lock().unwrap().clone();
    cities.sort();
    assert_eq!(cities, ["Lima", "Oslo"]);

    let messages = mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let assistant = &messages[1];
    assert_eq!(assistant["content"], Value::Null);
    let sent: Vec<(Value, Value)> = assistant["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].clone(), args(c)))
        .collect();
    assert_eq!(
        sent,
        [
            (json!("call_a"), json!({"city": "Oslo"})),
            (json!("call_b"), json!({"city": "Lima"}))
        ]
    );
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "call_a", "content": "sunny in Oslo"})
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_b", "content": "sunny in Lima"})
    );
}

#[tokio::test]
async fn fragmented_arguments_are_reassembled_across_chunks() {
    // Fragments split inside a string escape and between key and value.
    let mock = MockProvider::openai()
        .reply(
            MockReply::new()
                .text_pieces(["Sea", "rching", "…"])
                .tool_call_fragments(
                    "c1",
                    "search",
                    ["{\"q\": \"a\\", "\"b\", \"n", "\": 4", "2}"],
                )
                .tool_call_fragments("c2", "noop", Vec::<String>::new())
                .usage(9, 4),
        )
        .start()
        .await;
    let model = openai_at(&mock).build().unwrap();
    let events = collect(&model, &ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(
        events,
        [
            ModelEvent::TextDelta("Sea".into()),
            ModelEvent::TextDelta("rching".into()),
            ModelEvent::TextDelta("…".into()),
            ModelEvent::ToolCall(ToolCall {
                id: "c1".into(),
                name: "search".into(),
                arguments: json!({"q": "a\"b", "n": 42})
            }),
            ModelEvent::ToolCall(ToolCall {
                id: "c2".into(),
                name: "noop".into(),
                arguments: json!({})
            }),
            ModelEvent::Usage(Usage::new(9, 4)),
            ModelEvent::Finished(FinishReason::ToolCalls),
        ]
    );
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_after_that_delay_then_succeeds() {
    let mock = MockProvider::openai()
        .reply(
            MockReply::error(
                429,
                "rate_limit_exceeded",
                "Rate limit reached for gpt-test",
            )
            .header("retry-after", "1"),
        )
        .reply(MockReply::text_reply("finally"))
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(
            openai_at(&mock)
                .retry(fast_retry(&notices))
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let reply = agent.send("hi").await.unwrap();
    assert_eq!(reply.text, "finally");
    assert_eq!(mock.requests().len(), 2);
    // The server's delay, not the 1 ms backoff.
    assert_eq!(
        *notices.lock().unwrap(),
        [(1, Duration::from_secs(1), true)]
    );
}

#[tokio::test]
async fn retry_after_ms_is_honoured_and_a_retry_after_past_the_cap_is_returned() {
    let mock = MockProvider::openai()
        .reply(
            MockReply::error(429, "rate_limit_exceeded", "slow down")
                .header("retry-after-ms", "25"),
        )
        .reply(MockReply::text_reply("ok"))
        .reply(
            MockReply::error(429, "rate_limit_exceeded", "slow down a lot")
                .header("retry-after", "120"),
        )
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let model = openai_at(&mock)
        .retry(fast_retry(&notices).max_retry_after(Duration::from_secs(60)))
        .build()
        .unwrap();
    let request = ModelRequest::new(vec![Message::user("hi")]);
    collect(&model, &request).await.unwrap();
    assert_eq!(
        *notices.lock().unwrap(),
        [(1, Duration::from_millis(25), true)]
    );

    let err = collect(&model, &request).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::RateLimited { retry_after: Some(d), message, .. } if *d == Duration::from_secs(120) && message.contains("slow down a lot")),
        "{err:?}"
    );
    assert_eq!(
        mock.requests().len(),
        3,
        "a Retry-After past the cap is not waited for"
    );
}

#[tokio::test]
async fn a_401_is_an_authentication_error_not_retried_and_the_key_is_scrubbed() {
    let mock = MockProvider::openai()
        .require_api_key("sk-the-right-key")
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(
            openai_at(&mock)
                .retry(fast_retry(&notices))
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let err = agent.send("hi").await.unwrap_err();
    assert!(
        matches!(
            &err,
            AgentError::Model(ModelError::Authentication { status: 401, .. })
        ),
        "{err:?}"
    );
    assert_eq!(mock.requests().len(), 1);
    assert!(notices.lock().unwrap().is_empty());
    // The mock echoes the wrong key in its message; lousho scrubs it.
    let (display, debug) = (err.to_string(), format!("{err:?}"));
    assert!(
        display.contains("Incorrect API key provided: [redacted]"),
        "{display}"
    );
    assert!(
        !display.contains(SECRET) && !debug.contains(SECRET),
        "{debug}"
    );
}

#[tokio::test]
async fn server_errors_are_retried_up_to_the_bound_then_returned() {
    let mock = MockProvider::openai()
        .replies((0..4).map(|_| MockReply::error(503, "server_error", "The server is overloaded")))
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let model = openai_at(&mock)
        .retry(fast_retry(&notices).max_retries(2))
        .build()
        .unwrap();
    let err = collect(&model, &ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Overloaded { status: 503, message, .. } if message.contains("overloaded")),
        "{err:?}"
    );
    assert_eq!(mock.requests().len(), 3);
    let attempts: Vec<(u32, bool)> = notices
        .lock()
        .unwrap()
        .iter()
        .map(|(a, _, r)| (*a, *r))
        .collect();
    assert_eq!(attempts, [(1, false), (2, false)]);
}

#[tokio::test]
async fn client_errors_are_typed_with_the_providers_message() {
    let mock = MockProvider::openai()
        .reply(MockReply::error(
            400,
            "context_length_exceeded",
            "This model's maximum context length is 128000 tokens.",
        ))
        .reply(MockReply::error(
            400,
            "invalid_request_error",
            "Invalid 'messages[1].content': string too long.",
        ))
        .reply(MockReply::error(
            429,
            "insufficient_quota",
            "You exceeded your current quota.",
        ))
        .start()
        .await;
    let model = openai_at(&mock).build().unwrap();
    let request = ModelRequest::new(vec![Message::user("hi")]);
    let err = collect(&model, &request).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::ContextLengthExceeded { message, .. } if message.contains("128000")),
        "{err:?}"
    );
    let err = collect(&model, &request).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::BadRequest { status: 400, message, .. } if message.contains("string too long")),
        "{err:?}"
    );
    let err = collect(&model, &request).await.unwrap_err();
    assert!(matches!(&err, ModelError::QuotaExceeded { .. }), "{err:?}");
    assert_eq!(mock.requests().len(), 3, "none of these is retried");
}

#[tokio::test]
async fn malformed_sse_is_an_invalid_response_error() {
    let mock = MockProvider::openai()
        .reply(MockReply::raw_sse(
            "data: {\"choices\": [{\"delta\": {\"content\": \"hi\"}}]}\n\ndata: {not json\n\n",
        ))
        .reply(MockReply::raw(
            200,
            "application/json",
            "{\"id\": \"not a stream\"}",
        ))
        .start()
        .await;
    let model = openai_at(&mock).build().unwrap();
    let request = ModelRequest::new(vec![Message::user("hi")]);
    let err = collect(&model, &request).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::InvalidResponse { message, .. } if message.contains("not json")),
        "{err:?}"
    );
    let err = collect(&model, &request).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::InvalidResponse { message, .. } if message.contains("event stream")),
        "{err:?}"
    );
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn a_disconnect_before_output_is_retried_but_never_after_output_started() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("lost").disconnect_after(1)) // only the role chunk
        .reply(MockReply::text_reply("recovered answer"))
        .reply(MockReply::text_reply("one two three four").disconnect_after(3))
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(
            openai_at(&mock)
                .retry(fast_retry(&notices))
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    assert_eq!(agent.send("a").await.unwrap().text, "recovered answer");
    assert_eq!(notices.lock().unwrap().len(), 1);

    let mut stream = agent.send("b").stream();
    let mut text = String::new();
    let err = loop {
        match stream.next().await.unwrap() {
            Ok(AgentEvent::TextDelta(t)) => text.push_str(&t),
            Ok(_) => {}
            Err(e) => break e,
        }
    };
    assert_eq!(text, "one two ");
    assert!(
        matches!(err, AgentError::Model(ModelError::Network { .. })),
        "{err:?}"
    );
    assert_eq!(
        mock.requests().len(),
        3,
        "no retry once text reached the caller"
    );
    assert_eq!(notices.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn cancelling_mid_stream_closes_the_connection_promptly() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("Hello there").hold())
        .start()
        .await;
    let agent = Agent::builder()
        .model(openai_at(&mock).build().unwrap())
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let mut stream = agent.send("hi").cancel(cancel.clone()).stream();
    assert!(matches!(
        stream.next().await,
        Some(Ok(AgentEvent::TextDelta(_)))
    ));
    assert_eq!(mock.disconnects(), 0);
    cancel.cancel();
    assert!(
        mock.wait_for_disconnect(Duration::from_secs(10)).await,
        "the server never saw the client go"
    );
    let rest: Vec<_> = stream.collect().await;
    assert!(
        rest.iter().any(|e| matches!(e, Err(AgentError::Cancelled))),
        "{rest:?}"
    );
}

#[tokio::test]
async fn dropping_the_model_stream_closes_the_connection() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("Hello there").hold())
        .start()
        .await;
    let model = openai_at(&mock).build().unwrap();
    let mut stream = model.stream(&ModelRequest::new(vec![Message::user("hi")]));
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ModelEvent::TextDelta("Hello ".into())
    );
    drop(stream);
    assert!(mock.wait_for_disconnect(Duration::from_secs(10)).await);
}

#[tokio::test]
async fn an_error_event_inside_the_stream_is_typed_and_retried_before_output() {
    let mock = MockProvider::openai()
        .reply(MockReply::new().stream_error("server_error", "upstream provider failed"))
        .reply(MockReply::text_reply("second try"))
        .reply(
            MockReply::new()
                .text("partial ")
                .stream_error("server_error", "upstream failed again"),
        )
        .start()
        .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let model = openai_at(&mock)
        .retry(fast_retry(&notices).max_retries(1))
        .build()
        .unwrap();
    let request = ModelRequest::new(vec![Message::user("hi")]);
    let events = collect(&model, &request).await.unwrap();
    assert_eq!(events[0], ModelEvent::TextDelta("second ".into()));
    let mut stream = model.stream(&request);
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ModelEvent::TextDelta("partial ".into())
    );
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(
        matches!(&err, ModelError::Server { message, .. } if message.contains("again")),
        "{err:?}"
    );
    assert!(stream.next().await.is_none());
    assert_eq!(mock.requests().len(), 3);
}

#[tokio::test]
async fn images_go_as_image_parts_and_failed_tool_results_say_so() {
    use lousho::model::{Part, Role};
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("call_x", "explode", json!({})))
        .reply(MockReply::text_reply("I see a cat; the tool failed."))
        .start()
        .await;
    let failing = lousho::tool::DefinedTool::from_json(
        "explode",
        "Always fails",
        json!({"type": "object", "properties": {}}),
        |_: Value, _: lousho::ToolContext| async { lousho::ToolOutput::error("disk on fire") },
    )
    .read_only();
    let agent = Agent::builder()
        .model(openai_at(&mock).build().unwrap())
        .tool(failing)
        .build()
        .unwrap();
    let input = Message {
        role: Role::User,
        parts: vec![
            Part::Text {
                text: "What is this?".into(),
            },
            Part::Image {
                data: "iVBORw0KGgo=".into(),
                mime_type: "image/png".into(),
            },
        ],
    };
    agent.send(input).await.unwrap();
    let messages = &mock.requests()[1].body["messages"];
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "call_x", "content": "Error: disk on fire"})
    );
}

#[tokio::test]
async fn events_decoded_before_an_error_in_the_same_chunk_come_first() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n\
                data: {\"error\":{\"message\":\"upstream boom\",\"type\":\"server_error\"}}\n\n";
    let mock = MockProvider::openai()
        .reply(MockReply::raw_sse(body))
        .start()
        .await;
    let model = openai_at(&mock)
        .retry(lousho::model::RetryPolicy::none())
        .build()
        .unwrap();
    let items: Vec<_> = model
        .stream(&ModelRequest::new(vec![Message::user("hi")]))
        .collect()
        .await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(
        items[0].as_ref().unwrap(),
        &ModelEvent::TextDelta("hi".into())
    );
    assert!(
        matches!(&items[1], Err(ModelError::Server { message, .. }) if message.contains("upstream boom")),
        "{items:?}"
    );
}
