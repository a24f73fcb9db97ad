//! Hooks around model and tool calls (issue 35 §7), against the OpenAI mock
//! over loopback HTTP: a hook refuses a tool call that would carry a secret
//! (the tool does not run, the model gets the refusal as the call's error
//! result), hooks change a tool's result and the model's request in order,
//! and a hook that refuses a model request ends the run with a typed error.

use super::providers_common::{SECRET, openai_at, weather_tool};
use futures::StreamExt;
use lousho::agent::hooks::{self, HookError, ToolVerdict};
use lousho::model::{Message, OpenAi};
use lousho::{Agent, AgentError, AgentEvent};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn model(mock: &MockProvider) -> OpenAi {
    openai_at(mock).build().unwrap()
}

/// The content of the tool message in a request's body.
fn tool_message(body: &serde_json::Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_hook_refuses_a_tool_call_carrying_a_secret() {
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call(
            "call_1",
            "get_weather",
            json!({"city": format!("Paris {SECRET}")}),
        ))
        .reply(MockReply::text_reply("I cannot send that."))
        .start()
        .await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(model(&mock))
        .tool(weather_tool(calls.clone()))
        .hook(hooks::before_tool(|call| {
            if call.arguments.to_string().contains("sk-") {
                return Ok(ToolVerdict::refuse(
                    "an API key may not leave in a tool argument",
                ));
            }
            Ok(ToolVerdict::Allow)
        }))
        .build()
        .unwrap();
    let mut events = agent.send("Weather?").stream();
    let mut finished = Vec::new();
    let mut started = 0;
    let mut reply = None;
    while let Some(event) = events.next().await {
        match event.unwrap() {
            AgentEvent::ToolCallStarted(_) => started += 1,
            AgentEvent::ToolCallFinished { output, .. } => finished.push(output),
            AgentEvent::Done(r) => reply = Some(r),
            _ => {}
        }
    }
    let reply = reply.unwrap();
    assert_eq!(reply.text, "I cannot send that.");
    assert!(calls.lock().unwrap().is_empty(), "the tool did not run");
    assert_eq!(started, 0);
    assert_eq!(finished.len(), 1);
    assert!(finished[0].is_error);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let refusal = tool_message(&requests[1].body);
    assert!(
        refusal.contains("was refused: an API key may not leave in a tool argument"),
        "{refusal}"
    );
    assert_eq!(reply.tool_calls.len(), 1);
    assert!(reply.tool_calls[0].output.is_error);
}

#[tokio::test]
async fn hooks_change_arguments_results_and_requests_in_order() {
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("call_1", "get_weather", json!({"city": "paris"})))
        .reply(MockReply::text_reply("Done."))
        .start()
        .await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let order = Arc::new(Mutex::new(Vec::new()));
    let (o1, o2) = (order.clone(), order.clone());
    let agent = Agent::builder()
        .model(model(&mock))
        .tool(weather_tool(calls.clone()))
        .hook(hooks::before_tool(move |call| {
            o1.lock().unwrap().push("first");
            call.arguments = json!({"city": "Paris"});
            Ok(ToolVerdict::Allow)
        }))
        .hook(hooks::before_tool(move |call| {
            o2.lock().unwrap().push("second");
            assert_eq!(call.arguments["city"], "Paris", "the first hook ran first");
            Ok(ToolVerdict::Allow)
        }))
        .hook(hooks::after_tool(|_, output| {
            *output = lousho::ToolOutput::text("[redacted]");
            Ok(())
        }))
        .hook(hooks::before_model(|request| {
            request.system = Some("Be brief.".into());
            Ok(())
        }))
        .build()
        .unwrap();
    let reply = agent.send("Weather?").await.unwrap();
    assert_eq!(reply.text, "Done.");
    assert_eq!(*calls.lock().unwrap(), ["Paris"]);
    assert_eq!(*order.lock().unwrap(), ["first", "second"]);
    assert_eq!(reply.tool_calls[0].call.arguments, json!({"city": "Paris"}));
    let requests = mock.requests();
    assert_eq!(tool_message(&requests[1].body), "[redacted]");
    for r in &requests {
        assert_eq!(r.body["messages"][0]["content"], "Be brief.");
    }
    // The conversation shows the call as it ran.
    let assistant = reply
        .messages
        .iter()
        .find(|m| m.tool_calls().next().is_some());
    assert_eq!(
        assistant.unwrap().tool_calls().next().unwrap().arguments,
        json!({"city": "Paris"})
    );
}

#[tokio::test]
async fn a_hook_refusing_the_model_request_ends_the_run_with_a_typed_error() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("never sent"))
        .start()
        .await;
    let agent = Agent::builder()
        .model(model(&mock))
        .hook(hooks::before_model(|request| {
            if request
                .messages
                .iter()
                .any(|m: &Message| m.text().contains("forbidden"))
            {
                return Err(HookError::refuse("the input is off limits"));
            }
            Ok(())
        }))
        .build()
        .unwrap();
    let err = agent.send("something forbidden").await.unwrap_err();
    assert!(
        matches!(&err, AgentError::Hook(HookError::Refused { reason }) if reason == "the input is off limits"),
        "{err:?}"
    );
    assert!(mock.requests().is_empty(), "nothing went to the model");
}

#[tokio::test]
async fn a_panicking_hook_fails_the_run() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("hi"))
        .start()
        .await;
    let agent = Agent::builder()
        .model(model(&mock))
        .hook(hooks::after_model(|_| panic!("hook bug")))
        .build()
        .unwrap();
    let err = agent.send("hello").await.unwrap_err();
    assert!(
        matches!(&err, AgentError::Hook(HookError::Panicked(m)) if m == "hook bug"),
        "{err:?}"
    );
}
