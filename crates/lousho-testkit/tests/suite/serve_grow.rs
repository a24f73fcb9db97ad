//! A tool added while serving (`ServerCatalog::add_tools`, through the
//! test server's `add_tool`) is announced to the official clients: the
//! Python SDK 2.3.0 hears it on a 2026-07-28 `subscriptions/listen` stream
//! (stdio, stateless HTTP), the TypeScript SDK as
//! `notifications/tools/list_changed` (stdio, stateful HTTP); both then
//! list the new tool (interop/clients/offers_client.*).

use super::peers::{HttpServer, node, python, run_client, test_server};
use serde_json::{Value, json};
use std::path::Path;

fn grow(program: &Path, script: &str, transport: &str) -> Value {
    match transport {
        "stdio" => {
            let server = test_server();
            run_client(
                program,
                script,
                &["grow", "stdio", server.to_str().unwrap(), "--grow"],
            )
        }
        "stateful" => {
            let server = HttpServer::start(&["--grow", "--stateful"]);
            run_client(program, script, &["grow", "http", &server.url])
        }
        _ => {
            let server = HttpServer::start(&["--grow"]);
            run_client(program, script, &["grow", "http", &server.url])
        }
    }
}

fn check(report: &Value, label: &str) {
    assert_eq!(
        report["called"], "added the tool `added`",
        "{label}: {report}"
    );
    let before = report["before"].as_array().unwrap();
    assert!(!before.contains(&json!("added")), "{label}: {report}");
    assert!(
        report["after"]
            .as_array()
            .unwrap()
            .contains(&json!("added")),
        "{label}: {report}"
    );
}

#[test]
fn python_hears_tools_list_changed_on_its_listen_stream() {
    let Some(py) = python() else { return };
    for transport in ["stdio", "http"] {
        let report = grow(&py, "offers_client.py", transport);
        assert_eq!(report["event"], "ToolsListChanged", "{transport}: {report}");
        check(&report, &format!("python over {transport}"));
    }
}

#[test]
fn typescript_hears_tools_list_changed() {
    let Some(node) = node() else { return };
    for transport in ["stdio", "stateful"] {
        let report = grow(&node, "offers_client.mjs", transport);
        assert_eq!(
            report["event"], "tools/list_changed",
            "{transport}: {report}"
        );
        check(&report, &format!("typescript over {transport}"));
    }
}
