//! `lousho mcp --http`: what the operator is told on start.

use super::common::{example, lousho};
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// Starts `lousho mcp --http` with `args`, returns stderr up to the
/// "serving … at URL" line, then stops the server.
fn start_and_read_banner(args: &[&str], env: &[(&str, &str)]) -> String {
    let (mut child, seen) = start(args, env);
    let _ = child.kill();
    let _ = child.wait();
    seen
}

/// Starts `lousho mcp --http` with `args`; returns the running child and its
/// stderr up to the "serving … at URL" line.
fn start(args: &[&str], env: &[(&str, &str)]) -> (std::process::Child, String) {
    let mut child = lousho()
        .args(["mcp", &example("quickstart.yaml"), "--http", "--port", "0"])
        .args(args)
        .envs(env.iter().copied())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("serving `") {
            break;
        }
    }
    assert!(seen.contains("over MCP at http://"), "{seen}");
    (child, seen)
}

/// POSTs an `initialize` to `url` (http://host:port/path) over a plain TCP
/// socket; returns the HTTP status code.
fn post_initialize(url: &str, bearer: Option<&str>) -> u16 {
    use std::io::{Read, Write};
    let rest = url.trim().strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let auth = bearer.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn token_env_requires_the_bearer_token() {
    let (mut child, banner) = start(
        &["--token-env", "LOUSHO_TEST_TOKEN"],
        &[("LOUSHO_TEST_TOKEN", "s3cret")],
    );
    let url = banner
        .rsplit_once(" at ")
        .unwrap()
        .1
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let statuses = (
        post_initialize(&url, None),
        post_initialize(&url, Some("wrong")),
        post_initialize(&url, Some("s3cret")),
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(statuses, (401, 401, 200), "{banner}");
}

const WARNING: &str = "non-loopback address without auth";

#[test]
fn binding_a_non_loopback_host_without_auth_warns() {
    let open = start_and_read_banner(&["--host", "0.0.0.0"], &[]);
    assert!(open.contains(WARNING), "{open}");
    let loopback = start_and_read_banner(&["--host", "127.0.0.1"], &[]);
    assert!(!loopback.contains(WARNING), "{loopback}");
    let with_auth = start_and_read_banner(
        &["--host", "0.0.0.0", "--token-env", "LOUSHO_TEST_TOKEN"],
        &[("LOUSHO_TEST_TOKEN", "s3cret")],
    );
    assert!(!with_auth.contains(WARNING), "{with_auth}");
    assert!(!with_auth.contains("s3cret"), "{with_auth}");
}
