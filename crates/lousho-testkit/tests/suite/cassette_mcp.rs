//! Cassettes, MCP side: a run against the OpenAI- and Anthropic-shaped mocks
//! with two MCP servers — the stdio fixture (a real child process) and the
//! HTTP fixture (loopback, with a bearer token) — recorded, then replayed
//! with the HTTP server stopped: the same reply and tool calls, no process
//! spawned, no request to the mock, no secret in the file; a changed prompt
//! or tool description fails the replay naming it. The setup is shared
//! with the command line's test (`lousho_testkit::cassette`).

use super::fixture::{fixture, logged_pids, scratch};
use lousho::cassette::{Cassette, Outcome};
use lousho::mcp::ConnectOptions;
use lousho::model::{Anthropic, ModelRef, OpenAi};
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentBuilder, McpServer, ToolContext, ToolOutput, connect_mcp};
use lousho_testkit::cassette::{
    API_KEY, ENV_SECRET, ENV_VAR, MESSAGE, PROMPT, REPLY, assert_bearer_sent, assert_cassette_text,
    assert_mismatch, authorization, mock, script,
};
use lousho_testkit::mcp_fixture::serve_http;
use lousho_testkit::mock_provider::{MockProvider, Wire};
use serde_json::{Value, json};
use std::path::Path;

/// The tool description the run was recorded with.
const DESCRIPTION: &str = "Keeps a note";

fn servers(log: &Path, url: &str) -> [(&'static str, McpServer); 2] {
    [
        (
            "local",
            fixture("serve")
                .env("FIXTURE_SPAWN_LOG", log.to_string_lossy())
                .env(ENV_VAR, ENV_SECRET),
        ),
        (
            "remote",
            McpServer::http(url).header("Authorization", authorization()),
        ),
    ]
}

/// An own tool beside the servers' (never called), described as given.
fn note(description: &str) -> DefinedTool {
    DefinedTool::from_json(
        "note",
        description,
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |_input: Value, _ctx: ToolContext| async { ToolOutput::text("noted") },
    )
}

fn agent(prompt: &str, description: &str, log: &Path, url: &str) -> AgentBuilder {
    Agent::builder()
        .prompt(prompt)
        .tool(note(description))
        .mcp_servers(servers(log, url))
}

/// The stdio fixture's `env` tool returns the secret.
fn env_script() -> [lousho_testkit::mock_provider::MockReply; 2] {
    script("env", json!({"name": ENV_VAR}))
}

async fn records_and_replays(mock: MockProvider, model: ModelRef, name: &str) {
    let dir = scratch(name);
    let path = dir.join("run.cassette");
    let log = dir.join("spawns.log");
    let http = serve_http(false).await;
    let url = http.url.clone();

    let recorded = agent(PROMPT, DESCRIPTION, &log, &url)
        .model(model)
        .record(&path, MESSAGE)
        .await
        .unwrap();
    assert_eq!(recorded.text, REPLY);
    let outputs: Vec<String> = recorded
        .tool_calls
        .iter()
        .map(|r| r.output.to_model_text())
        .collect();
    assert!(
        outputs.iter().any(|o| o.contains(ENV_SECRET)),
        "{outputs:?}"
    );
    assert!(outputs.iter().any(|o| o.contains("hello")), "{outputs:?}");
    assert_bearer_sent(&http);
    let served = mock.requests().len();
    assert_eq!(served, 2);
    assert_eq!(logged_pids(&log, "serve").len(), 1);

    assert_cassette_text(&std::fs::read_to_string(&path).unwrap());

    // Everything stopped: the HTTP server is gone, the stdio one is not
    // started again, the mock hears nothing.
    http.stop().await;
    let replayed = agent(PROMPT, DESCRIPTION, &log, &url)
        .replay(&path)
        .await
        .unwrap();
    assert_eq!(replayed.text, recorded.text);
    assert_eq!(Outcome::of(&replayed), Outcome::of(&recorded));
    let calls: Vec<(&str, &serde_json::Value)> = replayed
        .tool_calls
        .iter()
        .map(|r| (r.call.name.as_str(), &r.call.arguments))
        .collect();
    assert_eq!(
        calls,
        [
            ("local__env", &json!({"name": ENV_VAR})),
            ("remote__echo", &json!({"text": "hello"}))
        ]
    );
    assert!(
        replayed.tool_calls[0]
            .output
            .to_model_text()
            .contains("[REDACTED]"),
        "{:?}",
        replayed.tool_calls[0].output
    );
    assert_eq!(
        logged_pids(&log, "serve").len(),
        1,
        "the replay spawned the server"
    );
    assert_eq!(mock.requests().len(), served, "the replay reached the mock");

    // A changed prompt fails naming it.
    let err = agent("You check one server.", DESCRIPTION, &log, &url)
        .replay(&path)
        .await
        .unwrap_err();
    assert_mismatch(
        &err,
        "model request 1",
        r#"system: "You check both servers." → "You check one server.""#,
    );

    // So does a changed tool description, named by tool.
    let err = agent(PROMPT, "Keeps a memo", &log, &url)
        .replay(&path)
        .await
        .unwrap_err();
    assert_mismatch(
        &err,
        "model request 1",
        r#"tools["note"].description: "Keeps a note" → "Keeps a memo""#,
    );
    assert_eq!(logged_pids(&log, "serve").len(), 1);
    assert_eq!(mock.requests().len(), served);
}

#[tokio::test]
async fn a_run_with_two_mcp_servers_recorded_against_the_openai_mock_replays_offline() {
    let mock = mock(Wire::OpenAi, env_script()).await;
    let model = OpenAi::builder("gpt-test")
        .api_key(API_KEY)
        .base_url(mock.base_url());
    records_and_replays(mock, model.into(), "cassette-openai").await;
}

#[tokio::test]
async fn a_run_with_two_mcp_servers_recorded_against_the_anthropic_mock_replays_offline() {
    let mock = mock(Wire::Anthropic, env_script()).await;
    let model = Anthropic::builder("claude-test")
        .api_key(API_KEY)
        .base_url(mock.base_url());
    records_and_replays(mock, model.into(), "cassette-anthropic").await;
}

#[tokio::test]
async fn a_replayed_call_with_other_arguments_fails_naming_them() {
    let dir = scratch("cassette-args");
    let path = dir.join("calls.cassette");
    let log = dir.join("spawns.log");
    let http = serve_http(false).await;
    let url = http.url.clone();

    // Recorded through connect_mcp, without an agent.
    let cassette = Cassette::record(&path);
    let mcp = connect_mcp(
        servers(&log, &url),
        ConnectOptions::new().cassette(cassette.clone()),
    )
    .await
    .unwrap();
    let echo = mcp.tools().get("remote__echo").unwrap().clone();
    let out = echo
        .call(json!({"text": "hello"}), ToolContext::new("t"))
        .await
        .unwrap();
    assert!(out.to_model_text().contains("hello"));
    mcp.close().await;
    cassette.save(&Outcome::default()).unwrap();
    assert_eq!(cassette.summary().tool_calls.get("remote"), Some(&1));
    http.stop().await;

    let replay = Cassette::replay(&path).unwrap();
    let mcp = connect_mcp(
        servers(&log, &url),
        ConnectOptions::new().cassette(replay.clone()),
    )
    .await
    .unwrap();
    let echo = mcp.tools().get("remote__echo").unwrap().clone();
    let other = echo
        .call(json!({"text": "bye"}), ToolContext::new("t"))
        .await;
    let message = match other {
        Ok(out) => out.to_model_text(),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("tools/call"), "{message}");
    let same = echo
        .call(json!({"text": "hello"}), ToolContext::new("t"))
        .await
        .unwrap();
    assert!(same.to_model_text().contains("hello"), "{same:?}");
    mcp.close().await;
    let err = replay.check().unwrap_err().to_string();
    assert!(err.contains("MCP server `remote`: tools/call"), "{err}");
    assert!(err.contains(r#"arguments.text: "hello" → "bye""#), "{err}");
    assert_eq!(
        logged_pids(&log, "serve").len(),
        1,
        "the replay spawned the server"
    );
}
