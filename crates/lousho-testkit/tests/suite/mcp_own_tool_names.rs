//! An own tool may not take an MCP tool's full name (`<server>__<tool>`): the
//! clash is an error naming both as soon as the names are known — at
//! `build()` when the servers are connected already, at `ready()` (the first
//! run's connect) for an agent's own servers — never a build that works and
//! runs that all fail.

use super::fixture::fixture;
use super::mcp_handle::python_server;
use lousho::agent::BuildError;
use lousho::connect_mcp;
use lousho::mcp::ConnectOptions;
use lousho::{Agent, AgentError};
use lousho_testkit::tools::counting_echo;
use std::sync::Arc;

fn own(name: &str) -> lousho::tool::DefinedTool {
    counting_echo(name, Arc::default())
}

fn names_both(error: &str, full: &str, server: &str, tool: &str) {
    assert!(error.contains(&format!("`{full}`")), "{error}");
    assert!(
        error.contains(&format!("tool `{tool}` of MCP server `{server}`")),
        "{error}"
    );
}

#[tokio::test]
async fn an_own_tool_named_like_a_connected_handles_tool_fails_build() {
    let mcp = connect_mcp([("fx", fixture("serve"))], ConnectOptions::default())
        .await
        .unwrap();
    let by_source = Agent::builder()
        .model("test")
        .tool(own("fx__echo"))
        .tool_source(Arc::new(mcp.clone()))
        .build()
        .unwrap_err();
    assert!(
        matches!(by_source, BuildError::DuplicateTool(_)),
        "{by_source}"
    );
    names_both(&by_source.to_string(), "fx__echo", "fx", "echo");
    let by_value = Agent::builder()
        .model("test")
        .tools((own("fx__echo"), mcp.tools()))
        .build()
        .unwrap_err();
    names_both(&by_value.to_string(), "fx__echo", "fx", "echo");
    mcp.close().await;
}

#[tokio::test]
async fn an_own_tool_named_like_an_own_servers_tool_fails_ready() {
    let agent = Agent::builder()
        .model("test")
        .tool(own("fx__echo"))
        .mcp_server("fx", fixture("serve"))
        .build()
        .expect("the server's tools are not known yet");
    let err = agent.ready().await.unwrap_err();
    assert!(matches!(err, AgentError::DuplicateTool(_)), "{err}");
    names_both(&err.to_string(), "fx__echo", "fx", "echo");
    // A run says the same, before the model is asked anything.
    let err = agent.send("go").await.unwrap_err();
    names_both(&err.to_string(), "fx__echo", "fx", "echo");
    agent.close().await;
}

#[tokio::test]
async fn python_sdk_an_own_tool_named_like_its_tool_is_caught_early() {
    let Some(entry) = python_server("--tag=own-names") else {
        return;
    };
    let agent = Agent::builder()
        .model("test")
        .tool(own("py__add"))
        .mcp_server("py", entry.clone())
        .build()
        .unwrap();
    names_both(
        &agent.ready().await.unwrap_err().to_string(),
        "py__add",
        "py",
        "add",
    );
    agent.close().await;

    let mcp = connect_mcp([("py", entry)], ConnectOptions::default())
        .await
        .unwrap();
    let err = Agent::builder()
        .model("test")
        .tool(own("py__add"))
        .tool_source(Arc::new(mcp.clone()))
        .build()
        .unwrap_err();
    names_both(&err.to_string(), "py__add", "py", "add");
    mcp.close().await;
}
