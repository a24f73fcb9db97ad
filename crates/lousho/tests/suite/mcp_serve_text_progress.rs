//! While a served agent runs, its partial text streams to the client as
//! progress messages, throttled; an agent run as a tool streams its text
//! too, named.

use futures::StreamExt;
use lousho::Agent;
use lousho::mcp::HttpOptions;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{FinishReason, Model, ModelEvent, ModelRequest, ModelStream};
use lousho::{ServeOptions, serve_mcp};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    ProgressNotificationParam, object,
};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Streams its answer in many small deltas, all at once.
struct Chunky;

const WORDS: usize = 200;

fn full_text() -> String {
    (0..WORDS).map(|i| format!("w{i} ")).collect()
}

impl Model for Chunky {
    fn name(&self) -> &str {
        "chunky"
    }

    fn stream(&self, _request: &ModelRequest) -> ModelStream {
        let mut events: Vec<_> = (0..WORDS)
            .map(|i| Ok(ModelEvent::TextDelta(format!("w{i} "))))
            .collect();
        events.push(Ok(ModelEvent::Finished(FinishReason::Stop)));
        futures::stream::iter(events).boxed()
    }
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("text-progress-test", "0"),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.0
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }
}

async fn call(options: ServeOptions, tool: &str) -> (String, Vec<String>) {
    let server = serve_mcp(options.http(HttpOptions::new().port(0)))
        .await
        .unwrap();
    let recorder = Recorder::default();
    let client = recorder
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(
            server.url().unwrap(),
        ))
        .await
        .unwrap();
    let result = client
        .call_tool(
            CallToolRequestParams::new(tool.to_owned())
                .with_arguments(object(json!({"message": "go"}))),
        )
        .await
        .unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    drop(client);
    server.close().await.unwrap();
    let seen = recorder.0.lock().unwrap().clone();
    (text, seen)
}

#[tokio::test]
async fn a_served_agents_partial_text_streams_as_throttled_progress() {
    let agent = Agent::builder()
        .name("writer")
        .model(Chunky)
        .build()
        .unwrap();
    let (text, seen) = call(ServeOptions::new(agent), "writer").await;
    assert_eq!(text, full_text());
    let texts: Vec<&String> = seen.iter().filter(|m| m.starts_with('w')).collect();
    assert_eq!(
        texts.iter().map(|s| s.as_str()).collect::<String>(),
        full_text(),
        "the messages carry the text, in order: {seen:?}"
    );
    assert!(
        texts.len() < 10,
        "{WORDS} deltas at once are throttled into a few messages: {seen:?}"
    );
    assert!(seen.contains(&"turn 1 finished".to_owned()), "{seen:?}");
}

#[tokio::test]
async fn an_agent_run_as_a_tool_streams_its_text_named() {
    let child = Agent::builder()
        .name("child")
        .model(Chunky)
        .build()
        .unwrap();
    let parent = Agent::builder()
        .name("parent")
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("child", json!({"message": "write"})),
            ScriptedTurn::text("parent done"),
        ]))
        .tool(child.as_tool("child", "the child"))
        .build()
        .unwrap();
    let (text, seen) = call(ServeOptions::new(parent), "parent").await;
    assert_eq!(text, "parent done");
    let child_text: String = seen
        .iter()
        .filter_map(|m| m.strip_prefix("child: "))
        .collect();
    assert_eq!(child_text, full_text(), "{seen:?}");
}
