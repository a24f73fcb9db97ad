//! A spec's `modelOptions`: the provider's base URL, temperature and
//! output-token limit reach the provider's request.

use super::common::{lousho, spec_file, stderr, stdout};
use lousho_testkit::mock_provider::{MockProvider, MockReply};

#[tokio::test(flavor = "multi_thread")]
async fn a_spec_sets_the_base_url_temperature_and_max_output_tokens() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("hi from the mock"))
        .start()
        .await;
    let (_dir, spec) = spec_file(
        "agent.yaml",
        &format!(
            "model: openai/gpt-test\nmodelOptions:\n  baseUrl: {}\n  temperature: 0.25\n  maxOutputTokens: 77\n",
            mock.base_url()
        ),
    );
    let mut cmd = tokio::process::Command::from(lousho());
    cmd.env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/never-used")
        .args(["run", &spec, "hello"]);
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("hi from the mock"),
        "{}",
        stdout(&out)
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["temperature"], 0.25);
    let max = body
        .get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"));
    assert_eq!(max, Some(&serde_json::json!(77)), "{body}");
}

#[test]
fn out_of_range_model_options_are_spec_errors_naming_the_key() {
    for (options, key) in [
        ("temperature: 3", "modelOptions.temperature"),
        ("maxOutputTokens: 0", "modelOptions.maxOutputTokens"),
        ("baseUrl: not a url", "modelOptions.baseUrl"),
    ] {
        let (_dir, spec) = spec_file(
            "agent.yaml",
            &format!("model: openai/gpt-test\nmodelOptions:\n  {options}\n"),
        );
        let out = lousho().args(["tools", &spec]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{options}: {}", stderr(&out));
        assert!(stderr(&out).contains(key), "{options}: {}", stderr(&out));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spec_asks_for_thinking_and_run_thinking_shows_it_on_stderr() {
    let mock = MockProvider::anthropic()
        .reply(
            MockReply::new()
                .thinking("First I weigh the options.")
                .text("hi from the mock"),
        )
        .start()
        .await;
    let (_dir, spec) = spec_file(
        "agent.yaml",
        &format!(
            "model: anthropic/claude-test\nmodelOptions:\n  baseUrl: {}\n  thinkingBudget: 2000\n",
            mock.base_url()
        ),
    );
    let mut cmd = tokio::process::Command::from(lousho());
    cmd.env("ANTHROPIC_API_KEY", "sk-test")
        .args(["run", &spec, "hello", "--thinking"]);
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "hi from the mock");
    assert!(
        stderr(&out).contains("· First I weigh the options."),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        mock.requests()[0].body["thinking"],
        serde_json::json!({"type": "enabled", "budget_tokens": 2000})
    );
}
