//! Agent tools as tasks (`io.modelcontextprotocol/tasks`, SEP-2663) for the
//! official Python SDK 2.3.0's `Client` (protocol 2026-07-28) with the
//! extension declared: a call answers with a task, `tasks/get` shows the
//! run's steps and then its result; a second task is cancelled while its
//! tool runs, ends `cancelled`, and the tool saw the cancellation. Over
//! stdio, stateless and stateful HTTP.

use super::peers::{HttpServer, python, run_client, test_server};

const ARGS: [&str; 3] = ["test-agent", "lookup order 42", "please be slow"];

fn check(transport: &str) {
    let Some(py) = python() else { return };
    let label = format!("python over {transport}");
    let report = if transport == "stdio" {
        let server = test_server();
        let mut args = ARGS.to_vec();
        args.extend(["stdio", server.to_str().unwrap()]);
        run_client(&py, "tasks_client.py", &args)
    } else {
        let flags: &[&str] = if transport == "stateful http" {
            &["--stateful"]
        } else {
            &[]
        };
        let server = HttpServer::start(flags);
        let mut args = ARGS.to_vec();
        args.extend(["http", &server.url]);
        run_client(&py, "tasks_client.py", &args)
    };
    assert_eq!(
        report["protocol_version"], "2026-07-28",
        "{label}: {report}"
    );
    assert_eq!(report["completed"]["isError"], false, "{label}: {report}");
    assert_eq!(
        report["completed"]["text"],
        "Tool results: lookup_order: {\"id\":\"42\",\"status\":\"shipped\"}",
        "{label}: the task's result is the tool result: {report}"
    );
    assert_eq!(report["cancelled"], "cancelled", "{label}: {report}");
    assert_eq!(
        report["cancel_status"], "{\"cancelled\":1}",
        "{label}: the cancelled run's tool saw its cancellation: {report}"
    );
    let polls = report["polls"].as_array().unwrap();
    assert!(
        polls.iter().any(|p| p["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .starts_with("calling tool")),
        "{label}: the run's steps show as status messages: {report}"
    );
}

#[test]
fn python_client_runs_an_agent_tool_as_a_task_over_stdio() {
    check("stdio");
}

#[test]
fn python_client_runs_an_agent_tool_as_a_task_over_stateless_http() {
    check("http");
}

#[test]
fn python_client_runs_an_agent_tool_as_a_task_over_stateful_http() {
    check("stateful http");
}
