//! A served agent's budgets (issue 35 §2): the agent's `budget` applies to
//! each call, its session budget to all calls of one MCP session together
//! (a stdio connection, a stateful HTTP session; over stateless HTTP each
//! call is its own); a call that reaches either ends with an `isError`
//! result naming the limit, not a protocol error. Checked with the official
//! Python and TypeScript clients, each calling every agent tool twice.

use super::peers::{node, python, run_against_test_server};
use serde_json::Value;
use std::path::Path;

fn check(program: &Path, script: &str, transport: &str, stateful: bool) {
    let mut flags = vec!["--budget"];
    if stateful {
        flags.push("--stateful");
    }
    let report = run_against_test_server(program, script, transport, &flags);
    let session_kept = transport == "stdio" || stateful;
    let label = format!("{script} over {transport} (stateful: {stateful})");
    let calls = |tool: &str| -> Vec<(bool, String)> {
        report["calls"][tool]
            .as_array()
            .unwrap_or_else(|| panic!("{label}: no calls of {tool}: {report}"))
            .iter()
            .map(|c: &Value| {
                (
                    c["isError"] == true,
                    c["text"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    // Every call of `worker` reaches its one-turn budget.
    for (failed, text) in calls("worker") {
        assert!(failed, "{label}: {text}");
        assert!(
            text.starts_with(
                "budget exceeded: the agent stopped at the `turns` limit of the budget of one call"
            ),
            "{label}: {text}"
        );
    }
    // `frugal`'s first call fits its session budget; the second call of the
    // same session does not.
    let frugal = calls("frugal");
    assert_eq!(frugal[0], (false, "You said: call 1".to_owned()), "{label}");
    if session_kept {
        let (failed, text) = &frugal[1];
        assert!(failed, "{label}: {text}");
        assert!(
            text.starts_with("budget exceeded: the agent stopped at the `turns` limit of the budget of this MCP session's calls together"),
            "{label}: {text}"
        );
    } else {
        assert_eq!(frugal[1], (false, "You said: call 2".to_owned()), "{label}");
    }
}

#[test]
fn python_client_over_stdio_meets_the_call_and_session_budgets() {
    let Some(py) = python() else { return };
    check(&py, "output_client.py", "stdio", false);
}

#[test]
fn python_client_over_http_meets_them_per_session_when_stateful() {
    let Some(py) = python() else { return };
    check(&py, "output_client.py", "http", true);
    check(&py, "output_client.py", "http", false);
}

#[test]
fn typescript_client_over_stdio_and_http_meets_them() {
    let Some(node) = node() else { return };
    check(&node, "output_client.mjs", "stdio", false);
    check(&node, "output_client.mjs", "http", true);
}
