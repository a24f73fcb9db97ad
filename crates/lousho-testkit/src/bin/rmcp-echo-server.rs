//! A plain rmcp 3.11 server with one `echo` tool, written the way rmcp's docs
//! show (default multi-thread runtime, `transport::stdio()`; stateless JSON
//! Streamable HTTP with `--http`): the baseline of the serve benchmark.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool, object,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt};
use std::sync::Arc;

#[derive(Clone)]
struct Echo {
    tools: Arc<Vec<Tool>>,
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp-echo", "0.0.0"))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        req: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = req
            .arguments
            .as_ref()
            .and_then(|a| a.get("text"))
            .and_then(|t| t.as_str())
            .unwrap_or_default()
            .to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let schema =
        object(serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}));
    let echo = Echo {
        tools: Arc::new(vec![Tool::new(
            "echo",
            "Echo the text back",
            Arc::new(schema),
        )]),
    };
    if std::env::args().any(|a| a == "--http") {
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true);
        let service = StreamableHttpService::new(
            move || Ok(echo.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        let app = axum::Router::new().route_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        println!("listening on http://{}/mcp", listener.local_addr()?);
        axum::serve(listener, app).await?;
    } else {
        echo.serve(rmcp::transport::stdio())
            .await?
            .waiting()
            .await?;
    }
    Ok(())
}
