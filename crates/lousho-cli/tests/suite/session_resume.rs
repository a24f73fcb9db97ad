//! A run SIGKILLed in its third of four model turns, with two calls in
//! flight (issue 34 acceptance), on SQLite and on PostgreSQL: `lousho resume
//! --session` goes on from the journal — the mock provider is not asked again
//! for the committed turns, the read-only tool in flight runs again, the
//! write in flight does not run again without approval (the resumed run
//! pauses for it; denied, it never runs again).
//!
//! The tools are a server on the official Python SDK
//! (`interop/python/gated_server.py`) that block reading a FIFO the test
//! holds; the kill comes once the server logged both calls.

use super::common::{
    CRASHABLE, Gate, count, lousho, on_both_stores, paused_run_id, release, show_session, stderr,
    stdout,
};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::json;
use std::fs::File;

/// `lousho ARGS` on `store`, crashable (see [`CRASHABLE`]).
fn lousho_on(store: &str, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::from(lousho());
    cmd.env("LOUSHO_STORE", store)
        .env("OPENAI_API_KEY", "sk-test")
        .envs(CRASHABLE)
        .args(args);
    cmd
}

/// The spec's head: the mock model at `mock`.
fn model_at(mock: &MockProvider) -> String {
    format!(
        "model: openai/gpt-test\nmodelOptions:\n  baseUrl: {}\n",
        mock.base_url()
    )
}

/// Starts `cmd` (its output dropped), waits until a tool reads each of
/// `fifos`, then SIGKILLs it; fails with `exited` if it ends before. The
/// FIFOs' write ends, held (see [`release`]).
async fn kill_once<const N: usize>(
    mut cmd: tokio::process::Command,
    gate: &Gate,
    fifos: [&str; N],
    exited: &str,
) -> [File; N] {
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut writers = Vec::new();
    for fifo in fifos {
        let ended = async { format!("{exited}: {:?}", child.wait().await) };
        writers.push(gate.reader_of(fifo, ended).await);
    }
    child.kill().await.unwrap();
    writers.try_into().unwrap()
}

async fn a_killed_run_resumes_from_its_journal(store: String) {
    let Some(gate) = Gate::new() else {
        return;
    };
    let plain = gate.file("plain.txt", "plain");
    let (fifo_a, fifo_b) = (gate.fifo("a"), gate.fifo("b"));
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("c1", "gate__peek", json!({"path": plain})))
        .reply(MockReply::new().tool_call("c2", "gate__poke", json!({"path": plain})))
        .reply(
            MockReply::new()
                .tool_call("c3", "gate__peek", json!({"path": fifo_a}))
                .tool_call("c4", "gate__poke", json!({"path": fifo_b})),
        )
        .reply(MockReply::text_reply("finished"))
        .start()
        .await;
    let spec = gate.spec(
        "agent.yaml",
        &model_at(&mock),
        "permissions:\n  rules:\n    - { tool: gate__poke, decision: allow }\n",
    );
    let cmd = |args: &[&str]| lousho_on(&store, args);

    // Both calls of turn 3 reached the server (they block on the FIFOs).
    let run = cmd(&["run", &spec, "--session", "job", "go"]);
    let [a, b] = kill_once(run, &gate, [&fifo_a, &fifo_b], "the run exited").await;
    assert_eq!(mock.requests().len(), 3);
    // Unblock the orphaned server (its reads see EOF), then make the paths
    // plain files for the resumed run.
    release(a, &fifo_a, "A");
    release(b, &fifo_b, "B");

    // Resumed: the peek runs again, the poke needs approval (no terminal:
    // the run pauses).
    let out = cmd(&["resume", "--session", "job"]).output().await.unwrap();
    let id = paused_run_id(&out, "gate__poke");
    let lines = gate.calls();
    assert_eq!(count(&lines, "peek"), 3, "the read ran again: {lines:?}");
    assert_eq!(count(&lines, "poke"), 2, "the write did not: {lines:?}");
    assert_eq!(mock.requests().len(), 3, "no committed turn asked again");
    // The same idempotency key for the first and the repeated peek of turn 3.
    let peeks: Vec<&String> = lines.iter().filter(|l| l.starts_with("peek")).collect();
    assert!(
        peeks[1].ends_with("/c3") && peeks[1] == peeks[2],
        "{lines:?}"
    );

    // Denied, the write never runs again; the run completes.
    let out = cmd(&["resume", &id, "--deny", "gate__poke"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "finished\n");
    assert_eq!(count(&gate.calls(), "poke"), 2);
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let sent = requests[3].body["messages"].as_array().unwrap().len();
    // The OpenAI wire: one `tool` message per result (turn 3 has two).
    assert_eq!(sent, 8, "user, 3 turns, 4 results");
    assert_eq!(show_session(&store, "job").await.len(), 8);
}

on_both_stores!(
    a_killed_run_resumes_from_its_journal:
    a_killed_run_resumes_from_its_journal_on_sqlite,
    a_killed_run_resumes_from_its_journal_on_postgres
);

/// A run paused for approval, resumed with the write approved, and
/// SIGKILLed in the turn after it (its read blocks on a FIFO): the resumed
/// run kept a journal, so `lousho resume --session` goes on from it — the
/// approved write is not run again, the model is not asked again for the
/// committed turn — and the paused run is gone once it finished (it cannot
/// be resumed a second time meanwhile either).
async fn a_run_resumed_from_a_pause_survives_a_kill(store: String) {
    let Some(gate) = Gate::new() else {
        return;
    };
    let plain = gate.file("plain.txt", "plain");
    let fifo = gate.fifo("gate");
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("c1", "gate__poke", json!({"path": plain})))
        .reply(MockReply::new().tool_call("c2", "gate__peek", json!({"path": fifo})))
        .reply(MockReply::text_reply("finished"))
        .start()
        .await;
    // `poke` has no hints: it asks for approval (no terminal: the run pauses).
    let spec = gate.spec("agent.yaml", &model_at(&mock), "");
    let cmd = |args: &[&str]| lousho_on(&store, args);

    let out = cmd(&["run", &spec, "--session", "job", "go"])
        .output()
        .await
        .unwrap();
    let paused = paused_run_id(&out, "gate__poke");

    // Approved, the write runs; the next turn's read blocks; the kill.
    let resumed = cmd(&["resume", &paused, "--approve", "gate__poke"]);
    let [writer] = kill_once(resumed, &gate, [&fifo], "the resume exited").await;
    assert_eq!(mock.requests().len(), 2);
    release(writer, &fifo, "seen");

    // The paused run is not resumed twice: its resumption goes on instead.
    let approve_again = || async {
        let out = cmd(&["resume", &paused, "--approve", "gate__poke"])
            .output()
            .await
            .unwrap();
        assert!(!out.status.success());
        stderr(&out)
    };
    let err = approve_again().await;
    assert!(err.contains("was resumed already"), "{err}");
    let out = cmd(&["resume", "--session", "job"]).output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "finished\n");
    let lines = gate.calls();
    assert_eq!(
        count(&lines, "poke"),
        1,
        "the approved write ran once: {lines:?}"
    );
    assert_eq!(count(&lines, "peek"), 2, "the read ran again: {lines:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "no committed turn asked again");
    let sent = requests[2].body["messages"].as_array().unwrap().len();
    assert_eq!(sent, 5, "user, 2 turns, 2 results");
    assert_eq!(show_session(&store, "job").await.len(), 6);

    // Finished, the paused run is gone.
    let err = approve_again().await;
    assert!(err.contains("no paused run or interrupted run"), "{err}");
}

on_both_stores!(
    a_run_resumed_from_a_pause_survives_a_kill:
    a_run_resumed_from_a_pause_survives_a_kill_on_sqlite,
    a_run_resumed_from_a_pause_survives_a_kill_on_postgres
);
