//! One broken server does not fail `call` and `run` for tools that are up:
//! its connect failure becomes a warning (#12 item 15).

use super::common::{example, lousho, run, spec_file, stderr, stdout};

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

/// A port nothing listens on (bound, then closed).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn an_unreachable_http_server_is_one_line_with_its_cause_and_the_chain_only_at_v() {
    let (_dir, spec) = spec_file(
        "web.yaml",
        &format!(
            "model: test\nmcpServers:\n  web:\n    url: http://127.0.0.1:{}/mcp\n",
            closed_port()
        ),
    );
    // The user's default logs (the tests' own LOUSHO_LOG removed).
    let out = lousho()
        .env_remove("LOUSHO_LOG")
        .args(["--no-catalog", "call", &spec, "web__anything"])
        .output()
        .unwrap();
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{se}");
    assert_eq!(
        se.lines().count(),
        1 + se.lines().filter(|l| l.starts_with("connecting")).count(),
        "{se}"
    );
    let errors: Vec<&str> = se.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{se}");
    assert!(errors[0].contains("MCP server `web`"), "{se}");
    assert!(errors[0].contains("connection refused"), "{se}");
    assert!(!se.contains("caused by"), "{se}");
    assert!(!se.contains("lousho::mcp::"), "no Rust type names: {se}");

    let out = lousho()
        .env_remove("LOUSHO_LOG")
        .args(["-v", "--no-catalog", "call", &spec, "web__anything"])
        .output()
        .unwrap();
    let se = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{se}");
    assert!(se.contains("caused by"), "the chain at -v: {se}");
}
