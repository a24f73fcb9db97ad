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

/// Runs the stdio server with `args`, writes `input`, closes stdin; returns
/// the stdout lines (as JSON) and stderr.
fn exchange(args: &[&str], input: &[u8]) -> (Vec<serde_json::Value>, String) {
    let mut child = Command::new(test_server())
        .args(args)
        .env("LOUSHO_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    drop(stdin);
    let status =
        wait_with_limit(&mut child, Duration::from_secs(20)).expect("EOF stops the server");
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
    let lines = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON-RPC"))
        .collect();
    (lines, err)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

#[test]
fn oversized_and_invalid_utf8_lines_get_a_jsonrpc_error_with_their_id() {
    let pad = "x".repeat(8192);
    let mut input = INIT.as_bytes().to_vec();
    // Over the limit, id readable from its start.
    input.extend(format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{pad}"}}}}}}"#).as_bytes());
    input.push(b'\n');
    // Over the limit, id only at the end.
    input.extend(
        format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"pad":"{pad}"}},"id":3}}"#)
            .as_bytes(),
    );
    input.push(b'\n');
    // Invalid UTF-8 in a value, id readable.
    input.extend(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xff\xfe\"}}}\n");
    // Invalid UTF-8 before the id.
    input.extend(b"{\"\xff\":1,\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\n");
    // Valid JSON, not a JSON-RPC message (an object id).
    input.extend(b"{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}\n");
    // Still serving.
    input.extend(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}"#);
    input.push(b'\n');
    let (lines, err) = exchange(&["--max-line-bytes", "4096"], &input);

    let errors: Vec<(serde_json::Value, i64)> = lines
        .iter()
        .filter(|l| l.get("error").is_some())
        .map(|l| {
            assert!(
                l.get("id").is_some(),
                "an error answer always has an id: {l}"
            );
            (l["id"].clone(), l["error"]["code"].as_i64().unwrap())
        })
        .collect();
    use serde_json::json;
    assert_eq!(
        errors,
        [
            (json!(2), -32600),
            (json!(null), -32600),
            (json!(4), -32700),
            (json!(null), -32700),
            (json!(null), -32600),
        ],
        "{lines:?}"
    );
    let last = lines
        .iter()
        .find(|l| l["id"] == 7)
        .expect("the next call is answered");
    assert_eq!(last["result"]["content"][0]["text"], "still here");
    assert!(err.contains("over the size limit"), "logged: {err}");
    assert!(err.contains("not valid UTF-8"), "logged: {err}");
}

#[test]
fn a_cancelled_call_gets_no_response() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(test_server())
        .env("LOUSHO_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    let read_until_id = |id: i64, stdout: &mut BufReader<_>, seen: &mut Vec<serde_json::Value>| loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout closed");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        seen.push(v.clone());
        if v["id"] == id {
            return v;
        }
    };
    stdin.write_all(INIT.as_bytes()).unwrap();
    read_until_id(1, &mut stdout, &mut seen);
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"test-agent","arguments":{{"message":"be slow"}},"_meta":{{"progressToken":"p8"}}}}}}"#).unwrap();
    // Cancel once the slow tool runs (its progress notification says so).
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout closed");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        seen.push(v.clone());
        if v["method"] == "notifications/progress"
            && v["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("slow_wait"))
        {
            break;
        }
    }
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":8,"reason":"user stop"}}}}"#).unwrap();
    // Wait until the run saw its cancellation.
    let started = std::time::Instant::now();
    for n in 100.. {
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"cancel_status","arguments":{{}}}}}}"#).unwrap();
        let v = read_until_id(n, &mut stdout, &mut seen);
        if v["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("\"cancelled\":1"))
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the cancelled run never saw its token"
        );
    }
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":99,"method":"ping"}}"#).unwrap();
    read_until_id(99, &mut stdout, &mut seen);
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    for l in rest.lines() {
        seen.push(serde_json::from_str(l).unwrap());
    }
    wait_with_limit(&mut child, Duration::from_secs(10)).expect("EOF stops the server");
    assert!(
        seen.iter().all(|l| l["id"] != 8),
        "no response to the cancelled call: {seen:?}"
    );
}
