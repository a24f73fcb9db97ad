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

use super::common::{lousho, repo, stderr, stdout};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::json;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Linux's `O_NONBLOCK`: opening a FIFO for writing fails at once when it
/// has no reader.
pub(super) const O_NONBLOCK: i32 = 0o4000;

pub(super) fn python_peer() -> Option<(String, String)> {
    let interop = repo().join("interop");
    let python = interop.join(".venv/bin/python");
    if !python.exists() {
        let msg = "interop/.venv is missing: run interop/install.sh";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("SKIPPED: {msg}");
        return None;
    }
    let script = interop.join("python/gated_server.py");
    Some((
        std::path::absolute(python).unwrap().display().to_string(),
        script.canonicalize().unwrap().display().to_string(),
    ))
}

pub(super) fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

pub(super) fn count(lines: &[String], tool: &str) -> usize {
    lines.iter().filter(|l| l.starts_with(tool)).count()
}

async fn a_killed_run_resumes_from_its_journal(store: String) {
    let Some((python, script)) = python_peer() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.txt");
    std::fs::write(&plain, "plain").unwrap();
    let (fifo_a, fifo_b) = (dir.path().join("a"), dir.path().join("b"));
    for fifo in [&fifo_a, &fifo_b] {
        assert!(
            std::process::Command::new("mkfifo")
                .arg(fifo)
                .status()
                .unwrap()
                .success()
        );
    }
    let log = dir.path().join("calls.log");
    let path = |p: &Path| p.display().to_string();
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("c1", "gate__peek", json!({"path": path(&plain)})))
        .reply(MockReply::new().tool_call("c2", "gate__poke", json!({"path": path(&plain)})))
        .reply(
            MockReply::new()
                .tool_call("c3", "gate__peek", json!({"path": path(&fifo_a)}))
                .tool_call("c4", "gate__poke", json!({"path": path(&fifo_b)})),
        )
        .reply(MockReply::text_reply("finished"))
        .start()
        .await;
    let spec = dir.path().join("agent.yaml");
    std::fs::write(
        &spec,
        format!(
            "model: openai/gpt-test\nmodelOptions:\n  baseUrl: {}\nmcpServers:\n  gate:\n    command: \"{python}\"\n    args: [\"{script}\"]\n    env:\n      GATE_LOG: \"{}\"\npermissions:\n  rules:\n    - {{ tool: gate__poke, decision: allow }}\n",
            mock.base_url(),
            path(&log)
        ),
    )
    .unwrap();
    let spec = path(&spec);
    let cmd = |args: &[&str]| {
        let mut cmd = tokio::process::Command::from(lousho());
        cmd.env("LOUSHO_STORE", &store)
            .env("OPENAI_API_KEY", "sk-test")
            .env("LOUSHO_SESSION_LEASE", "2")
            // A crash is a SIGKILL of the process that runs: without this,
            // `kill` hits the supervisor, and the run (told by SIGTERM) would
            // still journal a result that arrives while it closes.
            .env("LOUSHO_SUPERVISOR", "0")
            .args(args);
        cmd
    };

    let mut run = cmd(&["run", &spec, "--session", "job", "go"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Both calls of turn 3 reached the server (they block on the FIFOs).
    let deadline = Instant::now() + Duration::from_secs(180);
    while log_lines(&log).len() < 4 {
        assert!(Instant::now() < deadline, "{:?}", log_lines(&log));
        assert!(run.try_wait().unwrap().is_none(), "the run exited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    run.kill().await.unwrap();
    assert_eq!(mock.requests().len(), 3);
    // Unblock the orphaned server (its reads see EOF), then make the paths
    // plain files for the resumed run.
    for (fifo, text) in [(&fifo_a, "A"), (&fifo_b, "B")] {
        if let Ok(f) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(O_NONBLOCK)
            .open(fifo)
        {
            drop(f);
        }
        std::fs::remove_file(fifo).unwrap();
        std::fs::write(fifo, text).unwrap();
    }

    // Resumed: the peek runs again, the poke needs approval (no terminal:
    // the run pauses).
    let out = cmd(&["resume", "--session", "job"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    let id = err
        .split("the run is saved as ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_else(|| panic!("no run id in: {err}"))
        .to_owned();
    let lines = log_lines(&log);
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
    assert_eq!(count(&log_lines(&log), "poke"), 2);
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let sent = requests[3].body["messages"].as_array().unwrap().len();
    // The OpenAI wire: one `tool` message per result (turn 3 has two).
    assert_eq!(sent, 8, "user, 3 turns, 4 results");
    let out = cmd(&["sessions", "show", "job", "--json"])
        .output()
        .await
        .unwrap();
    let stored: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(stored.len(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_resumes_from_its_journal_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("sessions.db").display().to_string();
    a_killed_run_resumes_from_its_journal(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_resumes_from_its_journal_on_postgres() {
    if let Some(store) = super::session_lease::postgres_store() {
        a_killed_run_resumes_from_its_journal(store).await;
    }
}

/// A run paused for approval, resumed with the write approved, and
/// SIGKILLed in the turn after it (its read blocks on a FIFO): the resumed
/// run kept a journal, so `lousho resume --session` goes on from it — the
/// approved write is not run again, the model is not asked again for the
/// committed turn — and the paused run is gone once it finished (it cannot
/// be resumed a second time meanwhile either).
async fn a_run_resumed_from_a_pause_survives_a_kill(store: String) {
    let Some((python, script)) = python_peer() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.txt");
    std::fs::write(&plain, "plain").unwrap();
    let fifo = dir.path().join("gate");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let log = dir.path().join("calls.log");
    let path = |p: &Path| p.display().to_string();
    let mock = MockProvider::openai()
        .reply(MockReply::new().tool_call("c1", "gate__poke", json!({"path": path(&plain)})))
        .reply(MockReply::new().tool_call("c2", "gate__peek", json!({"path": path(&fifo)})))
        .reply(MockReply::text_reply("finished"))
        .start()
        .await;
    // `poke` has no hints: it asks for approval (no terminal: the run pauses).
    let spec = dir.path().join("agent.yaml");
    std::fs::write(
        &spec,
        format!(
            "model: openai/gpt-test\nmodelOptions:\n  baseUrl: {}\nmcpServers:\n  gate:\n    command: \"{python}\"\n    args: [\"{script}\"]\n    env:\n      GATE_LOG: \"{}\"\n",
            mock.base_url(),
            path(&log)
        ),
    )
    .unwrap();
    let spec = path(&spec);
    let cmd = |args: &[&str]| {
        let mut cmd = tokio::process::Command::from(lousho());
        cmd.env("LOUSHO_STORE", &store)
            .env("OPENAI_API_KEY", "sk-test")
            .env("LOUSHO_SESSION_LEASE", "2")
            // A crash is a SIGKILL of the process that runs: without this,
            // `kill` hits the supervisor, and the run (told by SIGTERM) would
            // still journal a result that arrives while it closes.
            .env("LOUSHO_SUPERVISOR", "0")
            .args(args);
        cmd
    };

    let out = cmd(&["run", &spec, "--session", "job", "go"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    let paused = err
        .split("the run is saved as ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_else(|| panic!("no run id in: {err}"))
        .to_owned();

    // Approved, the write runs; the next turn's read blocks; the kill.
    let mut resumed = cmd(&["resume", &paused, "--approve", "gate__poke"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(180);
    while count(&log_lines(&log), "peek") < 1 {
        assert!(Instant::now() < deadline, "{:?}", log_lines(&log));
        assert!(resumed.try_wait().unwrap().is_none(), "the resume exited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    resumed.kill().await.unwrap();
    assert_eq!(mock.requests().len(), 2);
    if let Ok(f) = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(O_NONBLOCK)
        .open(&fifo)
    {
        drop(f);
    }
    std::fs::remove_file(&fifo).unwrap();
    std::fs::write(&fifo, "seen").unwrap();

    // The paused run is not resumed twice: its resumption goes on instead.
    let out = cmd(&["resume", &paused, "--approve", "gate__poke"])
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("was resumed already"),
        "{}",
        stderr(&out)
    );
    let out = cmd(&["resume", "--session", "job"]).output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "finished\n");
    let lines = log_lines(&log);
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
    let out = cmd(&["sessions", "show", "job", "--json"])
        .output()
        .await
        .unwrap();
    let stored: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(stored.len(), 6);

    // Finished, the paused run is gone.
    let out = cmd(&["resume", &paused, "--approve", "gate__poke"])
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no paused run or interrupted run"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_resumed_from_a_pause_survives_a_kill_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("sessions.db").display().to_string();
    a_run_resumed_from_a_pause_survives_a_kill(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_resumed_from_a_pause_survives_a_kill_on_postgres() {
    if let Some(store) = super::session_lease::postgres_store() {
        a_run_resumed_from_a_pause_survives_a_kill(store).await;
    }
}
