//! One run at a time per session (issue 34): `lousho run --session X` in two
//! processes at once take turns through the session's lease, on one SQLite
//! file and on PostgreSQL (the testkit's throwaway server); a lease held by
//! a SIGKILLed run is taken over once it runs out. The model is the mock
//! OpenAI provider.

use super::common::{lousho, on_both_stores, show_session, spec_file, stderr, stdout, texts};
use lousho::session::{LeaseState, SessionStore};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SPEC: &str = "model: openai/gpt-test\nmodelOptions:\n  baseUrl: ${MOCK_URL}\n";

/// Runs per process in the two-process test.
const RUNS: usize = 20;

async fn open(store: &str) -> Arc<dyn SessionStore> {
    if store.starts_with("postgres://") {
        Arc::new(
            lousho::session::PostgresStore::connect(store)
                .await
                .unwrap(),
        )
    } else {
        Arc::new(lousho::session::SqliteStore::open(store).await.unwrap())
    }
}

/// `lousho run SPEC --session shared MESSAGE` on `store`, its model `mock`.
fn run(spec: &str, store: &str, mock: &MockProvider, message: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::from(lousho());
    cmd.env("LOUSHO_STORE", store)
        .env("MOCK_URL", mock.base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", spec, "--session", "shared", message]);
    cmd
}

/// The text of each message of session `shared` in `store`.
async fn stored(store: &str) -> Vec<String> {
    texts(&show_session(store, "shared").await)
}

/// Two processes, each running `RUNS` runs of one session one after the
/// other: every run exits 0, every message is stored once, each run's turn
/// in one piece, and each run's model request carries the history up to its
/// own message (it continued from the runs before it).
async fn two_processes_share_one_session(store: String) {
    let mock = Arc::new(
        MockProvider::openai()
            .replies((0..2 * RUNS).map(|i| MockReply::text_reply(&format!("answer {i}"))))
            .start()
            .await,
    );
    let (_dir, spec) = spec_file("agent.yaml", SPEC);
    let workers = ["p", "q"].map(|name| {
        let (spec, store, mock) = (spec.clone(), store.clone(), mock.clone());
        tokio::spawn(async move {
            let mut waited = 0;
            for i in 0..RUNS {
                let message = format!("{name}-{i}");
                let out = run(&spec, &store, &mock, &message).output().await.unwrap();
                assert!(out.status.success(), "{message}: {}", stderr(&out));
                waited += usize::from(stderr(&out).contains("is in use by another run"));
            }
            waited
        })
    });
    let mut waited = 0;
    for worker in workers {
        waited += worker.await.unwrap();
    }
    let messages = stored(&store).await;
    assert_eq!(messages.len(), 4 * RUNS, "{messages:?}");
    let mut position = HashMap::new();
    for (i, pair) in messages.chunks(2).enumerate() {
        assert!(
            pair[0].starts_with("p-") || pair[0].starts_with("q-"),
            "turn {i} starts with the user's message: {pair:?}"
        );
        assert!(pair[1].starts_with("answer "), "turn {i}: {pair:?}");
        assert!(
            position.insert(pair[0].clone(), 2 * i).is_none(),
            "{} stored twice",
            pair[0]
        );
    }
    for name in ["p", "q"] {
        for i in 0..RUNS {
            assert!(position.contains_key(&format!("{name}-{i}")));
        }
    }
    // Each run sent the stored history up to its own message.
    let requests = mock.requests();
    assert_eq!(requests.len(), 2 * RUNS);
    for request in &requests {
        let sent: Vec<&Value> = request.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] != "system")
            .collect();
        let last = match &sent.last().unwrap()["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            other => panic!("content {other}"),
        };
        assert_eq!(sent.len(), position[&last] + 1, "{last}: history sent");
    }
    eprintln!("{waited} of {} runs waited for the other's lease", 2 * RUNS);
}

on_both_stores!(
    two_processes_share_one_session:
    two_processes_share_one_session_on_sqlite,
    two_processes_share_one_session_on_postgres
);

/// A run killed (SIGKILL) while it holds the session's lease: the next run
/// waits for the lease to run out (the killed run set a 3 s lease), then
/// stores its turn; the killed run stored nothing.
async fn a_killed_runs_lease_is_taken_over(store: String) {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("never sent").delay(Duration::from_secs(600)))
        .reply(MockReply::text_reply("after"))
        .start()
        .await;
    let (_dir, spec) = spec_file("agent.yaml", SPEC);
    let mut killed = run(&spec, &store, &mock, "killed")
        .env("LOUSHO_SESSION_LEASE", "3")
        // The SIGKILL hits the holder itself, not its supervisor.
        .env("LOUSHO_SUPERVISOR", "0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The run asked the model: it holds the lease.
    tokio::select! {
        asked = mock.wait_for_requests(1, Duration::from_secs(120)) => {
            assert!(asked, "the run never asked the model");
        }
        status = killed.wait() => panic!("the run exited: {status:?}"),
    }
    let probe = open(&store).await;
    match probe
        .acquire_lease("shared", "probe", Duration::from_secs(60))
        .await
        .unwrap()
    {
        LeaseState::Held { expires_in, .. } => assert!(expires_in <= Duration::from_secs(3)),
        other => panic!("the running run holds no lease: {other:?}"),
    }
    killed.kill().await.unwrap();

    let started = Instant::now();
    let out = run(&spec, &store, &mock, "next").output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "after\n");
    // Generous for a loaded machine; the point is that it does not wait for
    // the default 10-minute limit.
    assert!(
        started.elapsed() < Duration::from_secs(90),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(stored(&store).await, ["next", "after"]);
}

on_both_stores!(
    a_killed_runs_lease_is_taken_over:
    a_killed_runs_lease_is_taken_over_on_sqlite,
    a_killed_runs_lease_is_taken_over_on_postgres
);
