//! An agent-as-tool chain served over MCP, cancelled from the top by the
//! official Python and TypeScript clients over stdio and HTTP: every level's
//! tool sees its cancellation token fire.

use super::peers::{node, python, run_against_test_server};
use std::path::Path;

fn check(program: &Path, script: &str, transport: &str) {
    let report = run_against_test_server(program, script, transport, &["--chain"]);
    let label = format!("{script} over {transport}");
    let levels = serde_json::json!(["bottom", "middle", "top"]);
    assert_eq!(report["started"], levels, "{label}: every level ran");
    assert_eq!(
        report["cancelled"], levels,
        "{label}: every level's tool saw its token fire"
    );
    assert_eq!(
        report["finished"], false,
        "{label}: the call ended by cancellation"
    );
}

#[test]
fn python_client_cancels_an_agent_chain_over_stdio() {
    let Some(py) = python() else { return };
    check(&py, "chain_client.py", "stdio");
}

#[test]
fn python_client_cancels_an_agent_chain_over_http() {
    let Some(py) = python() else { return };
    check(&py, "chain_client.py", "http");
}

#[test]
fn typescript_client_cancels_an_agent_chain_over_stdio() {
    let Some(node) = node() else { return };
    check(&node, "chain_client.mjs", "stdio");
}

#[test]
fn typescript_client_cancels_an_agent_chain_over_http() {
    let Some(node) = node() else { return };
    check(&node, "chain_client.mjs", "http");
}
