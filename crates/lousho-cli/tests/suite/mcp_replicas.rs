//! Two `lousho mcp --http` replicas on one PostgreSQL store (the testkit's
//! harness, `lousho_testkit::replicas`), as behind a load balancer (issue
//! 34): two clients × 20 calls continuing one served session, split over
//! both replicas: every call succeeds, every message is stored exactly once
//! and each call's turn is in one piece (read back from the store).

use super::common::{lousho, spec_file};
use lousho::session::{PostgresStore, SessionStore};
use lousho::{ToolContext, ToolOutput};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use lousho_testkit::replicas::{Replicas, connect};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

const SPEC: &str = "name: chat\nmodel: openai/gpt-test\nmodelOptions:\n  baseUrl: ${MOCK_URL}\nserve:\n  sessions: true\n";

/// Calls per client in the two-client test.
const CALLS: usize = 20;

/// The text of a stored message.
fn text(m: &lousho::model::Message) -> String {
    m.text()
}

async fn ask(tool: &Arc<dyn lousho::tool::Tool>, input: Value) -> ToolOutput {
    tool.call(input, ToolContext::new("t")).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_continue_one_session_over_two_replicas() {
    let mock = MockProvider::openai()
        .replies((0..2 * CALLS).map(|i| MockReply::text_reply(&format!("answer {i}"))))
        .start()
        .await;
    let (_dir, spec) = spec_file("chat.yaml", SPEC);
    let env = [
        ("MOCK_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-test".to_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let Some(replicas) = Replicas::start(lousho, &spec, &env) else {
        return;
    };
    let urls = [replicas.url(0).to_owned(), replicas.url(1).to_owned()];
    // Two clients (lousho's own MCP client), each connected to both
    // replicas; p starts on replica 0, q on replica 1, each alternating.
    let clients = ["p", "q"].into_iter().enumerate().map(|(first, name)| {
        let urls = urls.clone();
        tokio::spawn(async move {
            let (mcp, chat) = connect([&urls[0], &urls[1]], "chat").await;
            for i in 0..CALLS {
                let message = format!("{name}-{i}");
                let out = ask(
                    &chat[(first + i) % 2],
                    json!({"message": message, "session": "shared"}),
                )
                .await;
                assert!(!out.is_error, "{message}: {}", out.to_model_text());
                let structured = out.structured.as_ref().expect("structuredContent");
                assert_eq!(structured["session"], "shared");
            }
            mcp.close().await;
        })
    });
    for client in clients.collect::<Vec<_>>() {
        client.await.unwrap();
    }

    let store = PostgresStore::connect(&replicas.store).await.unwrap();
    let stored = store.load("shared").await.unwrap().expect("the session");
    let messages: Vec<String> = stored.messages.iter().map(text).collect();
    assert_eq!(messages.len(), 4 * CALLS, "{messages:?}");
    // Each call's turn in one piece: its message, then its answer.
    let mut position = HashMap::new();
    for (i, turn) in messages.chunks(2).enumerate() {
        assert!(
            turn[0].starts_with("p-") || turn[0].starts_with("q-"),
            "turn {i} starts with a client's message: {turn:?}"
        );
        assert!(turn[1].starts_with("answer "), "turn {i}: {turn:?}");
        assert!(
            position.insert(turn[0].clone(), i).is_none(),
            "{} stored twice",
            turn[0]
        );
    }
    // Every message once, each client's in the order it sent them.
    for name in ["p", "q"] {
        let at: Vec<usize> = (0..CALLS)
            .map(|i| position[&format!("{name}-{i}")])
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{name}: {at:?}");
    }
    assert_eq!(mock.requests().len(), 2 * CALLS);
}
