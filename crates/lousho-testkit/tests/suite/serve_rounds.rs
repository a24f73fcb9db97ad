//! A served agent and served tools asking a 2026-07-28 client — the
//! official Python SDK 2.3.0's `Client` as a new user runs it (mode "auto"
//! negotiates 2026-07-28) — in input-required rounds, answered by its
//! callbacks: `model: sampling` with and without tools, `ToolContext`'s
//! elicit and sample from a direct tool, and an agent run's approval; over
//! stdio, stateless HTTP and stateful HTTP.

use super::peers::{HttpServer, python, run_client, test_server};
use serde_json::{Value, json};
use std::path::Path;

const ASKING: [&str; 5] = [
    "--approvals",
    "elicit",
    "--approval-timeout-ms",
    "20000",
    "--talk-back",
];

/// The client's report for `tools` of the test server with `flags`.
fn ask(py: &Path, mode: &str, tools: &str, transport: &str, flags: &[&str]) -> Value {
    match transport {
        "stdio" => {
            let server = test_server();
            let mut args = vec![mode, tools, "stdio", server.to_str().unwrap()];
            args.extend(flags);
            run_client(py, "rounds_client.py", &args)
        }
        _ => {
            let mut flags = flags.to_vec();
            if transport == "stateful" {
                flags.push("--stateful");
            }
            let server = HttpServer::start(&flags);
            run_client(py, "rounds_client.py", &[mode, tools, "http", &server.url])
        }
    }
}

fn sampling(transport: &str) {
    let Some(py) = python() else { return };
    let label = format!("python over {transport}");

    let report = ask(&py, "tools", "sampler,plain", transport, &["--sampling"]);
    assert_eq!(
        report["protocol_version"], "2026-07-28",
        "{label}: {report}"
    );
    let calls = &report["calls"];
    assert_eq!(calls["sampler"]["isError"], false, "{label}: {report}");
    assert_eq!(
        calls["sampler"]["text"], "client model says: {\"id\":\"42\",\"status\":\"shipped\"}",
        "{label}: the tool ran on the client model's call and its result went back"
    );
    let seen = report["sampled"].as_array().unwrap();
    assert_eq!(seen[0]["tools"], json!(["lookup_order"]), "{label}");
    assert_eq!(seen[0]["system"], "You look up orders.", "{label}");
    assert_eq!(
        seen[1]["messages"], 3,
        "{label}: user, tool_use, tool_result"
    );
    assert_eq!(
        calls["plain"]["text"], "client model says: hello plain",
        "{label}"
    );

    let report = ask(&py, "text", "sampler,plain", transport, &["--sampling"]);
    let calls = &report["calls"];
    assert_eq!(calls["sampler"]["isError"], true, "{label}: {report}");
    assert!(
        calls["sampler"]["text"]
            .as_str()
            .unwrap()
            .contains("does not declare `sampling.tools`"),
        "{label}: {report}"
    );
    assert_eq!(
        calls["plain"]["text"], "client model says: hello plain",
        "{label}"
    );
}

fn questions(transport: &str) {
    let Some(py) = python() else { return };
    let label = format!("python over {transport}");
    let report = ask(
        &py,
        "text",
        "test-agent,talk_back,sample_back",
        transport,
        &ASKING,
    );
    assert_eq!(
        report["protocol_version"], "2026-07-28",
        "{label}: {report}"
    );
    let calls = &report["calls"];
    assert_eq!(
        calls["test-agent"]["text"], "Tool results: delete_order: deleted",
        "{label}: approved by the client's callback, the tool ran: {report}"
    );
    assert_eq!(
        calls["talk_back"]["text"], "logged: true, progress: false, elicited: {\"ok\":true}",
        "{label}: the direct tool's elicitation was answered: {report}"
    );
    assert_eq!(
        calls["sample_back"]["text"], "sampled: client model says: say hi",
        "{label}: the direct tool's sampling was answered: {report}"
    );
    let asked = report["asked"].as_array().unwrap();
    assert!(
        asked[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("The agent wants to run `delete_order`"),
        "{label}: {report}"
    );
    assert_eq!(asked[1]["message"], "Proceed?", "{label}");
    assert_eq!(report["sampled"][0]["system"], "Be brief.", "{label}");
}

#[test]
fn model_sampling_over_2026_07_28_stdio() {
    sampling("stdio");
}

#[test]
fn model_sampling_over_2026_07_28_stateless_http() {
    sampling("stateless");
}

#[test]
fn model_sampling_over_2026_07_28_stateful_http() {
    sampling("stateful");
}

#[test]
fn tool_questions_over_2026_07_28_stdio() {
    questions("stdio");
}

#[test]
fn tool_questions_over_2026_07_28_stateless_http() {
    questions("stateless");
}

#[test]
fn tool_questions_over_2026_07_28_stateful_http() {
    questions("stateful");
}
