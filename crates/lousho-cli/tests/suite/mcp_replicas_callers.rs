//! Two OAuth callers (tokens from the real `oidc-provider`) on two `lousho
//! mcp --http` replicas sharing one PostgreSQL store (issue 33): they never
//! reach each other's sessions or tasks through either replica, and a
//! caller's runs split over both replicas count in one window of its rate
//! limit.

use super::common::{lousho, spec_file};
use lousho::session::{PostgresStore, SessionStore};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use lousho_testkit::oidc_provider::Idp;
use lousho_testkit::replicas::{Replicas, post, tasks_client_meta};
use serde_json::{Value, json};

/// The spec of the OAuth tests: sessions, tokens from `ISSUER` for the
/// audience both replicas share (as behind a load balancer), three runs a
/// minute per caller.
const OAUTH_SPEC: &str = "name: chat
model: openai/gpt-test
modelOptions:
  baseUrl: ${MOCK_URL}
serve:
  sessions: true
  auth:
    type: oauth
    issuer: ${ISSUER}
    audience: http://127.0.0.1/mcp
  limits:
    perCaller:
      runsPerMinute: 3
";

/// The audience of [`OAUTH_SPEC`].
const AUDIENCE: &str = "http://127.0.0.1/mcp";

/// An identity provider, a mock model with `replies` answers, and two
/// replicas of [`OAUTH_SPEC`] (`None`: a peer is missing, the test skips).
struct OAuthReplicas {
    idp: Idp,
    mock: MockProvider,
    replicas: Replicas,
    _dir: tempfile::TempDir,
}

async fn oauth_replicas(replies: usize) -> Option<OAuthReplicas> {
    let idp = Idp::start().await?;
    let mock = MockProvider::openai()
        .replies((0..replies).map(|i| MockReply::text_reply(&format!("answer {i}"))))
        .start()
        .await;
    let (dir, spec) = spec_file("chat.yaml", OAUTH_SPEC);
    let env = [
        ("MOCK_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-test".to_owned()),
        ("ISSUER", idp.issuer.clone()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let replicas = Replicas::start(lousho, &spec, &env)?;
    Some(OAuthReplicas {
        idp,
        mock,
        replicas,
        _dir: dir,
    })
}

/// A `tools/call` of the agent tool.
fn chat(id: u64, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "chat", "arguments": arguments}})
}

/// The user messages the provider was sent in its `n`th request.
fn user_messages(mock: &MockProvider, n: usize) -> Vec<String> {
    mock.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_callers_never_reach_each_others_sessions_or_tasks_on_either_replica() {
    let Some(t) = oauth_replicas(8).await else {
        return;
    };
    let alice = t.idp.token("alice", AUDIENCE, "mcp:use").await;
    let bob = t.idp.token("bob", AUDIENCE, "mcp:use").await;
    let (r0, r1) = (t.replicas.url(0), t.replicas.url(1));
    let turn = |url: &str, token: &str, id: u64, message: &str| {
        let (url, token) = (url.to_owned(), token.to_owned());
        let body = chat(id, json!({"message": message, "session": "s"}));
        async move {
            let a = post(&url, Some(&token), &body).await;
            assert_eq!(a.status, 200, "{}", a.body);
            let result = &a.body["result"];
            assert_eq!(result["isError"], false, "{result}");
            assert_eq!(result["structuredContent"]["session"], "s", "{result}");
        }
    };
    // Alice starts session `s` on replica 0; Bob's `s` on replica 1 is his
    // own (his model saw none of hers); Alice continues hers on replica 1.
    turn(r0, &alice, 1, "alice-1").await;
    turn(r1, &bob, 2, "bob-1").await;
    assert_eq!(user_messages(&t.mock, 1), ["bob-1"]);
    turn(r1, &alice, 3, "alice-2").await;
    assert_eq!(user_messages(&t.mock, 2), ["alice-1", "alice-2"]);
    let store = PostgresStore::connect(&t.replicas.store).await.unwrap();
    let ids: Vec<String> = store
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids.len(), 2, "one `s` per caller: {ids:?}");
    assert!(
        ids.iter().all(|id| id != "s" && id.ends_with("/s")),
        "{ids:?}"
    );

    // A task Alice starts on replica 0 is hers: she sees it on either
    // replica, and Bob asking either learns nothing of it.
    let mut start = chat(4, json!({"message": "a task"}));
    start["params"]["_meta"] = tasks_client_meta();
    let started = post(r0, Some(&alice), &start).await;
    assert_eq!(started.status, 200, "{}", started.body);
    let task = started.body["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {}", started.body))
        .to_owned();
    let get = json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/get",
        "params": {"taskId": task, "_meta": tasks_client_meta()}});
    // Alice sees it on either replica (the store keeps it for both).
    for url in [r0, r1] {
        let own = post(url, Some(&alice), &get).await;
        assert_eq!(own.body["result"]["taskId"], task.as_str(), "{}", own.body);
    }
    for url in [r0, r1] {
        let other = post(url, Some(&bob), &get).await;
        let error = &other.body["error"];
        assert_eq!(
            error["message"],
            format!("unknown task: {task}"),
            "{}",
            other.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_runs_over_both_replicas_count_in_one_window() {
    let Some(t) = oauth_replicas(8).await else {
        return;
    };
    let alice = t.idp.token("alice", AUDIENCE, "mcp:use").await;
    let bob = t.idp.token("bob", AUDIENCE, "mcp:use").await;
    let urls = [t.replicas.url(0), t.replicas.url(1)];
    // Three runs a minute: one on replica 0, one on 1, one on 0 …
    for i in 0..3 {
        let a = post(
            urls[i % 2],
            Some(&alice),
            &chat(i as u64, json!({"message": "hi"})),
        )
        .await;
        assert_eq!(a.status, 200, "run {i}: {}", a.body);
    }
    // … and the fourth, on replica 1, is past the limit the two share.
    let over = post(urls[1], Some(&alice), &chat(9, json!({"message": "hi"}))).await;
    assert_eq!(over.status, 429, "{}", over.body);
    let secs = over.retry_after.expect("Retry-After");
    assert!((1..=60).contains(&secs), "Retry-After: {secs}");
    assert_eq!(over.body["id"], 9);
    assert_eq!(over.body["error"]["data"]["limit"], "runsPerMinute");
    // Bob is another caller: his own window.
    let bob_run = post(urls[1], Some(&bob), &chat(10, json!({"message": "hi"}))).await;
    assert_eq!(bob_run.status, 200, "{}", bob_run.body);
    assert_eq!(t.mock.requests().len(), 4, "the refused run asked no model");
}
