//! An agent's own MCP servers take the `connect_mcp` options: through
//! `AgentBuilder::mcp_options` and through a spec file's `mcp:` section.

use super::fixture::{call, fixture, fixture_bin};
use lousho::McpServer;
use lousho::mcp::{ConnectOptions, OnError, ToolNaming};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::spec::SpecLoader;
use lousho::{Agent, AgentBuilder};
use serde_json::json;

fn echo_then_done(tool: &str) -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::tool_call(tool, json!({"text": "hi"})),
        ScriptedTurn::text("done"),
    ])
}

/// The names of the agent's tools once its servers are ready.
async fn tool_names(agent: &Agent) -> Vec<String> {
    agent.ready().await.unwrap();
    let mut names: Vec<String> = agent
        .tools()
        .unwrap()
        .iter()
        .map(|t| t.spec().name.clone())
        .collect();
    names.sort();
    names
}

/// Readies the agent, takes its `echo` tool, closes the agent, calls the tool.
async fn echo_after_close(agent: &Agent, name: &str) -> lousho::ToolOutput {
    agent.ready().await.unwrap();
    let echo = agent.tools().unwrap().get(name).unwrap().clone();
    agent.close().await;
    let out = call(&echo, json!({"text": "again"})).await;
    agent.close().await;
    out
}

/// A spec file with the fixture server as `fx` (and a broken `bad` with `broken`).
fn spec_builder(mcp: &str, broken: bool) -> AgentBuilder {
    let bad = if broken {
        "  bad:\n    command: /nonexistent/bad-server\n"
    } else {
        ""
    };
    let text = format!(
        "model: test\n{mcp}mcpServers:\n  fx:\n    command: ${{FIXTURE}}\n    args: [serve]\n{bad}"
    );
    SpecLoader::new()
        .without_env()
        .var("FIXTURE", fixture_bin())
        .parse(&text, std::env::temp_dir().join("agent.yaml"))
        .unwrap()
        .agent_builder()
        .unwrap()
}

#[tokio::test]
async fn mcp_prefixed_naming_names_an_agents_own_tools_mcp_server_tool() {
    let agent = Agent::builder()
        .model(echo_then_done("mcp__fx__echo"))
        .mcp_server("fx", fixture("serve"))
        .mcp_options(ConnectOptions::new().naming(ToolNaming::McpPrefixed))
        .build()
        .unwrap();
    let names = tool_names(&agent).await;
    assert!(names.contains(&"mcp__fx__echo".to_owned()), "{names:?}");
    assert!(
        names.iter().all(|n| n.starts_with("mcp__fx__")),
        "{names:?}"
    );
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.tool_calls[0].output.to_model_text(), "hi");
    agent.close().await;
}

#[tokio::test]
async fn without_lazy_an_agents_own_tool_fails_after_close() {
    let agent = Agent::builder()
        .model("test")
        .mcp_server("fx", fixture("serve"))
        .mcp_options(ConnectOptions::new().lazy(false))
        .build()
        .unwrap();
    let out = echo_after_close(&agent, "fx__echo").await;
    assert!(out.is_error, "{out:?}");
    let text = out.to_model_text();
    assert!(text.contains("`fx`") && text.contains("lazy"), "{text}");
}

#[tokio::test]
async fn with_lazy_by_default_an_agents_own_tool_reconnects_after_close() {
    let agent = Agent::builder()
        .model("test")
        .mcp_server("fx", fixture("serve"))
        .build()
        .unwrap();
    let out = echo_after_close(&agent, "fx__echo").await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.to_model_text(), "again");
}

fn good_and_bad() -> [(&'static str, McpServer); 2] {
    [
        ("fx", fixture("serve")),
        ("bad", McpServer::stdio("/nonexistent/bad-server")),
    ]
}

#[tokio::test]
async fn on_error_skip_leaves_an_agents_broken_server_out_and_the_rest_works() {
    let agent = Agent::builder()
        .model(echo_then_done("fx__echo"))
        .mcp_servers(good_and_bad())
        .mcp_options(ConnectOptions::new().on_error(OnError::Skip))
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.text, "done");
    assert_eq!(reply.tool_calls[0].output.to_model_text(), "hi");
    let names = tool_names(&agent).await;
    assert!(names.iter().all(|n| n.starts_with("fx__")), "{names:?}");
    agent.close().await;
}

#[tokio::test]
async fn on_error_throw_by_default_fails_an_agents_run_naming_the_server() {
    let agent = Agent::builder()
        .model(echo_then_done("fx__echo"))
        .mcp_servers(good_and_bad())
        .build()
        .unwrap();
    let err = agent.send("go").await.unwrap_err().to_string();
    assert!(err.contains("`bad`"), "{err}");
    agent.close().await;
}

#[tokio::test]
async fn a_spec_files_mcp_naming_names_the_tools() {
    let agent = spec_builder("mcp:\n  naming: mcp\n", false)
        .model(echo_then_done("mcp__fx__echo"))
        .build()
        .unwrap();
    let names = tool_names(&agent).await;
    assert!(names.contains(&"mcp__fx__echo".to_owned()), "{names:?}");
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.tool_calls[0].output.to_model_text(), "hi");
    agent.close().await;
}

#[tokio::test]
async fn a_spec_files_mcp_lazy_false_fails_a_call_after_close() {
    let agent = spec_builder("mcp:\n  lazy: false\n", false)
        .build()
        .unwrap();
    let out = echo_after_close(&agent, "fx__echo").await;
    assert!(out.is_error, "{out:?}");
    assert!(out.to_model_text().contains("lazy"), "{out:?}");
}

#[tokio::test]
async fn a_spec_files_mcp_on_error_skip_leaves_a_broken_server_out() {
    let agent = spec_builder("mcp:\n  onError: skip\n", true)
        .model(echo_then_done("fx__echo"))
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.tool_calls[0].output.to_model_text(), "hi");
    agent.close().await;
    // Without the key, the broken server fails the run.
    let agent = spec_builder("", true)
        .model(echo_then_done("fx__echo"))
        .build()
        .unwrap();
    let err = agent.send("go").await.unwrap_err().to_string();
    assert!(err.contains("`bad`"), "{err}");
    agent.close().await;
}
