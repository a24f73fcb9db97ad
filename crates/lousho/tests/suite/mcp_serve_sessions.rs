//! `ServeOptions::sessions`: MCP clients hold a conversation across calls of
//! the agent tool, over stateless HTTP, also across two servers sharing one
//! store; checked by what each server's ScriptedModel was sent.

use lousho::mcp::{HttpOptions, McpServerHandle};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Message, ModelRequest};
use lousho::session::{MemoryStore, SessionStore};
use lousho::tool::DefinedTool;
use lousho::{Agent, ToolOutput};
use lousho::{ServeOptions, serve_mcp};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, object};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn serve(model: &ScriptedModel, store: Option<Arc<dyn SessionStore>>) -> McpServerHandle {
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let mut options = ServeOptions::new(agent)
        .name("chat")
        .http(HttpOptions::new().port(0));
    if let Some(store) = store {
        options = options.sessions(store);
    }
    serve_mcp(options).await.unwrap()
}

async fn client(server: &McpServerHandle) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(
        server.url().unwrap(),
    ))
    .await
    .unwrap()
}

async fn ask(c: &Client, arguments: Value) -> CallToolResult {
    c.call_tool(CallToolRequestParams::new("chat").with_arguments(object(arguments)))
        .await
        .unwrap()
}

/// The session a result names (checking both places it is named).
fn session_of(result: &CallToolResult) -> String {
    let structured = result
        .structured_content
        .as_ref()
        .expect("structuredContent");
    let id = structured["session"].as_str().unwrap().to_owned();
    let last = result.content.last().unwrap().as_text().unwrap();
    assert_eq!(last.text, format!("session: {id}"));
    id
}

fn reply_of(result: &CallToolResult) -> &str {
    result.structured_content.as_ref().unwrap()["reply"]
        .as_str()
        .unwrap()
}

fn texts(request: &ModelRequest) -> Vec<String> {
    request.messages.iter().map(Message::text).collect()
}

#[tokio::test]
async fn the_agent_tool_takes_a_session_and_declares_its_result() {
    let model = ScriptedModel::repeating([ScriptedTurn::text("ok")]);
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let server = serve(&model, Some(store)).await;
    let c = client(&server).await;
    let tools = c.list_all_tools().await.unwrap();
    let tool = &tools[0];
    assert_eq!(tool.input_schema["properties"]["session"]["type"], "string");
    assert_eq!(tool.input_schema["required"], json!(["message"]));
    let output = tool.output_schema.as_ref().expect("outputSchema");
    assert_eq!(output["required"], json!(["reply", "session"]));
    assert!(tool.description.as_deref().unwrap().contains("session"));

    // Without `session`: a new conversation, under a new unguessable id.
    let first = ask(&c, json!({"message": "hi"})).await;
    let second = ask(&c, json!({"message": "hi"})).await;
    let (a, b) = (session_of(&first), session_of(&second));
    assert_ne!(a, b);
    assert_eq!(a.len(), 32);
    assert_eq!(first.content[0].as_text().unwrap().text, "ok");
    assert_eq!(reply_of(&first), "ok");

    // A client may name its own session; a non-string one is an error result.
    let named = ask(&c, json!({"message": "hi", "session": "support-42"})).await;
    assert_eq!(session_of(&named), "support-42");
    let bad = ask(&c, json!({"message": "hi", "session": 42})).await;
    assert_eq!(bad.is_error, Some(true));
    let text = &bad.content[0].as_text().unwrap().text;
    assert!(text.contains("`session` must be a string"), "{text}");
    drop(c);
    server.close().await.unwrap();
}

#[tokio::test]
async fn two_servers_on_one_store_serve_one_conversation_in_turns() {
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let model_a = ScriptedModel::new([ScriptedTurn::text("a1"), ScriptedTurn::text("a3")]);
    let model_b = ScriptedModel::new([ScriptedTurn::text("b2")]);
    let server_a = serve(&model_a, Some(store.clone())).await;
    let server_b = serve(&model_b, Some(store.clone())).await;
    let (ca, cb) = (client(&server_a).await, client(&server_b).await);

    let r1 = ask(&ca, json!({"message": "m1"})).await;
    let id = session_of(&r1);
    let r2 = ask(&cb, json!({"message": "m2", "session": id})).await;
    assert_eq!(session_of(&r2), id);
    assert_eq!(reply_of(&r2), "b2");
    assert_eq!(
        texts(&model_b.last_request().unwrap()),
        ["m1", "a1", "m2"],
        "server B sees what server A stored"
    );
    let r3 = ask(&ca, json!({"message": "m3", "session": id})).await;
    assert_eq!(reply_of(&r3), "a3");
    assert_eq!(
        texts(&model_a.last_request().unwrap()),
        ["m1", "a1", "m2", "b2", "m3"]
    );
    let stored = store.load(&id).await.unwrap().unwrap();
    assert_eq!(stored.messages.len(), 6);
    drop((ca, cb));
    server_a.close().await.unwrap();
    server_b.close().await.unwrap();
}

#[tokio::test]
/// Two calls of one session on two servers at once take turns (the
/// session's lease): B's call waits while A's run holds the session, then
/// runs on the history with A's turn in it; neither is an error.
async fn two_overlapping_calls_of_a_session_take_turns() {
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    store.create("s").await.unwrap();
    // Server A's run waits inside a tool until the test lets it go.
    let entered = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let gate = {
        let (entered, release) = (entered.clone(), release.clone());
        DefinedTool::from_json(
            "gate",
            "Waits",
            json!({"type": "object"}),
            move |_: Value, _: lousho::ToolContext| {
                let (entered, release) = (entered.clone(), release.clone());
                async move {
                    entered.notify_one();
                    release.notified().await;
                    ToolOutput::text("through")
                }
            },
        )
        .read_only()
    };
    let model_a = ScriptedModel::new([
        ScriptedTurn::tool_call("gate", json!({})),
        ScriptedTurn::text("late"),
    ]);
    let agent_a = Agent::builder()
        .model(model_a.clone())
        .tool(gate)
        .build()
        .unwrap();
    let server_a = serve_mcp(
        ServeOptions::new(agent_a)
            .name("chat")
            .sessions(store.clone())
            .http(HttpOptions::new().port(0)),
    )
    .await
    .unwrap();
    let model_b = ScriptedModel::new([ScriptedTurn::text("first")]);
    let server_b = serve(&model_b, Some(store.clone())).await;
    let (ca, cb) = (client(&server_a).await, client(&server_b).await);

    let slow = tokio::spawn(async move {
        let r = ask(&ca, json!({"message": "from A", "session": "s"})).await;
        (ca, r)
    });
    tokio::time::timeout(Duration::from_secs(30), entered.notified())
        .await
        .expect("server A's run reached the gate");
    let second = tokio::spawn(async move {
        let r = ask(&cb, json!({"message": "from B", "session": "s"})).await;
        (cb, r)
    });
    release.notify_one();
    let (ca, first) = tokio::time::timeout(Duration::from_secs(60), slow)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.is_error, Some(false));
    let (cb, second) = tokio::time::timeout(Duration::from_secs(60), second)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.is_error, Some(false));
    assert_eq!(session_of(&second), "s");
    // A's turn, then B's, each in one piece; B's model saw A's turn.
    let stored = store.load("s").await.unwrap().unwrap();
    let stored: Vec<String> = stored.messages.iter().map(Message::text).collect();
    assert_eq!(stored, ["from A", "", "", "late", "from B", "first"]);
    assert_eq!(model_b.last_request().unwrap().messages.len(), 5);
    drop((ca, cb));
    server_a.close().await.unwrap();
    server_b.close().await.unwrap();
}

#[tokio::test]
async fn without_sessions_the_tool_is_unchanged_and_a_session_argument_is_refused() {
    let model = ScriptedModel::repeating([ScriptedTurn::text("ok")]);
    let server = serve(&model, None).await;
    let c = client(&server).await;
    let tools = c.list_all_tools().await.unwrap();
    assert!(tools[0].input_schema["properties"].get("session").is_none());
    assert!(tools[0].output_schema.is_none());
    let plain = ask(&c, json!({"message": "hi"})).await;
    assert_eq!(plain.structured_content, None);
    assert_eq!(plain.content.len(), 1);
    let refused = ask(&c, json!({"message": "hi", "session": "x"})).await;
    assert_eq!(refused.is_error, Some(true));
    let text = &refused.content[0].as_text().unwrap().text;
    assert!(text.contains("serve.sessions"), "{text}");
    assert_eq!(model.played(), 1, "the refused call ran nothing");
    drop(c);
    server.close().await.unwrap();
}
