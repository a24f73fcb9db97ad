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

use super::common::{lousho, stdout};
use super::session_resume::{O_NONBLOCK, count, log_lines, python_peer};
use lousho::ToolContext;
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use lousho_testkit::replicas::{Replicas, connect};
use serde_json::{Value, json};
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

async fn a_retry_on_another_replica_resumes_the_killed_run(store: String) {
    let Some((python, script)) = python_peer() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("gate");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let log = dir.path().join("calls.log");
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call(
            "c1",
            "gate__peek",
            json!({"path": fifo.display().to_string()}),
        ))
        .reply(MockReply::text_reply("done"))
        .start()
        .await;
    let spec = dir.path().join("chat.yaml");
    std::fs::write(
        &spec,
        format!(
            "name: chat\nmodel: openai/gpt-test\nmodelOptions:\n  baseUrl: ${{MOCK_URL}}\nmcpServers:\n  gate:\n    command: \"{python}\"\n    args: [\"{script}\"]\n    env:\n      GATE_LOG: \"{}\"\nserve:\n  sessions: true\n",
            log.display()
        ),
    )
    .unwrap();
    let spec = spec.display().to_string();
    // A short lease: replica A's runs out 2 s after its last heartbeat.
    // `LOUSHO_SUPERVISOR=0`: the SIGKILL hits the replica itself (not its
    // supervisor, whose child would close gracefully), as a crash does.
    let mock_url = mock.base_url();
    let env = [
        ("MOCK_URL", mock_url.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
        ("LOUSHO_SESSION_LEASE", "2"),
        ("LOUSHO_SUPERVISOR", "0"),
    ];
    let mut replicas = Replicas::start_on(lousho, store.clone(), &spec, &env);
    let (mcp, [chat_a, chat_b]) = connect([replicas.url(0), replicas.url(1)], "chat").await;
    let call = json!({"message": "look", "session": "job"});

    // Replica A runs the call until its tool blocks on the FIFO; then it dies.
    let first = tokio::spawn({
        let call = call.clone();
        async move { chat_a.call(call, ToolContext::new("t")).await }
    });
    let deadline = Instant::now() + Duration::from_secs(180);
    while log_lines(&log).is_empty() {
        assert!(Instant::now() < deadline, "the tool was never called");
        if first.is_finished() {
            panic!("the call ended: {:?}", first.await);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    replicas.replica(0).kill();
    let failed = first.await.unwrap();
    assert!(
        failed.as_ref().map_or(true, |out| out.is_error),
        "the killed replica cannot answer: {failed:?}"
    );
    assert_eq!(mock.requests().len(), 1);
    // Unblock the orphaned tool server (its read sees EOF), then make the
    // path a plain file for the resumed run.
    if let Ok(f) = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(O_NONBLOCK)
        .open(&fifo)
    {
        drop(f);
    }
    std::fs::remove_file(&fifo).unwrap();
    std::fs::write(&fifo, "seen").unwrap();

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
    let lines = log_lines(&log);
    assert_eq!(count(&lines, "peek"), 2, "the read ran again: {lines:?}");
    assert!(
        lines[0].ends_with("/c1") && lines[0] == lines[1],
        "one idempotency key: {lines:?}"
    );
    mcp.close().await;
    drop(replicas);

    // The session holds the turn once: user, call, result, answer.
    let out = tokio::process::Command::from(lousho())
        .env("LOUSHO_STORE", &store)
        .args(["sessions", "show", "job", "--json"])
        .output()
        .await
        .unwrap();
    let stored: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(stored.len(), 4, "{stored:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_on_another_replica_resumes_the_killed_run_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("sessions.db").display().to_string();
    a_retry_on_another_replica_resumes_the_killed_run(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_on_another_replica_resumes_the_killed_run_on_postgres() {
    if let Some(store) = lousho_testkit::replicas::postgres_store() {
        a_retry_on_another_replica_resumes_the_killed_run(store).await;
    }
}
