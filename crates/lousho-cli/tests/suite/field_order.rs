//! An MCP server's tool schema keeps the server's property order (serde_json's
//! `preserve_order`; rmcp holds schemas as `serde_json::Map`): in `lousho
//! tools --json`, and in what the model is given (the test model fills a
//! tool's arguments in its schema's order).

use super::common::{lousho, node_peer, spec_file, stderr, stdout};
use serde_json::Value;

/// The order `interop/clients/ordered_tools_server.mjs` sends.
const SERVER_ORDER: [&str; 5] = ["query", "limit", "filter", "caseSensitive", "after"];

pub(super) fn ordered_spec() -> Option<(tempfile::TempDir, String)> {
    let server = node_peer("ordered_tools_server.mjs")?;
    Some(spec_file(
        "ordered.yaml",
        &format!(
            "model: test\nmcpServers:\n  notes:\n    command: node\n    args: [{:?}]\n    startupTimeoutMs: 30000\n\
             permissions:\n  rules: [{{tool: \"notes__*\", decision: allow}}]\n",
            server.to_string_lossy()
        ),
    ))
}

#[test]
fn tools_json_keeps_the_servers_property_order() {
    let Some((_dir, spec)) = ordered_spec() else {
        return;
    };
    let out = lousho().args(["tools", &spec, "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let tool = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "notes__search")
        .unwrap();
    let schema = &tool["inputSchema"];
    let keys: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, SERVER_ORDER, "{schema}");
    let nested: Vec<&str> = schema["properties"]["filter"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(nested, ["tag", "author"], "{schema}");
    // The raw text too (not only this test's own parse).
    let text = stdout(&out);
    let at = |key: &str| text.find(&format!("\"{key}\": {{")).unwrap();
    assert!(
        at("query") < at("limit") && at("limit") < at("filter"),
        "{text}"
    );
}

#[test]
fn the_model_gets_the_schema_in_the_servers_order() {
    let Some((_dir, spec)) = ordered_spec() else {
        return;
    };
    let out = lousho()
        .args(["run", &spec, "--json", "search the notes"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let call = text
        .lines()
        .find(|l| l.contains("\"tool_call\"") && l.contains("notes__search"))
        .unwrap_or_else(|| panic!("no call of notes__search: {text}"));
    // The test model fills the arguments walking the schema it was given.
    let args_at = call.find("\"arguments\"").unwrap();
    let args = &call[args_at..];
    let positions: Vec<usize> = SERVER_ORDER
        .iter()
        .map(|k| args.find(&format!("\"{k}\":")).unwrap())
        .collect();
    assert!(positions.is_sorted(), "{call}");
    // The server received them in that order as well.
    let result = text
        .lines()
        .find(|l| l.contains("\"tool_result\"") && l.contains("notes__search"))
        .unwrap();
    let v: Value = serde_json::from_str(result).unwrap();
    let echoed = v["text"].as_str().unwrap();
    let positions: Vec<usize> = SERVER_ORDER
        .iter()
        .map(|k| echoed.find(&format!("\"{k}\":")).unwrap())
        .collect();
    assert!(positions.is_sorted(), "{echoed}");
}
