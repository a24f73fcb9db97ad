//! `lousho run --record FILE` / `--replay FILE` (issue 36): a run against
//! the OpenAI- and Anthropic-shaped mocks with two MCP servers — a stdio one
//! (a second `lousho mcp` serving an agent, started through `sh` so each
//! start is logged; its description holds a secret from its environment)
//! and the HTTP fixture (sent a bearer token) — is recorded, then replayed
//! with the HTTP server stopped: the same reply and tool calls, no process
//! started, no request at the mock, no secret in the file. A changed prompt
//! and a changed tool description each fail the replay (exit code 6) naming
//! the change; `--replay-order` lets the prompt pass. The setup is the
//! library's acceptance test's (`lousho_testkit::cassette`).

use super::common::{lousho, stderr, stdout};
use lousho_testkit::cassette::{
    API_KEY, ENV_SECRET, ENV_VAR, MESSAGE, PROMPT, REPLY, assert_bearer_sent, assert_cassette_text,
    authorization, mock, script,
};
use lousho_testkit::mcp_fixture::serve_http;
use lousho_testkit::mock_provider::{MockProvider, MockReply, Wire};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A word of the run only `--redact` knows to be secret.
const TICKET: &str = "tkt-4711-abcdef";
/// The helper agent's description (a tool the model is offered).
const DESCRIPTION: &str = "Reads the notes";

struct Setup {
    dir: tempfile::TempDir,
    /// The spawn log of the stdio server.
    log: PathBuf,
    /// The stdio server's spec (served by `lousho mcp`).
    keeper: PathBuf,
    wire: Wire,
}

impl Setup {
    fn new(wire: Wire) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let keeper = dir.path().join("keeper.yaml");
        std::fs::write(
            &keeper,
            format!("name: keeper\ndescription: Keeps ${{{ENV_VAR}}}\nmodel: test\n"),
        )
        .unwrap();
        Self {
            log: dir.path().join("spawns.log"),
            keeper,
            dir,
            wire,
        }
    }

    fn cassette(&self) -> PathBuf {
        self.dir.path().join("run.cassette")
    }

    /// Writes the spec (its `prompt` and the helper's description as
    /// given) and returns its path.
    fn spec(&self, mock: &MockProvider, url: &str, prompt: &str, description: &str) -> String {
        let model = match self.wire {
            Wire::OpenAi => "openai/gpt-test",
            Wire::Anthropic => "anthropic/claude-test",
        };
        let text = format!(
            "model: {model}\nmodelOptions:\n  baseUrl: {base}\nprompt: {prompt}\ntools: [helper]\n\
             agents:\n  helper:\n    model: test\n    description: {description}\n\
             mcpServers:\n  local:\n    command: sh\n    args: [\"-c\", \"echo spawn >> '{log}'; exec \\\"$0\\\" mcp '{keeper}'\", \"${{LOUSHO_BIN}}\"]\n    env:\n      {ENV_VAR}: {ENV_SECRET}\n    approval: never\n\
             \x20 remote:\n    url: {url}\n    headers:\n      Authorization: {auth}\n    approval: never\n",
            base = mock.base_url(),
            log = self.log.display(),
            keeper = self.keeper.display(),
            auth = authorization(),
        );
        let path = self.dir.path().join("agent.yaml");
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// `lousho run SPEC MESSAGE --json ARGS…` with the provider's key set.
    async fn run(&self, spec: &str, args: &[&str]) -> Output {
        let key_var = match self.wire {
            Wire::OpenAi => "OPENAI_API_KEY",
            Wire::Anthropic => "ANTHROPIC_API_KEY",
        };
        let mut cmd = tokio::process::Command::from(lousho());
        cmd.env(key_var, API_KEY)
            .args(["run", spec, MESSAGE, "--json"])
            .args(args);
        cmd.output().await.unwrap()
    }

    fn spawns(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .count()
    }
}

/// The tool calls (name, arguments) and the final text of a `--json` run.
fn calls_and_text(out: &Output) -> (Vec<(String, Value)>, String) {
    let mut calls = Vec::new();
    let mut text = String::new();
    for line in stdout(out).lines() {
        let event: Value = serde_json::from_str(line).unwrap();
        match event["type"].as_str() {
            Some("tool_call") => calls.push((
                event["name"].as_str().unwrap().to_owned(),
                event["arguments"].clone(),
            )),
            Some("done") => text = event["text"].as_str().unwrap().to_owned(),
            _ => {}
        }
    }
    (calls, text)
}

async fn records_and_replays(wire: Wire) {
    let setup = Setup::new(wire);
    let mock = mock(
        wire,
        script("keeper", json!({"message": format!("note {TICKET}")})),
    )
    .await;
    let http = serve_http(false).await;
    let url = http.url.clone();
    let spec = setup.spec(&mock, &url, PROMPT, DESCRIPTION);
    let cassette = setup.cassette();
    let file = cassette.to_str().unwrap();

    let recorded = setup
        .run(&spec, &["--record", file, "--redact", "tkt-*"])
        .await;
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    let (calls, text) = calls_and_text(&recorded);
    assert_eq!(text, REPLY);
    assert_eq!(
        calls,
        [
            (
                "local__keeper".to_owned(),
                json!({"message": format!("note {TICKET}")})
            ),
            ("remote__echo".to_owned(), json!({"text": "hello"})),
        ]
    );
    // The summary: model turns, tool calls per server, tokens.
    assert!(
        stderr(&recorded).contains(&format!(
            "recorded {file}: 2 model turns, MCP tool calls: local 1, remote 1, 128 tokens (110 in, 18 out)"
        )),
        "{}",
        stderr(&recorded)
    );
    assert_bearer_sent(&http);
    let served = mock.requests().len();
    assert_eq!(served, 2);
    assert_eq!(setup.spawns(), 1);

    // No secret in the file: the API key, the server's environment value
    // (in its tool's description), the bearer token, the --redact word.
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert_cassette_text(&text);
    assert!(!text.contains(TICKET), "{TICKET} is in:\n{text}");
    assert!(text.contains("Keeps [REDACTED]"), "{text}");

    // Replayed with the HTTP server stopped: the same reply and calls, no
    // server started, nothing asked of the mock.
    http.stop().await;
    let replayed = setup
        .run(&spec, &["--replay", file, "--redact", "tkt-*"])
        .await;
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    let (replayed_calls, replayed_text) = calls_and_text(&replayed);
    assert_eq!(replayed_text, REPLY);
    let names: Vec<&str> = replayed_calls.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["local__keeper", "remote__echo"]);
    // The --redact word went into the cassette redacted, so it comes back so.
    assert_eq!(replayed_calls[0].1, json!({"message": "note [REDACTED]"}));
    assert_eq!(replayed_calls[1], calls[1]);
    assert!(
        stderr(&replayed).contains(&format!("replayed {file}: 2 model turns")),
        "{}",
        stderr(&replayed)
    );
    assert_eq!(setup.spawns(), 1, "the replay started the stdio server");
    assert_eq!(mock.requests().len(), served, "the replay reached the mock");

    // A changed prompt fails naming it.
    let other = setup.spec(&mock, &url, "You check one server.", DESCRIPTION);
    let out = setup
        .run(&other, &["--replay", file, "--redact", "tkt-*"])
        .await;
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("model request 1 differs from the recording"),
        "{err}"
    );
    // (The system prompt goes on with the stdio server's instructions.)
    assert!(
        err.contains(r#"system: "You check both servers."#)
            && err.contains(r#" → "You check one server."#),
        "{err}"
    );

    // Lenient matching takes the recorded answers in order.
    let out = setup
        .run(
            &other,
            &["--replay", file, "--replay-order", "--redact", "tkt-*"],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(calls_and_text(&out).1, REPLY);

    // A changed tool description fails naming the tool.
    let other = setup.spec(&mock, &url, PROMPT, "Reads the memos");
    let out = setup
        .run(&other, &["--replay", file, "--redact", "tkt-*"])
        .await;
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains(r#"tools["helper"].description: "Reads the notes" → "Reads the memos""#),
        "{}",
        stderr(&out)
    );
    assert_eq!(setup.spawns(), 1);
    assert_eq!(mock.requests().len(), served);
}

#[tokio::test(flavor = "multi_thread")]
async fn run_record_then_replay_against_the_openai_mock() {
    records_and_replays(Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn run_record_then_replay_against_the_anthropic_mock() {
    records_and_replays(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn recording_again_rewrites_the_cassette_only_after_a_clean_run() {
    let setup = Setup::new(Wire::OpenAi);
    let first = mock(Wire::OpenAi, script("keeper", json!({"message": "hi"}))).await;
    let http = serve_http(false).await;
    let spec = setup.spec(&first, &http.url, PROMPT, DESCRIPTION);
    let cassette = setup.cassette();
    let file = cassette.to_str().unwrap();
    let out = setup.run(&spec, &["--record", file]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let before = std::fs::read(&cassette).unwrap();

    // The provider fails the next run: the cassette stays as it was.
    let failing = MockProvider::openai()
        .require_api_key(API_KEY)
        .reply(MockReply::error(
            400,
            "invalid_request_error",
            "the model is gone",
        ))
        .start()
        .await;
    let spec = setup.spec(&failing, &http.url, PROMPT, DESCRIPTION);
    let out = setup.run(&spec, &["--record", file]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("the cassette {file} was not written")),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&cassette).unwrap(), before);

    // A clean run rewrites it.
    let again = mock(
        Wire::OpenAi,
        script("keeper", json!({"message": "hi again"})),
    )
    .await;
    let spec = setup.spec(&again, &http.url, PROMPT, DESCRIPTION);
    let out = setup.run(&spec, &["--record", file]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let after = std::fs::read_to_string(&cassette).unwrap();
    assert!(after.contains("hi again"), "{after}");
    http.stop().await;
}

#[test]
fn record_and_replay_need_what_they_work_on() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("a.yaml");
    std::fs::write(&spec, "model: test\n").unwrap();
    let spec = spec.to_str().unwrap();
    let missing = dir.path().join("none.cassette");
    let missing = missing.to_str().unwrap();
    let run = |args: &[&str]| lousho().args(args).output().unwrap();

    // Recording needs a message (the interactive prompt is not recorded).
    let out = run(&["run", spec, "--record", missing]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--record needs a MESSAGE"),
        "{}",
        stderr(&out)
    );
    // A cassette that is not there is a setup error.
    let out = run(&["run", spec, "hi", "--replay", missing]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("none.cassette"), "{}", stderr(&out));
    // Flags that need another.
    for args in [
        &["run", spec, "hi", "--replay-order"][..],
        &["run", spec, "hi", "--redact", "x*"],
        &["run", spec, "hi", "--record", missing, "--replay", missing],
        &["run", spec, "hi", "--record", missing, "--session", "s"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    // A bad pattern.
    let out = run(&["run", spec, "hi", "--record", missing, "--redact", "a[b"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--redact a[b"), "{}", stderr(&out));
    assert!(!Path::new(missing).exists());
}
