//! One broken server does not fail `call` and `run` for tools that are up:
//! its connect failure becomes a warning (#12 item 15).

use super::common::{example, run, spec_file, stderr, stdout};

/// A built-in, a healthy stdio server (`lousho mcp files.yaml`) and a server
/// whose command does not exist.
fn spec_with_a_dead_server() -> (tempfile::TempDir, String) {
    spec_file(
        "dead.yaml",
        &format!(
            "model: test\ntools: [day_name]\nmcpServers:\n  files:\n    command: ${{LOUSHO_BIN}}\n    args: [mcp, {}]\n  dead:\n    command: /nonexistent/lousho-dead-server\n",
            example("files.yaml")
        ),
    )
}

#[test]
fn call_of_a_builtin_or_a_healthy_servers_tool_ignores_a_dead_server() {
    let (_dir, spec) = spec_with_a_dead_server();
    let out = run(&["call", &spec, "day_name", r#"{"date": "2026-12-01"}"#]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(stdout(&out).contains("Tuesday"), "{}", stdout(&out));
    assert!(!se.contains("dead"), "a built-in starts no server: {se}");

    let out = run(&[
        "call",
        &spec,
        "files__read_file",
        r#"{"path": "files.yaml"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("file-reading agent"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn call_of_the_dead_servers_tool_still_exits_3() {
    let (_dir, spec) = spec_with_a_dead_server();
    let out = run(&["call", &spec, "dead__anything"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("`dead`"), "{}", stderr(&out));
}

#[test]
fn run_goes_on_while_one_server_is_up_and_fails_when_none_is() {
    let (_dir, spec) = spec_with_a_dead_server();
    let out = run(&["run", &spec, "hello"]);
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(se.contains("going on without MCP server `dead`"), "{se}");
    assert!(
        se.contains("→ files__list_dir"),
        "the healthy server's tools are used: {se}"
    );

    let (_dir, spec) = spec_file(
        "alldead.yaml",
        "model: test\ntools: [day_name]\nmcpServers:\n  dead:\n    command: /nonexistent/lousho-dead-server\n",
    );
    let out = run(&["run", &spec, "hello"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}
