//! The setup of the cassette acceptance tests (issue 36), shared by the
//! library's (this crate's suite, `cassette_mcp`) and the command line's
//! (`lousho-cli`'s suite, `cassette`): a run against the OpenAI- or
//! Anthropic-shaped mock whose model calls a tool of a stdio MCP server
//! (`local`) and `echo` of the HTTP fixture (`remote`, sent a bearer token),
//! then answers [`REPLY`]; and the secrets a cassette of it must not hold.

use crate::mcp_fixture::HttpFixture;
use crate::mock_provider::{MockProvider, MockReply, Wire};
use lousho::agent::CassetteRunError;
use lousho::cassette::CassetteError;
use serde_json::{Value, json};

/// The provider's API key (the mock requires it).
pub const API_KEY: &str = "sk-cassette-mcp-0a1b2c3d4e5f6a7b";
/// The environment variable given to the stdio server.
pub const ENV_VAR: &str = "CASSETTE_TOKEN";
/// Its value: a secret the stdio server lets out in its answers.
pub const ENV_SECRET: &str = "env-secret-9f8e7d6c5b4a";
/// The HTTP server's bearer token.
pub const BEARER: &str = "bearer-secret-1234abcd5678";
/// The agent's system prompt.
pub const PROMPT: &str = "You check both servers.";
/// The message the run is sent.
pub const MESSAGE: &str = "Check both servers.";
/// The model's final answer.
pub const REPLY: &str = "Both servers answered.";

/// Every secret of the setup, to grep a cassette for.
pub const SECRETS: [&str; 3] = [API_KEY, ENV_SECRET, BEARER];

/// The `Authorization` header value the HTTP server is sent.
pub fn authorization() -> String {
    format!("Bearer {BEARER}")
}

/// The model's two turns: it calls `local__<local_tool>` with
/// `local_arguments` and `remote__echo` with `{"text": "hello"}`, then
/// answers [`REPLY`].
pub fn script(local_tool: &str, local_arguments: Value) -> [MockReply; 2] {
    [
        MockReply::new()
            .tool_call("call_1", &format!("local__{local_tool}"), local_arguments)
            .tool_call("call_2", "remote__echo", json!({"text": "hello"}))
            .usage(40, 12),
        MockReply::text_reply(REPLY).usage(70, 6),
    ]
}

/// The mock speaking `wire`, requiring [`API_KEY`], answering `script`.
pub async fn mock(wire: Wire, script: [MockReply; 2]) -> MockProvider {
    let builder = match wire {
        Wire::OpenAi => MockProvider::openai(),
        Wire::Anthropic => MockProvider::anthropic(),
    };
    builder
        .require_api_key(API_KEY)
        .replies(script)
        .start()
        .await
}

/// Panics unless the HTTP server was sent the bearer token.
pub fn assert_bearer_sent(http: &HttpFixture) {
    let expected = authorization();
    assert!(
        http.seen_headers
            .lock()
            .unwrap()
            .iter()
            .any(|h| h.get("authorization") == Some(&expected)),
        "the bearer token was not sent"
    );
}

/// Panics when a cassette's text holds a secret of the setup, or lacks a
/// `tools/call` of either server.
pub fn assert_cassette_text(text: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "{secret} is in the cassette:\n{text}"
        );
    }
    for server in ["local", "remote"] {
        assert!(
            text.contains(&format!(
                r#""kind":"mcp","server":"{server}","method":"tools/call""#
            )),
            "no call of {server} in:\n{text}"
        );
    }
}

/// Asserts that a replay failed because it differs from its cassette at
/// `what` (`model request 1`), with `change` among the differences.
pub fn assert_mismatch(err: &CassetteRunError, what: &str, change: &str) {
    let CassetteRunError::Cassette(CassetteError::Mismatch { what: at, diff }) = err else {
        panic!("not a mismatch: {err:?}");
    };
    assert_eq!(at, what);
    assert!(diff.contains(change), "{diff}");
}
