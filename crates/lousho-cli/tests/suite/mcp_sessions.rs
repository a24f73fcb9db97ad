//! `serve.sessions`: two `lousho mcp --http` processes (stateless HTTP) on one
//! session store — PostgreSQL (the testkit's throwaway server) or one SQLite
//! file — serve one conversation in alternating calls; each process's model
//! (its own mock provider) is sent the history the other stored.

use super::common::{lousho, sqlite_store};
use lousho::{ToolContext, ToolOutput};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use lousho_testkit::replicas::{Replica, connect, postgres_store};
use serde_json::{Value, json};

const SPEC: &str = "name: chat\nmodel: openai/gpt-test\nmodelOptions:\n  baseUrl: ${MOCK_URL}\nserve:\n  sessions: true\n";

/// Starts `lousho mcp SPEC --http --port 0` on `store`, its model at `mock`.
fn serve(spec: &str, store: &str, mock: &MockProvider) -> Replica {
    let mut cmd = lousho();
    cmd.env("LOUSHO_STORE", store)
        .env("MOCK_URL", mock.base_url())
        .env("OPENAI_API_KEY", "sk-test");
    Replica::serve(cmd, spec)
}

/// The text of each message the provider was sent (OpenAI wire).
fn sent(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        })
        .collect()
}

async fn ask(tool: &std::sync::Arc<dyn lousho::tool::Tool>, input: Value) -> ToolOutput {
    tool.call(input, ToolContext::new("t")).await.unwrap()
}

fn session_of(out: &ToolOutput) -> String {
    assert!(!out.is_error, "{}", out.to_model_text());
    let structured = out.structured.as_ref().expect("structuredContent");
    structured["session"].as_str().unwrap().to_owned()
}

/// Two servers on `store`, alternating four calls of one session.
async fn two_servers_share_one_conversation(store: &str) {
    let mock_a = MockProvider::openai()
        .replies([MockReply::text_reply("a1"), MockReply::text_reply("a3")])
        .start()
        .await;
    let mock_b = MockProvider::openai()
        .replies([MockReply::text_reply("b2"), MockReply::text_reply("b4")])
        .start()
        .await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("chat.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    let spec = spec.to_string_lossy().into_owned();
    let a = serve(&spec, store, &mock_a);
    let b = serve(&spec, store, &mock_b);
    let (mcp, [chat_a, chat_b]) = connect([a.url(), b.url()], "chat").await;

    let r1 = ask(&chat_a, json!({"message": "m1"})).await;
    let id = session_of(&r1);
    let r2 = ask(&chat_b, json!({"message": "m2", "session": id})).await;
    assert_eq!(session_of(&r2), id);
    assert_eq!(r2.structured.as_ref().unwrap()["reply"], "b2");
    let r3 = ask(&chat_a, json!({"message": "m3", "session": id})).await;
    assert_eq!(session_of(&r3), id);
    let r4 = ask(&chat_b, json!({"message": "m4", "session": id})).await;
    assert_eq!(r4.structured.as_ref().unwrap()["reply"], "b4");

    let (seen_a, seen_b) = (mock_a.requests(), mock_b.requests());
    assert_eq!((seen_a.len(), seen_b.len()), (2, 2));
    assert_eq!(sent(&seen_a[0].body), ["m1"]);
    assert_eq!(
        sent(&seen_b[0].body),
        ["m1", "a1", "m2"],
        "the second server sees what the first stored"
    );
    assert_eq!(sent(&seen_a[1].body), ["m1", "a1", "m2", "b2", "m3"]);
    assert_eq!(
        sent(&seen_b[1].body),
        ["m1", "a1", "m2", "b2", "m3", "a3", "m4"]
    );

    // The session is in the store, as `lousho sessions` shows it.
    let out = lousho()
        .env("LOUSHO_STORE", store)
        .args(["sessions", "show", &id, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stored.len(), 8);
    mcp.close().await;
    drop((a, b));
}

#[tokio::test(flavor = "multi_thread")]
async fn two_servers_on_one_postgresql_serve_one_conversation_in_turns() {
    if let Some(store) = postgres_store() {
        two_servers_share_one_conversation(&store).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_servers_on_one_sqlite_file_serve_one_conversation_in_turns() {
    let dir = tempfile::tempdir().unwrap();
    two_servers_share_one_conversation(&sqlite_store(&dir)).await;
}
