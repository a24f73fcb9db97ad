//! The MCP configs users already have (Claude Desktop, VS Code, Cursor,
//! Codex; fixtures in tests/fixtures): read directly, from a spec, and
//! imported into a spec.

use super::common::{lousho, spec_file, stderr, stdout};
use serde_json::Value;
use std::path::PathBuf;

fn fixture(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

fn tools_json(file: &str) -> Value {
    let out = lousho()
        .env("API_TOKEN", "t0ken")
        .args(["tools", file, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{file}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn lousho_tools_reads_each_hosts_config_directly() {
    for file in [
        "claude_desktop/claude_desktop_config.json",
        "vscode/.vscode/mcp.json",
        "cursor/.cursor/mcp.json",
    ] {
        let v = tools_json(&fixture(file));
        assert_eq!(v["servers"]["files"]["status"], "connected", "{file}: {v}");
        let names: Vec<&str> = v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(names.contains(&"files__list_dir"), "{file}: {names:?}");
    }
}

#[test]
fn a_spec_mounts_a_host_config_by_path() {
    let (_dir, spec) = spec_file(
        "agent.yaml",
        &format!(
            "model: test\nmcpServers: {}\n",
            fixture("claude_desktop/claude_desktop_config.json")
        ),
    );
    let v = tools_json(&spec);
    assert_eq!(v["servers"]["files"]["status"], "connected", "{v}");
}

#[test]
fn an_unset_vscode_input_names_its_variable() {
    let out = lousho()
        .env_remove("API_TOKEN")
        .args(["tools", &fixture("vscode/.vscode/mcp.json")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("API_TOKEN"), "{err}");
    assert!(
        err.contains("mcp.json:10"),
        "the line of the env value: {err}"
    );
}

#[test]
fn a_referenced_files_errors_keep_their_line_numbers() {
    for (file, line, key) in [
        ("broken/.mcp.json", 9, "comand"),
        ("broken/config.toml", 7, "bearer_token"),
    ] {
        let (_dir, spec) = spec_file(
            "agent.yaml",
            &format!("model: test\nmcpServers: {}\n", fixture(file)),
        );
        let out = lousho().args(["tools", &spec]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stderr(&out));
        let err = stderr(&out);
        let name = file.rsplit('/').next().unwrap();
        assert!(err.contains(&format!("{name}:{line}")), "{file}: {err}");
        assert!(err.contains(key), "{file}: {err}");
    }
}

#[test]
fn mcp_import_translates_codex_servers() {
    let out = lousho()
        .args(["mcp", "import", &fixture("codex/config.toml")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("mcpServers:\n"), "{text}");
    let entry = |name: &str| -> Value {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("\"{name}\":")))
            .unwrap_or_else(|| panic!("{name} missing: {text}"));
        serde_json::from_str(line.split_once(": ").unwrap().1).unwrap()
    };
    let files = entry("files");
    assert_eq!(files["command"], "npx");
    assert_eq!(files["startupTimeoutMs"], 20000);
    assert_eq!(files["callTimeoutMs"], 90000);
    assert_eq!(files["tools"]["deny"][0], "write_file");
    // Codex expands nothing: a literal `${` stays literal.
    assert_eq!(files["env"]["LOG"], "quiet $${x}");
    let github = entry("github");
    assert_eq!(github["headers"]["Authorization"], "Bearer ${GITHUB_TOKEN}");
    assert!(
        !text.contains("old-server"),
        "a disabled server is left out: {text}"
    );
}

#[test]
fn mcp_import_into_adds_the_entries_to_a_spec_that_then_connects() {
    let (dir, spec) = spec_file(
        "agent.yaml",
        "# my agent\nmodel: test\nmcpServers:\n    other:\n        command: ./nothing\n\npermissions:\n  rules: []\n",
    );
    let out = lousho()
        .args([
            "mcp",
            "import",
            &fixture("cursor/.cursor/mcp.json"),
            "--into",
            &spec,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(text.starts_with("# my agent\n"), "{text}");
    assert!(
        text.contains("    \"files\": {\"command\": \"${LOUSHO_BIN}\", \"args\": [\"mcp\""),
        "{text}"
    );
    // The same name again is refused and the file left as it was.
    let again = lousho()
        .args([
            "mcp",
            "import",
            &fixture("claude_desktop/claude_desktop_config.json"),
            "--into",
            &spec,
        ])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("already has an MCP server named `files`"));
    assert_eq!(std::fs::read_to_string(&spec).unwrap(), text);
    // Drop the placeholder server; the imported one connects.
    let text = text.replace("    other:\n        command: ./nothing\n", "");
    std::fs::write(&spec, text).unwrap();
    let v = tools_json(&spec);
    assert_eq!(v["servers"]["files"]["status"], "connected", "{v}");
    drop(dir);
}
