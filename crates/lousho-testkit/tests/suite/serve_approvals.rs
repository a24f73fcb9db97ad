//! Approvals over MCP (`ServeApprovals::Elicit`) with the official Python and
//! TypeScript clients, over stdio and stateful HTTP: the served agent asks to
//! run `delete_order` (needs approval); the client's user allows (the tool
//! runs), denies with a reason (it does not; the agent finishes and sees the
//! reason), cannot be asked (no elicitation capability: `isError`), or never
//! answers (denied after the timeout).

use super::peers::{HttpServer, node, python, run_client, test_server};
use serde_json::Value;
use std::path::Path;

/// Short, so the "never answers" case is quick; generous for a loaded machine.
const TIMEOUT_MS: &str = "2000";

fn text(report: &Value) -> &str {
    report["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

fn is_error(report: &Value) -> bool {
    report["result"]["isError"] == true
}

/// Runs the client with `answer` against the server over `transport`.
fn ask(program: &Path, script: &str, transport: &str, answer: &str) -> Value {
    let server_args = ["--approvals", "elicit", "--approval-timeout-ms", TIMEOUT_MS];
    match transport {
        "stdio" => {
            let server = test_server();
            let mut args = vec![answer, "stdio", server.to_str().unwrap()];
            args.extend(server_args);
            run_client(program, script, &args)
        }
        _ => {
            let mut extra = vec!["--stateful"];
            extra.extend(server_args);
            let server = HttpServer::start(&extra);
            run_client(program, script, &[answer, "http", &server.url])
        }
    }
}

fn check_all(program: &Path, script: &str, transport: &str) {
    let label = format!("{script} over {transport}");

    let allowed = ask(program, script, transport, "allow");
    assert!(!is_error(&allowed), "{label}: {allowed}");
    assert_eq!(
        text(&allowed),
        "Tool results: delete_order: deleted",
        "{label}: allowed, the tool ran"
    );
    let asked = &allowed["asked"][0];
    let message = asked["message"].as_str().unwrap();
    assert!(
        message.starts_with("The agent wants to run `delete_order`"),
        "{label}: {message}"
    );
    assert!(
        message.contains("  id: 42"),
        "{label}: the input: {message}"
    );
    assert_eq!(
        asked["schema"]["properties"]["decision"]["enum"],
        serde_json::json!(["allow", "deny"])
    );

    let denied = ask(program, script, transport, "deny");
    assert!(!is_error(&denied), "{label}: the agent goes on: {denied}");
    assert_eq!(
        text(&denied),
        "Tool results: delete_order: The user denied the call to `delete_order`: not on a Friday",
        "{label}: denied, the tool did not run and the agent finished"
    );

    let unable = ask(program, script, transport, "none");
    assert!(is_error(&unable), "{label}: {unable}");
    assert!(
        text(&unable).contains("approval needed: the agent paused before calling `delete_order`")
            && text(&unable).contains("does not support elicitation"),
        "{label}: {}",
        text(&unable)
    );
    assert_eq!(unable["asked"].as_array().unwrap().len(), 0);

    let silent = ask(program, script, transport, "silent");
    assert!(!is_error(&silent), "{label}: {silent}");
    assert_eq!(
        text(&silent),
        "Tool results: delete_order: The user denied the call to `delete_order`: no answer within 2 s, so it was not approved",
        "{label}: no answer, denied after the timeout"
    );
}

#[test]
fn python_client_approves_over_stdio() {
    let Some(py) = python() else { return };
    check_all(&py, "approval_client.py", "stdio");
}

#[test]
fn python_client_approves_over_stateful_http() {
    let Some(py) = python() else { return };
    check_all(&py, "approval_client.py", "http");
}

#[test]
fn typescript_client_approves_over_stdio() {
    let Some(node) = node() else { return };
    check_all(&node, "approval_client.mjs", "stdio");
}

#[test]
fn typescript_client_approves_over_stateful_http() {
    let Some(node) = node() else { return };
    check_all(&node, "approval_client.mjs", "http");
}

/// Over stateless HTTP the client cannot answer: the run's `isError` says how
/// to serve so it can.
#[test]
fn stateless_http_says_how_to_get_approvals() {
    let Some(node) = node() else { return };
    let server = HttpServer::start(&["--approvals", "elicit"]);
    let report = run_client(
        &node,
        "approval_client.mjs",
        &["allow", "http", &server.url],
    );
    assert!(is_error(&report), "{report}");
    assert!(
        text(&report).contains("serve.stateful: true"),
        "{}",
        text(&report)
    );
    assert_eq!(report["asked"].as_array().unwrap().len(), 0);
}
