//! Cassettes, model side: a run recorded against the OpenAI- and
//! Anthropic-shaped mocks (loopback HTTP) replays with no model, no key and
//! no request to the mock; a changed prompt or tool description fails
//! naming the change.

use lousho::agent::CassetteRunError;
use lousho::cassette::{Cassette, CassetteOptions, Matching, Outcome, Redaction};
use lousho::model::{Anthropic, ModelRef, OpenAi};
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentBuilder, JsonSchema, define_tool};
use lousho_testkit::cassette::assert_mismatch;
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

const KEY: &str = "sk-cassette-5e1f0a9b7c3d2e4f6a8b0c1d";
const PROMPT: &str = "You track orders.";

#[derive(Deserialize, JsonSchema)]
struct Order {
    /// The order number.
    id: String,
}

fn lookup(description: &str) -> DefinedTool {
    define_tool("lookup_order", description, |input: Order| async move {
        format!("order {} shipped on Monday", input.id)
    })
    .read_only()
}

/// The agent under test, without its model.
fn agent(prompt: &str, description: &str) -> AgentBuilder {
    Agent::builder().prompt(prompt).tool(lookup(description))
}

fn script() -> [MockReply; 2] {
    [
        MockReply::new()
            .text("Let me look.")
            .tool_call("call_1", "lookup_order", json!({"id": "42"}))
            .usage(30, 8),
        MockReply::text_reply("Order 42 shipped on Monday.").usage(50, 9),
    ]
}

async fn record(model: ModelRef, path: &Path) -> lousho::Reply {
    agent(PROMPT, "Looks an order up")
        .model(model)
        .record(path, "Where is order 42?")
        .await
        .unwrap()
}

async fn records_and_replays(mock: MockProvider, model: ModelRef) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.cassette");
    let recorded = record(model, &path).await;
    assert_eq!(recorded.text, "Order 42 shipped on Monday.");
    let served = mock.requests().len();
    assert_eq!(served, 2);

    // No model, no key: the cassette answers; the mock hears nothing.
    let replayed = agent(PROMPT, "Looks an order up")
        .replay(&path)
        .await
        .unwrap();
    assert_eq!(mock.requests().len(), served, "the replay reached the mock");
    assert_eq!(replayed.text, recorded.text);
    assert_eq!(Outcome::of(&replayed), Outcome::of(&recorded));
    assert_eq!(replayed.tool_calls.len(), 1);
    assert_eq!(replayed.tool_calls[0].call.arguments, json!({"id": "42"}));
    assert_eq!(replayed.usage, recorded.usage);

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(KEY), "the API key is in the cassette");
    assert!(text.starts_with(r#"{"kind":"header","format":1"#), "{text}");

    // A changed prompt: the first request differs, and the error says where.
    let err = agent("You track parcels.", "Looks an order up")
        .replay(&path)
        .await
        .unwrap_err();
    assert_mismatch(
        &err,
        "model request 1",
        r#"system: "You track orders." → "You track parcels.""#,
    );

    // A changed tool description: named by tool.
    let err = agent(PROMPT, "Finds an order")
        .replay(&path)
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains(
            r#"tools["lookup_order"].description: "Looks an order up" → "Finds an order""#
        ),
        "{message}"
    );

    // Lenient: in recorded order, without comparing.
    let lenient =
        Cassette::replay_with(&path, CassetteOptions::new().matching(Matching::InOrder)).unwrap();
    let reply = agent("You track parcels.", "Looks an order up")
        .cassette(lenient.clone())
        .build()
        .unwrap()
        .send_messages(lenient.input().unwrap())
        .await
        .unwrap();
    assert_eq!(reply.text, recorded.text);
    lenient.check().unwrap();
    assert_eq!(lenient.summary().model_turns, 2);
    assert_eq!(lenient.summary().usage.total(), 97);
    assert_eq!(mock.requests().len(), served);
}

#[tokio::test]
async fn a_run_recorded_against_the_openai_mock_replays_without_it() {
    let mock = MockProvider::openai()
        .require_api_key(KEY)
        .replies(script())
        .start()
        .await;
    let model = OpenAi::builder("gpt-test")
        .api_key(KEY)
        .base_url(mock.base_url());
    records_and_replays(mock, model.into()).await;
}

#[tokio::test]
async fn a_run_recorded_against_the_anthropic_mock_replays_without_it() {
    let mock = MockProvider::anthropic()
        .require_api_key(KEY)
        .replies(script())
        .start()
        .await;
    let model = Anthropic::builder("claude-test")
        .api_key(KEY)
        .base_url(mock.base_url());
    records_and_replays(mock, model.into()).await;
}

#[tokio::test]
async fn a_failed_run_leaves_the_recorded_cassette_as_it_was() {
    let mock = MockProvider::openai()
        .replies(script())
        .reply(MockReply::error(400, "invalid_request_error", "no"))
        .start()
        .await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.cassette");
    let model = || {
        OpenAi::builder("gpt-test")
            .api_key(KEY)
            .base_url(mock.base_url())
    };
    record(model().into(), &path).await;
    let before = std::fs::read_to_string(&path).unwrap();
    let err = agent(PROMPT, "Looks an order up")
        .model(model())
        .record(&path, "Where is order 42?")
        .await
        .unwrap_err();
    assert!(matches!(err, CassetteRunError::Run(_)), "{err:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

#[tokio::test]
async fn secrets_in_messages_are_redacted_and_replay_alike() {
    let mock = MockProvider::openai().replies(script()).start().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.cassette");
    let secret_tool = || {
        define_tool("lookup_order", "Looks an order up", |_: Order| async move {
            "shipped; courier token tok-9a8b7c6d5e4f".to_owned()
        })
    };
    let options = CassetteOptions::new().redaction(
        Redaction::new()
            .value("tok-9a8b7c6d5e4f")
            .pattern("sk-*")
            .unwrap(),
    );
    let cassette = Cassette::record_with(&path, options.clone());
    let input = vec!["Where is order 42? My key is sk-abcdef0123".into()];
    cassette.set_input(&input);
    let agent = Agent::builder()
        .prompt(PROMPT)
        .tool(secret_tool())
        .model(
            OpenAi::builder("gpt-test")
                .api_key(KEY)
                .base_url(mock.base_url()),
        )
        .cassette(cassette.clone())
        .build()
        .unwrap();
    let reply = agent.send_messages(input).await.unwrap();
    cassette.save(&Outcome::of(&reply)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in ["tok-9a8b7c6d5e4f", "sk-abcdef0123", KEY] {
        assert!(!text.contains(secret), "{secret} is in the cassette");
    }
    assert!(text.contains("[REDACTED]"));

    // The replay's requests are redacted before they are compared.
    let replay = Cassette::replay_with(&path, options).unwrap();
    let agent = Agent::builder()
        .prompt(PROMPT)
        .tool(secret_tool())
        .cassette(replay.clone())
        .build()
        .unwrap();
    let replayed = agent
        .send_messages(["Where is order 42? My key is sk-abcdef0123".into()])
        .await
        .unwrap();
    replay.check().unwrap();
    assert_eq!(replayed.text, reply.text);
}
