//! Approvals for protocol 2026-07-28 clients (multi-round-trip requests):
//! the official Python SDK's `Client` (mode "auto") negotiates 2026-07-28,
//! gets the approval form as an `input_required` result, asks its
//! elicitation callback and retries the call with the answer, over stdio and
//! over stateless HTTP (no session needed). The TypeScript SDK (1.32.2)
//! speaks no 2026-07-28, so it has no test here.

use super::peers::{HttpServer, python, run_client, test_server};
use serde_json::Value;
use std::path::Path;

const SERVER_ARGS: [&str; 4] = ["--approvals", "elicit", "--approval-timeout-ms", "20000"];

fn ask(py: &Path, answer: &str, transport: &str) -> Value {
    match transport {
        "stdio" => {
            let server = test_server();
            let mut args = vec![answer, "stdio", server.to_str().unwrap()];
            args.extend(SERVER_ARGS);
            run_client(py, "mrtr_client.py", &args)
        }
        _ => {
            let server = HttpServer::start(&SERVER_ARGS);
            run_client(py, "mrtr_client.py", &[answer, "http", &server.url])
        }
    }
}

fn text(report: &Value) -> &str {
    report["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

fn check(transport: &str) {
    let Some(py) = python() else { return };
    let label = format!("python over {transport}");

    let allowed = ask(&py, "allow", transport);
    assert_eq!(
        allowed["protocol_version"], "2026-07-28",
        "{label}: {allowed}"
    );
    assert_ne!(allowed["result"]["isError"], true, "{label}: {allowed}");
    assert_eq!(
        text(&allowed),
        "Tool results: delete_order: deleted",
        "{label}: allowed, the tool ran"
    );
    let message = allowed["asked"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("The agent wants to run `delete_order`")
            && message.contains("  id: 42"),
        "{label}: {message}"
    );

    let denied = ask(&py, "deny", transport);
    assert_ne!(denied["result"]["isError"], true, "{label}: {denied}");
    assert_eq!(
        text(&denied),
        "Tool results: delete_order: The user denied the call to `delete_order`: not on a Friday",
        "{label}: denied, the tool did not run and the agent finished"
    );
}

#[test]
fn python_client_approves_over_2026_07_28_stdio() {
    check("stdio");
}

#[test]
fn python_client_approves_over_2026_07_28_stateless_http() {
    check("http");
}
