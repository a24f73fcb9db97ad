//! Elicitation: the MCP client declares the `elicitation` capability only
//! with a handler, passes `elicitation/create` to it (server name, message,
//! schema) and returns accept/decline/cancel; `defaults()` fills SEP-1034
//! defaults. The server is a small rmcp server on loopback HTTP whose `ask`
//! tool elicits and reports what came back.

use lousho::mcp::{ConnectOptions, McpClient};
use lousho::mcp::{ElicitationRequest, ElicitationResponse};
use lousho::tool::ToolContext;
use lousho::{McpServer, connect_mcp};
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequestParams, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

#[derive(Clone)]
struct Asker;

fn ask_tool() -> Tool {
    serde_json::from_value(json!({"name": "ask", "description": "Asks the user",
        "inputSchema": {"type": "object", "properties": {}}}))
    .unwrap()
}

impl ServerHandler for Asker {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![ask_tool()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == "ask").then(ask_tool)
    }

    async fn call_tool(
        &self,
        _req: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = cx
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        let report = if declared {
            let params: ElicitRequestParams = serde_json::from_value(json!({
                "message": "Who are you?",
                "requestedSchema": {"type": "object", "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                    "verified": {"type": "boolean", "default": true},
                    "email": {"type": "string"}
                }}
            }))
            .unwrap();
            match cx.peer.create_elicitation(params).await {
                Ok(result) => json!({"action": result.action, "content": result.content}),
                Err(e) => json!({"error": e.to_string()}),
            }
        } else {
            json!({"declared": false})
        };
        let result: CallToolResult = serde_json::from_value(
            json!({"content": [{"type": "text", "text": report.to_string()}]}),
        )
        .unwrap();
        Ok(result.into())
    }
}

async fn serve() -> (String, tokio_util::sync::CancellationToken) {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let ct = tokio_util::sync::CancellationToken::new();
    let svc = StreamableHttpService::new(
        || Ok(Asker),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token()),
    );
    let app = axum::Router::new().nest_service("/mcp", svc);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = ct.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    });
    (format!("http://{addr}/mcp"), ct)
}

async fn ask(mcp: &McpClient) -> Value {
    let tools = mcp.tools();
    let out = tools
        .get("people__ask")
        .expect("ask tool")
        .call(json!({}), ToolContext::new("t"))
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.to_model_text());
    serde_json::from_str(&out.to_model_text()).unwrap()
}

#[tokio::test]
async fn without_a_handler_no_capability_is_declared() {
    let (url, stop) = serve().await;
    let mcp = connect_mcp(
        [("people", McpServer::http(&url))],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(ask(&mcp).await, json!({"declared": false}));
    mcp.close().await;
    stop.cancel();
}

#[tokio::test]
async fn the_handler_sees_the_request_and_its_defaults_are_sent_back() {
    let (url, stop) = serve().await;
    let seen: Arc<Mutex<Vec<ElicitationRequest>>> = Arc::default();
    let log = seen.clone();
    let options = ConnectOptions::default().elicitation(move |request: ElicitationRequest| {
        log.lock().unwrap().push(request.clone());
        async move {
            let mut content = request.defaults();
            content.insert("email".into(), json!("jd@example.com"));
            ElicitationResponse::Accept(content)
        }
    });
    let mcp = connect_mcp([("people", McpServer::http(&url))], options)
        .await
        .unwrap();
    let report = ask(&mcp).await;
    assert_eq!(report["action"], "accept");
    assert_eq!(
        report["content"],
        json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active",
               "verified": true, "email": "jd@example.com"})
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].server, "people");
    assert_eq!(seen[0].message, "Who are you?");
    assert_eq!(seen[0].requested_schema["properties"]["age"]["default"], 30);
    mcp.close().await;
    stop.cancel();
}

#[tokio::test]
async fn decline_and_cancel_reach_the_server() {
    let (url, stop) = serve().await;
    for (answer, action) in [
        (ElicitationResponse::Decline, "decline"),
        (ElicitationResponse::Cancel, "cancel"),
    ] {
        let options = ConnectOptions::default().elicitation(move |_: ElicitationRequest| {
            let answer = answer.clone();
            async move { answer }
        });
        let mcp = connect_mcp([("people", McpServer::http(&url))], options)
            .await
            .unwrap();
        let report = ask(&mcp).await;
        assert_eq!(report["action"], action);
        assert!(report["content"].is_null(), "{report}");
        mcp.close().await;
    }
    stop.cancel();
}

#[tokio::test]
async fn an_agents_mcp_servers_use_the_builders_handler() {
    let (url, stop) = serve().await;
    let agent = lousho::Agent::builder()
        .model("test")
        .mcp_server("people", McpServer::http(&url))
        .mcp_options(
            ConnectOptions::new().elicitation(|request: ElicitationRequest| async move {
                ElicitationResponse::Accept(request.defaults())
            }),
        )
        .build()
        .unwrap();
    agent.ready().await.unwrap();
    let tools = agent.tools().unwrap();
    let out = tools
        .get("people__ask")
        .expect("ask tool")
        .call(json!({}), ToolContext::new("t"))
        .await
        .unwrap();
    let report: Value = serde_json::from_str(&out.to_model_text()).unwrap();
    assert_eq!(report["action"], "accept");
    assert_eq!(report["content"]["name"], "John Doe");
    agent.close().await;
    stop.cancel();
}
