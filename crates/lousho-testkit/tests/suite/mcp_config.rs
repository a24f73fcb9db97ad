//! Server entries (de)serialise in the product's and Claude's shapes.

use lousho::Approval;
use lousho::McpServer;
use lousho::mcp::{
    ConfigError, McpTransport, StderrMode, VariableError, expand_variables, parse_mcp_servers,
    servers_from_value,
};
use std::time::Duration;

#[test]
fn claude_mcp_json_shape_and_bare_map_both_parse() {
    let claude = r#"{"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"A": "1"}},
        "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t"}}
    }}"#;
    let servers = parse_mcp_servers(claude).unwrap();
    assert_eq!(servers.len(), 2);
    let McpTransport::Stdio(files) = &servers["files"].transport else {
        panic!("stdio expected")
    };
    assert_eq!(files.command, "npx");
    assert_eq!(files.args.len(), 3);
    assert_eq!(files.env["A"], "1");
    let McpTransport::Http(docs) = &servers["docs"].transport else {
        panic!("http expected")
    };
    assert_eq!(docs.headers["Authorization"], "Bearer t");

    let bare = r#"{"files": {"command": "npx"}}"#;
    assert_eq!(parse_mcp_servers(bare).unwrap()["files"].kind(), "stdio");
}

#[test]
fn yaml_entries_parse_with_type_inferred() {
    let yaml = r"
mcpServers:
  postgres:
    command: uvx
    args: [mcp-server-postgres]
    env: { DATABASE_URL: postgres://x }
    approval: never
    tools: { deny: [exec] }
    callTimeoutMs: 5000
  github:
    url: https://mcp.github.com
    startupTimeoutMs: 1000
    maxServerRequests: 8
";
    let value: serde_json::Value = serde_yaml_ng::from_str(yaml).unwrap();
    let servers = servers_from_value(value).unwrap();
    let pg = &servers["postgres"];
    assert_eq!(pg.kind(), "stdio");
    assert!(matches!(pg.approval, Approval::Never));
    assert!(!pg.tools.allows("exec") && pg.tools.allows("query"));
    assert_eq!(pg.call_timeout, Duration::from_secs(5));
    assert_eq!(
        pg.startup_timeout,
        Duration::from_secs(30),
        "default startup timeout"
    );
    let gh = &servers["github"];
    assert_eq!(gh.kind(), "http");
    assert_eq!(gh.startup_timeout, Duration::from_secs(1));
    assert_eq!(gh.max_server_requests, 8);
    assert_eq!(pg.max_server_requests, 64, "default server request limit");
    let zero =
        parse_mcp_servers(r#"{"mcpServers": {"x": {"url": "http://h", "maxServerRequests": 0}}}"#)
            .unwrap_err()
            .to_string();
    assert!(zero.contains("maxServerRequests"), "{zero}");
    assert_eq!(
        gh.call_timeout,
        Duration::from_secs(60),
        "default call timeout"
    );
    // Direct YAML → McpServer works too.
    let one: McpServer = serde_yaml_ng::from_str("command: node\nstderr: capture\n").unwrap();
    let McpTransport::Stdio(s) = &one.transport else {
        panic!()
    };
    assert!(matches!(s.stderr, StderrMode::Capture(_)));
}

#[test]
fn unknown_fields_are_errors_naming_the_field() {
    let err = parse_mcp_servers(r#"{"mcpServers": {"files": {"comand": "npx"}}}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("comand"), "{err}");
    assert!(err.contains("mcpServers.files"), "{err}");
    let err = parse_mcp_servers(r#"{"mcpServers": {}, "extra": 1}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("extra"), "{err}");
    let err = McpServer::from_json_str(r#"{"url": "http://x", "tools": {"alow": ["a"]}}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("alow"), "{err}");
}

#[test]
fn mixed_or_missing_transport_fields_are_clear_errors() {
    for (json, needle) in [
        (r#"{"command": "a", "url": "http://x"}"#, "not both"),
        (r#"{"args": ["x"]}"#, "missing field `command`"),
        (
            r#"{"type": "http", "url": "http://x", "env": {"A": "1"}}"#,
            "`env` is for stdio",
        ),
        (
            r#"{"type": "stdio", "command": "x", "headers": {"A": "1"}}"#,
            "`headers` is for http",
        ),
        (r#"{"type": "sse", "url": "http://x"}"#, "not supported"),
        (r#"{"command": "x", "approval": "sometimes"}"#, "sometimes"),
    ] {
        let err = McpServer::from_json_str(json).unwrap_err().to_string();
        assert!(err.contains(needle), "{json}: {err}");
    }
}

#[test]
fn approval_strings_map_to_policies() {
    for (s, want) in [
        ("annotations", "Annotations"),
        ("always", "Always"),
        ("never", "Never"),
    ] {
        let entry =
            McpServer::from_json_str(&format!(r#"{{"command": "x", "approval": "{s}"}}"#)).unwrap();
        assert_eq!(format!("{:?}", entry.approval), want);
    }
    let default = McpServer::from_json_str(r#"{"command": "x"}"#).unwrap();
    assert!(matches!(default.approval, Approval::Annotations));
}

#[test]
fn entries_round_trip_through_json() {
    let entry = McpServer::stdio("node")
        .args(["server.js"])
        .env("K", "V")
        .approval(Approval::Always)
        .deny_tools(["rm"])
        .call_timeout(Duration::from_secs(5));
    let json = serde_json::to_value(&entry).unwrap();
    assert_eq!(json["command"], "node");
    assert_eq!(json["approval"], "always");
    assert_eq!(json["callTimeoutMs"], 5000);
    let back: McpServer = serde_json::from_value(json).unwrap();
    assert_eq!(back.transport, entry.transport);
    let http =
        serde_json::to_value(McpServer::http("http://h/mcp").header("X-Tenant", "acme")).unwrap();
    assert_eq!(
        http,
        serde_json::json!({"type": "http", "url": "http://h/mcp", "headers": {"X-Tenant": "acme"}})
    );
}

#[test]
fn debug_output_hides_env_and_header_values() {
    let http = McpServer::http("http://h/mcp").header("Authorization", "Bearer SECRET-TOKEN");
    let stdio = McpServer::stdio("x").env("API_KEY", "SECRET-KEY");
    let shown = format!("{http:?} {stdio:?}");
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(
        shown.contains("Authorization") && shown.contains("API_KEY"),
        "{shown}"
    );
}

#[test]
fn parse_mcp_servers_expands_variables_from_the_environment() {
    // `cargo test` sets CARGO_MANIFEST_DIR for the test process.
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let json = r#"{"mcpServers": {"docs": {"url": "https://example.com/mcp",
        "headers": {"Authorization": "Bearer ${CARGO_MANIFEST_DIR}", "X-Lit": "$${KEEP}",
                    "X-Default": "${LOUSHO_SURELY_UNSET_VAR:-fallback}"}}}}"#;
    let servers = parse_mcp_servers(json).unwrap();
    let McpTransport::Http(docs) = &servers["docs"].transport else {
        panic!("http expected")
    };
    assert_eq!(docs.headers["Authorization"], format!("Bearer {dir}"));
    assert_eq!(docs.headers["X-Lit"], "${KEEP}");
    assert_eq!(docs.headers["X-Default"], "fallback");

    let err = parse_mcp_servers(
        r#"{"mcpServers": {"docs": {"url": "https://x/mcp", "headers": {"A": "${LOUSHO_SURELY_UNSET_VAR}"}}}}"#,
    )
    .unwrap_err();
    let ConfigError::Variable { path, reason } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(path, "mcpServers.docs.headers.A");
    assert_eq!(
        *reason,
        VariableError::Unset("LOUSHO_SURELY_UNSET_VAR".into())
    );
    assert!(err.to_string().contains("LOUSHO_SURELY_UNSET_VAR"), "{err}");

    // Variables from the caller instead of the environment.
    let vars = |name: &str| (name == "MCP_TOKEN").then(|| "t0ken".to_owned());
    let value = serde_json::json!({"docs": {"url": "https://x/mcp", "headers": {"A": "Bearer ${MCP_TOKEN}"}}});
    let servers = servers_from_value(expand_variables(value, &vars).unwrap()).unwrap();
    let McpTransport::Http(docs) = &servers["docs"].transport else {
        panic!("http expected")
    };
    assert_eq!(docs.headers["A"], "Bearer t0ken");
}
