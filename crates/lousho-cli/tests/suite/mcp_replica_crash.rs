//! A served agent's replica dies mid-run (issue 34): two `lousho mcp --http`
//! replicas on one session store (SQLite, PostgreSQL); replica A is
//! SIGKILLed while its run's tool blocks on a FIFO; the client's retry of the
//! same call (same session, same message) on replica B goes on with the
//! interrupted run from its step journal — the model is not asked again for
//! the committed turn (the mock provider's request log shows it), the
//! read-only call that was in flight runs again with the same idempotency
//! key, and the session stores the turn once.
//!
//! The tool is a server on the official Python SDK
//! (`interop/python/gated_server.py`) whose `peek` blocks reading a FIFO the
//! test holds.

use super::common::{Gate, count, on_both_stores, release, show_session};
use lousho::ToolContext;
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use lousho_testkit::replicas::connect;
use serde_json::json;

async fn a_retry_on_another_replica_resumes_the_killed_run(store: String) {
    let Some(gate) = Gate::new() else {
        return;
    };
    let fifo = gate.fifo("gate");
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("c1", "gate__peek", json!({"path": fifo})))
        .reply(MockReply::text_reply("done"))
        .start()
        .await;
    // Crashable replicas: replica A's lease runs out 2 s after its last
    // heartbeat, and the SIGKILL hits the replica itself (not its
    // supervisor, whose child would close gracefully), as a crash does.
    let mut replicas = gate.replicas(&mock, store, "  sessions: true\n");
    let (mcp, [chat_a, chat_b]) = connect([replicas.url(0), replicas.url(1)], "chat").await;
    let call = json!({"message": "look", "session": "job"});

    // Replica A runs the call until its tool blocks on the FIFO; then it dies.
    let mut first = tokio::spawn({
        let call = call.clone();
        async move { chat_a.call(call, ToolContext::new("t")).await }
    });
    let ended = async { format!("the call ended: {:?}", (&mut first).await) };
    let writer = gate.reader_of(&fifo, ended).await;
    replicas.replica(0).kill();
    let failed = first.await.unwrap();
    assert!(
        failed.as_ref().map_or(true, |out| out.is_error),
        "the killed replica cannot answer: {failed:?}"
    );
    assert_eq!(mock.requests().len(), 1);
    // Unblock the orphaned tool server (its read sees EOF), then make the
    // path a plain file for the resumed run.
    release(writer, &fifo, "seen");

    // The client retries on replica B: the interrupted run goes on.
    let out = chat_b.call(call, ToolContext::new("t")).await.unwrap();
    assert!(!out.is_error, "{}", out.to_model_text());
    let structured = out.structured.as_ref().expect("structuredContent");
    assert_eq!(structured["reply"], "done");
    assert_eq!(structured["session"], "job");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "the committed turn is not asked again");
    // The OpenAI wire: the user's message, the turn, the tool's result.
    let sent = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(sent[2].to_string().contains("seen"), "{sent:?}");
    let lines = gate.calls();
    assert_eq!(count(&lines, "peek"), 2, "the read ran again: {lines:?}");
    assert!(
        lines[0].ends_with("/c1") && lines[0] == lines[1],
        "one idempotency key: {lines:?}"
    );
    mcp.close().await;
    let store = replicas.store.clone();
    drop(replicas);

    // The session holds the turn once: user, call, result, answer.
    let stored = show_session(&store, "job").await;
    assert_eq!(stored.len(), 4, "{stored:?}");
}

on_both_stores!(
    a_retry_on_another_replica_resumes_the_killed_run:
    a_retry_on_another_replica_resumes_the_killed_run_on_sqlite,
    a_retry_on_another_replica_resumes_the_killed_run_on_postgres
);
