//! `ServeApprovals::Elicit` for tools exposed directly, with rmcp's client
//! over loopback stateful HTTP: a call that needs approval is put
//! to the client's user first; allow runs it, deny returns the user's reason.

use lousho::mcp::{HttpOptions, ServeApprovals};
use lousho::tool::DefinedTool;
use lousho::{Agent, ToolContext, ToolOutput};
use lousho::{ServeOptions, serve_mcp};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, Implementation, object,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Answers every approval form with `decision` (and a reason).
#[derive(Clone)]
struct Approver {
    decision: &'static str,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Approver {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("approver", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"decision": self.decision, "reason": "checked the ticket"})))
    }
}

fn delete_order() -> DefinedTool {
    DefinedTool::from_json(
        "delete_order",
        "Delete an order",
        json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        |input: Value, _ctx: ToolContext| async move {
            ToolOutput::text(format!("deleted {}", input["id"].as_str().unwrap_or("?")))
        },
    )
    .needs_approval(true)
}

async fn call(decision: &'static str) -> (Value, Vec<String>) {
    let agent = Agent::builder().model("test").build().unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent)
            .tool(delete_order())
            .approvals(ServeApprovals::Elicit)
            .http(HttpOptions::new().port(0).stateful(true)),
    )
    .await
    .unwrap();
    let approver = Approver {
        decision,
        asked: Arc::default(),
    };
    let client = approver
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(
            server.url().unwrap(),
        ))
        .await
        .unwrap();
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(
        names.contains(&"delete_order".to_owned()),
        "exposed: {names:?}"
    );
    let result = client
        .call_tool(
            CallToolRequestParams::new("delete_order").with_arguments(object(json!({"id": "42"}))),
        )
        .await
        .unwrap();
    drop(client);
    server.close().await.unwrap();
    let asked = approver.asked.lock().unwrap().clone();
    (serde_json::to_value(result).unwrap(), asked)
}

#[tokio::test]
async fn a_direct_tool_that_needs_approval_runs_once_the_user_allows() {
    let (result, asked) = call("allow").await;
    assert_eq!(result["content"][0]["text"], "deleted 42", "{result}");
    assert_eq!(
        asked,
        ["The agent wants to run `delete_order`.\nInput:\n  id: 42\nAllow it?"]
    );
}

#[tokio::test]
async fn a_denied_direct_call_does_not_run_and_says_why() {
    let (result, asked) = call("deny").await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["content"][0]["text"],
        "The user denied the call to `delete_order`: checked the ticket"
    );
    assert_eq!(asked.len(), 1);
}
