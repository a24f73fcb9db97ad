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
    post_initialize_via(url, url, bearer)
}

/// POSTs an `initialize` to the server at `url`, with the `Host` (and path)
/// of `named`; returns the HTTP status code (0 without an answer in 10 s).
fn post_initialize_via(url: &str, named: &str, bearer: Option<&str>) -> u16 {
    use std::io::{Read, Write};
    let connect_to = url
        .trim()
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    let rest = named.trim().strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let auth = bearer.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(connect_to).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
        .split_whitespace()
        .nth(1)
        .unwrap_or("0")
        .parse()
        .unwrap()
}

#[test]
fn token_env_requires_the_bearer_token() {
    let (mut child, banner) = start(
        &["--token-env", "LOUSHO_TEST_TOKEN"],
        &[("LOUSHO_TEST_TOKEN", "s3cret")],
    );
    let url = banner_url(&banner);
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

#[test]
fn an_empty_token_env_variable_is_refused_at_start() {
    let out = lousho()
        .args(["mcp", &example("quickstart.yaml"), "--http", "--port", "0"])
        .args(["--token-env", "LOUSHO_TEST_TOKEN"])
        .env("LOUSHO_TEST_TOKEN", "")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("LOUSHO_TEST_TOKEN") && err.contains("empty"),
        "{err}"
    );
}

#[test]
fn allow_host_lets_the_server_be_reached_by_another_name() {
    let (mut child, banner) = start(&["--allow-host", "agents.example.com"], &[]);
    let url = banner_url(&banner);
    let port = url.rsplit_once(':').unwrap().1.split('/').next().unwrap();
    let named = url.replace("127.0.0.1", "agents.example.com");
    let statuses = (
        post_initialize_via(&url, &named, None),
        post_initialize_via(&url, &url.replace("127.0.0.1", "evil.example.com"), None),
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(statuses, (200, 403), "port {port}: {banner}");
}

/// With the process limited to 256 file descriptors, 400 idle sockets do not
/// stop `lousho mcp --http` from answering a normal call.
#[test]
fn hundreds_of_idle_sockets_under_a_256_fd_limit_do_not_stop_the_server() {
    let mut child = std::process::Command::new("sh")
        .args(["-c", "ulimit -n 256 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_lousho"))
        .args(["mcp", &example("quickstart.yaml"), "--http", "--port", "0"])
        .env("LOUSHO_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        if line.contains("serving `") {
            break;
        }
    }
    let url = banner_url(&seen);
    let authority = url
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let idle: Vec<std::net::TcpStream> = (0..400)
        .map(|_| std::net::TcpStream::connect(&authority).unwrap())
        .collect();
    let status = post_initialize(&url, None);
    drop(idle);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 200, "{seen}");
}

fn banner_url(banner: &str) -> String {
    banner
        .rsplit_once(" at ")
        .unwrap()
        .1
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}
