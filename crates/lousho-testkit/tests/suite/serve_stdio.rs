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
    // Answers may come in any order (the call's can overtake the listing's).
    let call = lines.iter().find(|l| l["id"] == 3);
    assert_eq!(
        call.map(|l| &l["result"]["content"][0]["text"]),
        Some(&serde_json::json!("hi")),
        "the last response is not lost on EOF: {out}"
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

/// Direct tools' calls are answered by lousho's stdio transport, not rmcp's
/// service (`stdio/direct_lane.rs`); what the client sees must not change.
/// The same `talk_back` call goes once through the lane and once through
/// rmcp (per-request capabilities in `_meta` send it there): both give the
/// same log messages, progress and elicitation, in the same order, then the
/// same result. Then a direct call is cancelled: no answer, and the tool was
/// stopped.
#[test]
fn direct_calls_answered_by_the_transport_match_rmcps_answers() {
    use serde_json::{Value, json};
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(test_server())
        .arg("--talk-back")
        .env("LOUSHO_LOG", "rmcp=debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Every message up to the answer to `id`; elicitations are accepted.
    let mut until = |id: i64, stdin: &mut std::process::ChildStdin| -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout closed");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["method"] == "elicitation/create" {
                let answer = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"action": "accept", "content": {"ok": true}}});
                writeln!(stdin, "{answer}").unwrap();
            }
            let done = v["id"] == id && v.get("method").is_none();
            seen.push(v);
            if done {
                return seen;
            }
        }
    };
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{"elicitation":{{}}}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#).unwrap();
    until(1, &mut stdin);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // rmcp's handshake is over once it has answered a request after it.
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"ping"}}"#).unwrap();
    until(2, &mut stdin);

    let call = |id: i64, meta: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "talk_back", "arguments": {}, "_meta": meta}});
    writeln!(stdin, "{}", call(10, json!({"progressToken": "p"}))).unwrap();
    let lane = until(10, &mut stdin);
    let rmcp_meta = json!({"progressToken": "p", "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    writeln!(stdin, "{}", call(11, rmcp_meta)).unwrap();
    let general = until(11, &mut stdin);
    // Ids differ (the call's and the server's elicitation's, which rmcp
    // also makes its progress token); the rest must not.
    let shape = |seen: &[Value]| -> Vec<Value> {
        seen.iter()
            .map(|v| {
                let mut v = v.clone();
                let id = v.as_object_mut().unwrap().remove("id");
                if let Some(meta) = v["params"]["_meta"].as_object_mut()
                    && meta.get("progressToken") == id.as_ref()
                {
                    meta.remove("progressToken");
                }
                v
            })
            .collect()
    };
    assert_eq!(
        shape(&lane),
        shape(&general),
        "lane: {lane:?}\nrmcp: {general:?}"
    );
    let methods: Vec<&str> = lane
        .iter()
        .map(|v| v["method"].as_str().unwrap_or("(answer)"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/message",
            "notifications/message",
            "notifications/progress",
            "elicitation/create",
            "(answer)"
        ]
    );
    assert_eq!(
        lane[4]["result"]["content"][0]["text"],
        r#"logged: true, progress: true, elicited: {"ok":true}"#
    );

    // A direct call cancelled while it runs gets no answer.
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{{"name":"slow_wait","arguments":{{}}}}}}"#).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":20,"reason":"user stop"}}}}"#).unwrap();
    let mut seen = Vec::new();
    let started = std::time::Instant::now();
    for n in 100.. {
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"cancel_status","arguments":{{}}}}}}"#).unwrap();
        let answers = until(n, &mut stdin);
        let done = answers.last().unwrap()["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("\"cancelled\":1"));
        seen.extend(answers);
        if done {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the cancelled call never stopped"
        );
    }
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    seen.extend(
        rest.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()),
    );
    wait_with_limit(&mut child, Duration::from_secs(10)).expect("EOF stops the server");
    assert!(
        seen.iter().all(|l| l["id"] != 20),
        "no answer to the cancelled call: {seen:?}"
    );
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    // rmcp logs each request it handles: the lane's calls are not among them.
    let err = without_ansi_colours(&err);
    let handled = |id: i64| err.contains(&format!("received request id={id} "));
    assert!(
        handled(11),
        "rmcp handled the call with per-request metadata"
    );
    assert!(
        !handled(10) && !handled(20),
        "the lane answered direct calls: {err}"
    );
}

/// `text` without its ANSI colour sequences (`ESC [ ... m`).
fn without_ansi_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
