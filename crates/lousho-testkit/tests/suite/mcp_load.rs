//! load_mcp_tools: tools from an rmcp client the user connected.

use super::fixture::{call, fixture_bin};
use lousho::mcp::rmcp::ServiceExt;
use lousho::mcp::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use lousho::mcp::{LoadOptions, load_mcp_tools};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::{Agent, Approval};
use serde_json::json;

#[tokio::test]
async fn tools_from_a_user_connected_client_work_in_an_agent() {
    let cmd = tokio::process::Command::new(fixture_bin()).configure(|c| {
        c.arg("serve").kill_on_drop(true);
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let tools = load_mcp_tools(&client, "my-server", LoadOptions::default())
        .await
        .unwrap();
    assert!(tools.contains("my-server__echo") && tools.contains("my-server__fetch_url"));
    assert!(
        tools
            .get("my-server__destroy")
            .unwrap()
            .spec()
            .needs_approval()
    );
    assert!(
        !tools
            .get("my-server__echo")
            .unwrap()
            .spec()
            .needs_approval()
    );
    assert_eq!(
        call(
            tools.get("my-server__echo").unwrap(),
            json!({"text": "mine"})
        )
        .await
        .to_model_text(),
        "mine"
    );

    let never = load_mcp_tools(
        &client,
        "s",
        LoadOptions::default().approval(Approval::Never),
    )
    .await
    .unwrap();
    assert!(!never.get("s__destroy").unwrap().spec().needs_approval());

    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("my-server__echo", json!({"text": "x"})),
        ScriptedTurn::text("ok"),
    ]);
    let agent = Agent::builder().model(model).tools(tools).build().unwrap();
    assert_eq!(
        agent.send("go").await.unwrap().tool_calls[0]
            .output
            .to_model_text(),
        "x"
    );
    client.cancel().await.unwrap();
}
