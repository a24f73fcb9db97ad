//! `model: sampling`: a served agent uses the calling client's model, asked
//! through `sampling/createMessage`. The official Python and TypeScript
//! clients answer it, over stdio and stateful HTTP: a client that declares
//! `sampling.tools` gets the agent's tools, answers with a `tool_use` of
//! `lookup_order`, gets the tool's result in the next request and answers
//! with text; a client without it serves an agent without tools, and an
//! agent with tools fails with a clear error.

use super::peers::{HttpServer, node, python, run_client, test_server};
use serde_json::Value;
use std::path::Path;

fn ask(program: &Path, script: &str, mode: &str, transport: &str) -> Value {
    match transport {
        "stdio" => {
            let server = test_server();
            run_client(
                program,
                script,
                &[mode, "stdio", server.to_str().unwrap(), "--sampling"],
            )
        }
        _ => {
            let server = HttpServer::start(&["--stateful", "--sampling"]);
            run_client(program, script, &[mode, "http", &server.url])
        }
    }
}

fn check(program: &Path, script: &str, transport: &str) {
    let label = format!("{script} over {transport}");

    let report = ask(program, script, "tools", transport);
    let sampler = &report["calls"]["sampler"];
    assert_eq!(sampler["isError"], false, "{label}: {report}");
    assert_eq!(
        sampler["text"], "client model says: {\"id\":\"42\",\"status\":\"shipped\"}",
        "{label}: the tool ran on the client model's call and its result went back: {report}"
    );
    let seen = report["seen"].as_array().unwrap();
    assert_eq!(
        seen[0]["tools"],
        serde_json::json!(["lookup_order"]),
        "{label}"
    );
    assert_eq!(seen[0]["system"], "You look up orders.", "{label}");
    assert_eq!(seen[0]["last"], "hello sampler", "{label}");
    assert_eq!(
        seen[1]["messages"], 3,
        "{label}: user, tool_use, tool_result"
    );
    assert_eq!(
        report["calls"]["plain"]["text"], "client model says: hello plain",
        "{label}: {report}"
    );

    let report = ask(program, script, "text", transport);
    let sampler = &report["calls"]["sampler"];
    assert_eq!(sampler["isError"], true, "{label}: {report}");
    let text = sampler["text"].as_str().unwrap();
    assert!(
        text.contains("cannot call tools") && text.contains("lookup_order"),
        "{label}: {text}"
    );
    assert_eq!(
        report["calls"]["plain"],
        serde_json::json!({"isError": false, "text": "client model says: hello plain"}),
        "{label}: text-only sampling serves an agent without tools"
    );
}

#[test]
fn python_client_samples_over_stdio() {
    let Some(py) = python() else { return };
    check(&py, "sampling_client.py", "stdio");
}

#[test]
fn python_client_samples_over_stateful_http() {
    let Some(py) = python() else { return };
    check(&py, "sampling_client.py", "http");
}

#[test]
fn typescript_client_samples_over_stdio() {
    let Some(node) = node() else { return };
    check(&node, "sampling_client.mjs", "stdio");
}

#[test]
fn typescript_client_samples_over_stateful_http() {
    let Some(node) = node() else { return };
    check(&node, "sampling_client.mjs", "http");
}
