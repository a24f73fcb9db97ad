//! Spec files with several agents (`agents:`): `lousho mcp` serves each as a
//! tool, `lousho run --agent NAME` runs one.

use super::common::{run, spec_file, stderr, stdout};
use lousho::mcp::rmcp::ServiceExt;
use lousho::mcp::rmcp::model::CallToolRequestParams;
use lousho::mcp::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;

const TEAM: &str = "\
name: team
model: test
tools: [writer]
agents:
  researcher: { model: test, description: Finds facts }
  writer:
    model: test
    description: Writes, asking the researcher
    tools: [researcher]
";

#[test]
fn run_agent_runs_the_named_agent() {
    let (_dir, path) = spec_file("team.yaml", TEAM);
    let out = run(&["run", &path, "--agent", "researcher", "hello"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "You said: hello");

    let out = run(&["run", &path, "--agent", "writer", "hello"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("- researcher: You said: "),
        "{}",
        stdout(&out)
    );

    let out = run(&["run", &path, "--agent", "nobody", "hello"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("no agent `nobody`") && err.contains("researcher, writer"),
        "{err}"
    );
}

#[tokio::test]
async fn lousho_mcp_serves_each_agent_as_a_tool() {
    let (_dir, path) = spec_file("team.yaml", TEAM);
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_lousho")).configure(|c| {
        c.args(["mcp", &path]).env("LOUSHO_LOG", "warn");
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["team", "researcher", "writer"]);
    let researcher = tools.iter().find(|t| t.name == "researcher").unwrap();
    assert_eq!(researcher.description.as_deref(), Some("Finds facts"));

    let call = |name: &'static str| {
        let args = json!({"message": "hello"}).as_object().cloned().unwrap();
        CallToolRequestParams::new(name).with_arguments(args)
    };
    let text = |r: lousho::mcp::rmcp::model::CallToolResult| {
        assert_ne!(r.is_error, Some(true), "{r:?}");
        r.content[0].as_text().unwrap().text.clone()
    };
    assert_eq!(
        text(client.call_tool(call("researcher")).await.unwrap()),
        "You said: hello"
    );
    let team = text(client.call_tool(call("team")).await.unwrap());
    assert!(
        team.starts_with("Tool results:\n- writer: Tool results:\n- researcher: You said: "),
        "{team}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_file_of_agents_only_serves_them() {
    let (_dir, path) = spec_file(
        "team.yaml",
        "name: team\nagents:\n  a: { model: test }\n  b: { model: test }\n",
    );
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_lousho")).configure(|c| {
        c.args(["mcp", &path]).env("LOUSHO_LOG", "warn");
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["a", "b"]);
    client.cancel().await.unwrap();
}
