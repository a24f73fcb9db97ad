//! The official Python and TypeScript MCP clients against a lousho-served
//! agent, over stdio and Streamable HTTP.

use super::peers::{HttpServer, node, python, run_client, test_server};
use serde_json::{Value, json};

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {}", report["tools"]))
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// What every client must see, whatever the transport.
fn assert_served_agent(report: &Value) {
    assert_eq!(report["server_name"], "test-agent");
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["test-agent", "cancel_status", "echo", "lookup_order"],
        "needs-approval tools stay hidden"
    );

    let agent = tool(report, "test-agent");
    assert_eq!(agent["description"], "Ask the fixture agent");
    assert_eq!(agent["inputSchema"]["required"], json!(["message"]));
    assert_eq!(
        agent["inputSchema"]["properties"]["message"]["type"],
        "string"
    );
    assert_eq!(
        agent["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false}),
        "every tool the agent reaches is read-only"
    );
    assert!(
        tool(report, "echo").get("annotations").is_none(),
        "no hints, none sent"
    );
    assert_eq!(
        tool(report, "lookup_order")["annotations"],
        json!({"title": "Look up order", "readOnlyHint": true, "destructiveHint": false})
    );

    assert_eq!(report["agent"]["isError"], false);
    assert_eq!(
        text(&report["agent"]),
        r#"Tool results: lookup_order: {"id":"42","status":"shipped"}"#
    );
    let progress = report["agent_progress"].as_array().unwrap();
    assert!(
        !progress.is_empty(),
        "progress notifications arrive while the agent runs"
    );
    assert_eq!(progress[0]["message"], "calling tool lookup_order");

    assert_eq!(report["direct"]["isError"], false);
    assert_eq!(
        report["direct"]["structuredContent"],
        json!({"id": "7", "status": "shipped"})
    );

    assert_eq!(
        report["failure"]["isError"], true,
        "an agent failure is an isError result"
    );
    assert!(
        text(&report["failure"]).contains("failed on purpose"),
        "{}",
        report["failure"]
    );

    assert_eq!(report["slow_call_finished"], false);
    assert!(
        report["cancel_seen"].as_u64().unwrap() >= 1,
        "the cancelled run's tool saw its token fire"
    );
}

fn assert_http_guards(report: &Value, with_token: bool) {
    let raw = &report["raw"];
    assert_eq!(raw["get"]["status"], 405);
    assert_eq!(raw["get"]["allow"], "POST");
    assert_eq!(raw["foreign_origin"]["status"], 403);
    if with_token {
        for case in ["no_token", "wrong_token"] {
            assert_eq!(raw[case]["status"], 401, "{case}");
            assert_eq!(raw[case]["www_authenticate"], "Bearer", "{case}");
        }
        assert_ne!(
            report["sdk_wrong_token"], "connected",
            "the SDK cannot connect with a wrong token"
        );
    }
}

#[test]
fn python_client_over_stdio_calls_the_served_agent() {
    let Some(py) = python() else { return };
    let server = test_server();
    let report = run_client(&py, "mcp_client.py", &["stdio", server.to_str().unwrap()]);
    assert_served_agent(&report);
    let messages: Vec<&str> = report["agent_progress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "calling tool lookup_order",
            "tool lookup_order finished",
            "turn 1 finished",
            r#"Tool results: lookup_order: {"id":"42","status":"shipped"}"#,
            "turn 2 finished"
        ],
        "one per tool event and turn, and the answer's text as it is written"
    );
}

#[test]
fn python_client_over_http_with_bearer_auth() {
    let Some(py) = python() else { return };
    let server = HttpServer::start(&["--token", "s3cret-token"]);
    let report = run_client(&py, "mcp_client.py", &["http", &server.url, "s3cret-token"]);
    assert_served_agent(&report);
    assert_http_guards(&report, true);
    assert_eq!(report["raw"]["delete"]["status"], 405);
    assert_eq!(report["raw"]["delete"]["allow"], "POST");
}

#[test]
fn typescript_client_over_stdio_calls_the_served_agent() {
    let Some(node) = node() else { return };
    let server = test_server();
    let report = run_client(
        &node,
        "mcp_client.mjs",
        &["stdio", server.to_str().unwrap()],
    );
    assert_served_agent(&report);
}

#[test]
fn typescript_client_over_http_without_auth() {
    let Some(node) = node() else { return };
    let server = HttpServer::start(&[]);
    let report = run_client(&node, "mcp_client.mjs", &["http", &server.url]);
    assert_served_agent(&report);
    assert_http_guards(&report, false);
    let malformed = &report["raw"]["malformed"];
    assert_eq!(malformed["status"], 400);
    let body: Value = serde_json::from_str(malformed["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        body["error"]["code"], -32700,
        "malformed JSON gets a JSON-RPC parse error"
    );
}

#[test]
fn typescript_client_over_http_with_bearer_auth() {
    let Some(node) = node() else { return };
    let server = HttpServer::start(&["--token", "s3cret-token"]);
    let report = run_client(
        &node,
        "mcp_client.mjs",
        &["http", &server.url, "s3cret-token"],
    );
    assert_served_agent(&report);
    assert_http_guards(&report, true);
}

#[test]
fn approval_tools_are_exposed_only_when_allowed_and_never_read_only() {
    let Some(py) = python() else { return };
    let server = test_server();
    let report = run_client(
        &py,
        "mcp_client.py",
        &["stdio", server.to_str().unwrap(), "--allow-approval-tools"],
    );
    let delete = tool(&report, "delete_order");
    // Its own hints claim read-only; needing approval overrides that.
    assert_eq!(
        delete["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true})
    );
}
