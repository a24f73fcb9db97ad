//! `lousho mcp --http`: what the operator is told on start.

use super::common::{example, lousho};
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// Starts `lousho mcp --http` with `args`, returns stderr up to the
/// "serving … at URL" line, then stops the server.
fn start_and_read_banner(args: &[&str], env: &[(&str, &str)]) -> String {
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
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen.contains("over MCP at http://"), "{seen}");
    seen
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
