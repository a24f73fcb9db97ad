//! The stdio transport itself, over real pipes: only protocol on stdout, EOF
//! shuts down cleanly.

use super::peers::{test_server, wait_with_limit};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn stdout_carries_only_protocol_and_eof_stops_the_server() {
    let mut child = Command::new(test_server())
        .env("LOUSHO_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let status =
        wait_with_limit(&mut child, Duration::from_secs(10)).expect("EOF stops the server");
    assert!(status.success(), "{status}");
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON-RPC"))
        .collect();
    assert_eq!(lines.len(), 3, "three responses, nothing else: {out}");
    assert!(lines.iter().all(|l| l["jsonrpc"] == "2.0"));
    assert_eq!(
        lines[2]["result"]["content"][0]["text"], "hi",
        "the last response is not lost on EOF"
    );
    assert!(err.contains("DEBUG"), "logs go to stderr");
}
