//! A served agent with an output schema (issue 35 §1): its tool declares
//! the schema as `outputSchema` and returns the answer as
//! `structuredContent` (its JSON as text beside it), which the official
//! Python and TypeScript clients check against the schema — over stdio and
//! HTTP, with and without served sessions (`{reply, session}` around it).

use super::peers::{node, python, run_against_test_server};
use lousho_testkit::serve::forecast_schema;
use serde_json::{Value, json};
use std::path::Path;

fn check(program: &Path, script: &str, transport: &str, sessions: bool) {
    let mut flags = vec!["--output"];
    if sessions {
        flags.push("--sessions");
    }
    let report = run_against_test_server(program, script, transport, &flags);
    let label = format!("{script} over {transport} (sessions: {sessions})");
    let schema = &report["outputSchemas"]["forecast"];
    let answer = json!({"city": "Paris", "celsius": 21.5});
    let calls = report["calls"]["forecast"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{label}: {report}");
    if sessions {
        assert_eq!(schema["properties"]["reply"], forecast_schema(), "{label}");
        assert_eq!(schema["required"], json!(["reply", "session"]), "{label}");
    } else {
        assert_eq!(*schema, forecast_schema(), "{label}");
    }
    for call in calls {
        assert_eq!(call["isError"], false, "{label}: {call}");
        let structured = &call["structured"];
        let object = if sessions {
            assert!(structured["session"].is_string(), "{label}: {call}");
            &structured["reply"]
        } else {
            structured
        };
        assert_eq!(*object, answer, "{label}: {call}");
        // The same JSON as text, for clients that read only text.
        let text: Value = serde_json::from_str(call["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, answer, "{label}: {call}");
    }
}

#[test]
fn python_client_validates_the_structured_answer_over_stdio() {
    let Some(py) = python() else { return };
    check(&py, "output_client.py", "stdio", false);
    check(&py, "output_client.py", "stdio", true);
}

#[test]
fn python_client_validates_the_structured_answer_over_http() {
    let Some(py) = python() else { return };
    check(&py, "output_client.py", "http", false);
    check(&py, "output_client.py", "http", true);
}

#[test]
fn typescript_client_validates_the_structured_answer_over_stdio() {
    let Some(node) = node() else { return };
    check(&node, "output_client.mjs", "stdio", false);
    check(&node, "output_client.mjs", "stdio", true);
}

#[test]
fn typescript_client_validates_the_structured_answer_over_http() {
    let Some(node) = node() else { return };
    check(&node, "output_client.mjs", "http", false);
    check(&node, "output_client.mjs", "http", true);
}
