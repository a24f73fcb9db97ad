//! Several agents on one server, listed and callable by the official Python
//! and TypeScript clients over stdio and HTTP; one of them calls the others
//! as tools (agents as tools, in process).

use super::peers::{node, python, run_against_test_server};
use serde_json::Value;
use std::path::Path;

fn check(program: &Path, script: &str, transport: &str) {
    let report = run_against_test_server(program, script, transport, &["--agents"]);
    let label = format!("{script} over {transport}");
    assert_eq!(
        report["tools"],
        serde_json::json!(["team", "writer", "researcher"]),
        "{label}: one tool per agent"
    );
    let call = |name: &str| -> (bool, String) {
        let c: &Value = &report["calls"][name];
        (
            c["isError"] == true,
            c["text"].as_str().unwrap_or_default().to_owned(),
        )
    };
    assert_eq!(
        call("researcher"),
        (false, "You said: hello researcher".to_owned()),
        "{label}"
    );
    let (failed, writer) = call("writer");
    assert!(!failed, "{label}: {writer}");
    assert!(
        writer.starts_with("Tool results:\n- researcher: You said: "),
        "{label}: the writer called the researcher: {writer}"
    );
    let (failed, team) = call("team");
    assert!(!failed, "{label}: {team}");
    assert!(
        team.starts_with("Tool results:\n- writer: Tool results:\n- researcher: You said: "),
        "{label}: the team called the writer, which called the researcher: {team}"
    );
}

#[test]
fn python_client_lists_and_calls_several_agents_over_stdio() {
    let Some(py) = python() else { return };
    check(&py, "agents_client.py", "stdio");
}

#[test]
fn python_client_lists_and_calls_several_agents_over_http() {
    let Some(py) = python() else { return };
    check(&py, "agents_client.py", "http");
}

#[test]
fn typescript_client_lists_and_calls_several_agents_over_stdio() {
    let Some(node) = node() else { return };
    check(&node, "agents_client.mjs", "stdio");
}

#[test]
fn typescript_client_lists_and_calls_several_agents_over_http() {
    let Some(node) = node() else { return };
    check(&node, "agents_client.mjs", "http");
}
