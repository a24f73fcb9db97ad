use super::common::{example, run, spec_file, stderr, stdout};
use serde_json::Value;

#[test]
fn tools_json_lists_builtin_and_mcp_tools_with_decisions_and_server_status() {
    let out = run(&["tools", &example("quickstart.yaml"), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let tools = v["tools"].as_array().unwrap();
    let find = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
    let date = find("current_date");
    assert_eq!(date["server"], Value::Null);
    assert_eq!(date["decision"], "run");
    assert_eq!(date["annotations"]["readOnlyHint"], true);
    let list = find("files__list_dir");
    assert_eq!(list["server"], "files");
    assert_eq!(list["decision"], "run");
    assert_eq!(list["reason"], "annotations");
    let agent_tool = find("files__files");
    assert_eq!(agent_tool["decision"], "deny");
    assert_eq!(agent_tool["reason"], "rule:files__files");
    assert_eq!(v["servers"]["files"]["status"], "connected");
    assert_eq!(v["servers"]["files"]["error"], Value::Null);
    assert_eq!(tools.len(), 4, "{tools:?}");
}

#[test]
fn tools_json_reports_a_server_that_cannot_start() {
    let (_dir, spec) = spec_file(
        "broken.yaml",
        "model: test\ntools: [day_name]\nmcpServers:\n  gone:\n    command: ./no-such-server\n    startupTimeoutMs: 5000\n",
    );
    let out = run(&["tools", &spec, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["servers"]["gone"]["status"], "failed");
    assert!(v["servers"]["gone"]["error"].as_str().unwrap().len() > 5);
    assert_eq!(v["tools"][0]["name"], "day_name");
    assert_eq!(v["tools"][0]["origin"], "builtin");
}

#[test]
fn tools_without_json_prints_a_table() {
    let (_dir, spec) = spec_file("t.yaml", "model: test\ntools: [grep]\n");
    let out = run(&["tools", &spec]);
    assert!(out.status.success());
    let so = stdout(&out);
    assert!(
        so.lines()
            .any(|l| l.starts_with("grep") && l.contains("builtin") && l.contains("run")),
        "{so}"
    );
}

#[test]
fn a_specs_mcp_naming_reaches_the_tool_names() {
    let files = example("files.yaml");
    let (_dir, spec) = spec_file(
        "named.yaml",
        &format!(
            "model: test\nmcp:\n  naming: mcp\nmcpServers:\n  files:\n    command: ${{LOUSHO_BIN}}\n    args: [mcp, \"{files}\"]\n"
        ),
    );
    let out = run(&["tools", &spec, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"mcp__files__list_dir"), "{names:?}");
    assert!(
        names.iter().all(|n| n.starts_with("mcp__files__")),
        "{names:?}"
    );
}
