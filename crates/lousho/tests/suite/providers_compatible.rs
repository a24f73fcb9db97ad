//! OpenRouter, Ollama and other OpenAI-compatible servers: model strings,
//! base URLs, keys and headers, against the OpenAI mock over loopback HTTP.

use super::providers_common::{SECRET, env};
use lousho::model::{ModelSettings, OpenAi, RetryPolicy, resolve_model_with_env};
use lousho::{Agent, Model};
use lousho_testkit::mock_provider::{MockProvider, MockReply};

#[tokio::test]
async fn openrouter_sends_the_vendor_model_and_attribution_headers() {
    let mock = MockProvider::openai()
        .require_api_key(SECRET)
        .reply(MockReply::text_reply("hi"))
        .start()
        .await;
    let model = OpenAi::openrouter("anthropic/claude-haiku-4-5")
        .base_url(mock.base_url())
        .api_key(SECRET)
        .attribution("https://example.com/app", "Example App")
        .build()
        .unwrap();
    assert_eq!(model.name(), "openrouter/anthropic/claude-haiku-4-5");
    let agent = Agent::builder()
        .model(model)
        .settings(ModelSettings::default().max_tokens(100))
        .build()
        .unwrap();
    assert_eq!(agent.send("hi").await.unwrap().text, "hi");
    let request = &mock.requests()[0];
    assert_eq!(request.body["model"], "anthropic/claude-haiku-4-5");
    assert_eq!(request.body["max_tokens"], 100);
    assert_eq!(
        request.header("http-referer"),
        Some("https://example.com/app")
    );
    assert_eq!(request.header("x-title"), Some("Example App"));
    assert_eq!(request.header("x-openrouter-title"), Some("Example App"));
}

#[tokio::test]
async fn model_strings_use_the_base_url_and_key_variables() {
    let openai = MockProvider::openai()
        .require_api_key(SECRET)
        .reply(MockReply::text_reply("from openai"))
        .start()
        .await;
    let ollama = MockProvider::openai()
        .reply(MockReply::text_reply("from ollama"))
        .start()
        .await;
    let e = env(&[
        ("OPENAI_API_KEY", SECRET),
        ("OPENAI_BASE_URL", &openai.base_url()),
        ("OLLAMA_BASE_URL", &ollama.base_url()),
    ]);

    let model = resolve_model_with_env("openai/gpt-4o-mini", &e).unwrap();
    let settings = ModelSettings::default().max_tokens(64);
    let agent = Agent::builder()
        .model(model)
        .settings(settings.clone())
        .build()
        .unwrap();
    assert_eq!(agent.send("hi").await.unwrap().text, "from openai");
    let body = &openai.requests()[0].body;
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(
        body["max_completion_tokens"], 64,
        "OpenAI's reasoning models reject max_tokens"
    );

    let model = resolve_model_with_env("ollama/llama3.2:3b", &e).unwrap();
    let agent = Agent::builder()
        .model(model)
        .settings(settings)
        .build()
        .unwrap();
    assert_eq!(agent.send("hi").await.unwrap().text, "from ollama");
    let request = &ollama.requests()[0];
    assert_eq!(request.body["model"], "llama3.2:3b");
    assert_eq!(request.body["max_tokens"], 64);
    assert_eq!(request.header("authorization"), None, "Ollama gets no key");
}

#[tokio::test]
async fn a_compatible_server_without_a_key_gets_no_authorization_header() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("local"))
        .start()
        .await;
    let agent = Agent::builder()
        .model(
            OpenAi::compatible(mock.base_url(), "qwen2.5")
                .retry(RetryPolicy::none())
                .include_usage(false),
        )
        .build()
        .unwrap();
    assert_eq!(agent.model_name(), "openai-compatible/qwen2.5");
    assert_eq!(agent.send("hi").await.unwrap().text, "local");
    let request = &mock.requests()[0];
    assert_eq!(request.header("authorization"), None);
    assert!(request.body.get("stream_options").is_none());
}
