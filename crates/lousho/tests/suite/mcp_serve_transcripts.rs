//! `ServeOptions::session_transcripts`: a session store's conversations as
//! resources (`lousho://sessions`, `lousho://sessions/{id}`), read by
//! rmcp's client.

use lousho::mcp::HttpOptions;
use lousho::model::Message;
use lousho::session::{MemoryStore, SessionStore};
use lousho::{Agent, ServeOptions, serve_mcp};
use rmcp::ServiceExt;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ErrorCode, ReadResourceRequestParams, Reference,
    ResourceContents,
};
use rmcp::service::ServiceError;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;
use std::sync::Arc;

#[tokio::test]
async fn transcripts_are_listed_read_and_completed() {
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    store.create("chat-1").await.unwrap();
    store
        .append(
            "chat-1",
            0,
            &[
                Message::user("Where is my order?"),
                Message::assistant("On its way."),
            ],
        )
        .await
        .unwrap();
    let agent = Agent::builder().model("test").build().unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent)
            .session_transcripts(store)
            .http(HttpOptions::new().port(0)),
    )
    .await
    .unwrap();
    let c = ()
        .serve(StreamableHttpClientTransport::from_uri(
            server.url().unwrap(),
        ))
        .await
        .unwrap();
    let read = async |uri: &str| -> Result<Value, ErrorCode> {
        match c.read_resource(ReadResourceRequestParams::new(uri)).await {
            Ok(r) => match &r.contents[0] {
                ResourceContents::TextResourceContents { text, .. } => {
                    Ok(serde_json::from_str(text).unwrap())
                }
                other => panic!("{other:?}"),
            },
            Err(ServiceError::McpError(e)) => Err(e.code),
            Err(e) => panic!("{e}"),
        }
    };
    let list = read("lousho://sessions").await.unwrap();
    assert_eq!(list["sessions"][0]["id"], "chat-1", "{list}");
    assert_eq!(list["sessions"][0]["messages"], 2, "{list}");
    let one = read("lousho://sessions/chat-1").await.unwrap();
    assert_eq!(one["version"], 2, "{one}");
    assert_eq!(one["messages"].as_array().unwrap().len(), 2, "{one}");
    assert!(one.to_string().contains("On its way."), "{one}");
    assert_eq!(
        read("lousho://sessions/nope").await.unwrap_err(),
        ErrorCode::RESOURCE_NOT_FOUND
    );
    let done = c
        .complete(CompleteRequestParams::new(
            Reference::for_resource("lousho://sessions/{id}"),
            ArgumentInfo::new("id", "chat"),
        ))
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["chat-1"]);
    drop(c);
    server.close().await.unwrap();
}
