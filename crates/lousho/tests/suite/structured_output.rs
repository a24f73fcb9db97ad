//! Typed structured output (issue 35 §1) against the wire-faithful mocks
//! over loopback HTTP (each refuses a schema its API would: an open object,
//! a property left out of `required` in OpenAI's strict mode): the schema
//! goes as OpenAI `response_format` / Anthropic `output_config.format`,
//! tools are still called before the answer, an answer that does not fit is
//! sent back with the error, and the retries run out into a typed error.

use super::providers_common::{SECRET, openai_at, weather_tool};
use lousho::agent::OutputError;
use lousho::model::{Anthropic, OutputSchema};
use lousho::{Agent, AgentError, JsonSchema};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Forecast {
    /// The city.
    city: String,
    /// One line about the weather.
    summary: String,
    /// Degrees Celsius, when known.
    celsius: Option<f64>,
}

#[tokio::test]
async fn openai_typed_output_after_a_tool_call() {
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("call_1", "get_weather", json!({"city": "Paris"})))
        .reply(MockReply::text_reply(
            r#"{"city": "Paris", "summary": "sunny", "celsius": null}"#,
        ))
        .start()
        .await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(openai_at(&mock).build().unwrap())
        .tool(weather_tool(calls.clone()))
        .build()
        .unwrap();
    let forecast = agent
        .send("Weather in Paris?")
        .output::<Forecast>()
        .await
        .unwrap();
    assert_eq!(
        forecast.value,
        Forecast {
            city: "Paris".into(),
            summary: "sunny".into(),
            celsius: None
        }
    );
    assert_eq!(*calls.lock().unwrap(), ["Paris"], "the tool ran first");
    assert_eq!(forecast.reply.output.as_ref().unwrap()["city"], "Paris");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "no request was refused");
    for r in &requests {
        let format = &r.body["response_format"];
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["json_schema"]["name"], "Forecast");
        assert_eq!(format["json_schema"]["strict"], true);
        let schema = &format["json_schema"]["schema"];
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["city", "summary", "celsius"]));
        assert_eq!(
            r.body["tools"][0]["function"]["name"], "get_weather",
            "tools stay offered"
        );
    }
}

fn anthropic(mock: &MockProvider) -> Anthropic {
    Anthropic::builder("claude-sonnet-4-5")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .build()
        .unwrap()
}

#[tokio::test]
async fn anthropic_an_answer_that_does_not_fit_is_sent_back_with_the_error() {
    let mock = MockProvider::anthropic()
        .reply(MockReply::text_reply("It is sunny in Paris!"))
        .reply(MockReply::text_reply(r#"{"city": "Paris"}"#))
        .reply(MockReply::text_reply(
            "```json\n{\"city\": \"Paris\", \"summary\": \"sunny\", \"celsius\": 21.5}\n```",
        ))
        .start()
        .await;
    let agent = Agent::builder().model(anthropic(&mock)).build().unwrap();
    let forecast = agent
        .send("Weather in Paris?")
        .output::<Forecast>()
        .await
        .unwrap();
    assert_eq!(forecast.value.celsius, Some(21.5));
    assert_eq!(forecast.reply.turns, 3);
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let format = &requests[0].body["output_config"]["format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["schema"]["additionalProperties"], false);
    // Each retry carries what was wrong with the answer before.
    let last_user = |i: usize| {
        let messages = requests[i].body["messages"].as_array().unwrap();
        messages.last().unwrap()["content"].to_string()
    };
    assert!(last_user(1).contains("is not JSON"), "{}", last_user(1));
    assert!(
        last_user(2).contains("missing field `summary`"),
        "{}",
        last_user(2)
    );
}

#[tokio::test]
async fn retries_run_out_into_a_typed_error() {
    let mock = MockProvider::anthropic()
        .reply(MockReply::text_reply("no JSON here"))
        .reply(MockReply::text_reply("still none"))
        .start()
        .await;
    let agent = Agent::builder().model(anthropic(&mock)).build().unwrap();
    let err = agent
        .send("Weather?")
        .output::<Forecast>()
        .retries(1)
        .await
        .unwrap_err();
    let AgentError::Output(OutputError {
        attempts,
        text,
        schema,
        ..
    }) = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(
        (*attempts, text.as_str(), schema.as_str()),
        (2, "still none", "Forecast")
    );
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn an_untyped_schema_is_checked_and_kept_in_the_reply() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply(r#"{"answer": "yes"}"#))
        .start()
        .await;
    let agent = Agent::builder()
        .model(openai_at(&mock).build().unwrap())
        .output_schema(OutputSchema::new(
            "verdict",
            json!({"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}}}),
        ))
        .build()
        .unwrap();
    let reply = agent.send("Is it sunny?").await.unwrap();
    assert_eq!(reply.output, Some(json!({"answer": "yes"})));
    assert_eq!(
        mock.requests()[0].body["response_format"]["json_schema"]["name"],
        "verdict"
    );
}

#[cfg(feature = "spec")]
#[tokio::test]
async fn a_spec_file_sets_the_output_schema() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("maybe"))
        .reply(MockReply::text_reply(r#"{"answer": "no"}"#))
        .start()
        .await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.yaml");
    std::fs::write(
        &path,
        "model: test\noutput:\n  name: verdict\n  schema:\n    type: object\n    properties:\n      answer: {enum: [\"yes\", \"no\"]}\n",
    )
    .unwrap();
    let spec = lousho::spec::SpecLoader::new()
        .without_env()
        .load(&path)
        .unwrap();
    assert_eq!(spec.output.as_ref().unwrap().name, "verdict");
    let model = openai_at(&mock).build().unwrap();
    let agent = spec.agent_builder().unwrap().model(model).build().unwrap();
    let reply = agent.send("Is it raining?").await.unwrap();
    assert_eq!(reply.output, Some(json!({"answer": "no"})));
    assert_eq!(reply.turns, 2, "the non-JSON answer was sent back");

    std::fs::write(&path, "model: test\noutput:\n  schema: 3\n").unwrap();
    let e = lousho::spec::SpecLoader::new()
        .without_env()
        .load(&path)
        .unwrap_err();
    assert!(e.to_string().contains("JSON Schema"), "{e}");
}
