//! The stdio transport itself, over real pipes: only protocol on stdout, EOF
//! shuts down cleanly.

use super::peers::{test_server, wait_with_limit, without_ansi_colours};
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

/// A line that is not JSON at all gets a JSON-RPC parse error with
/// `"id": null` (there is no id to read), and the server keeps serving.
#[test]
fn a_garbage_line_gets_a_parse_error_and_the_server_keeps_serving() {
    let mut input = INIT.as_bytes().to_vec();
    input.extend(b"this is not json\n");
    input.extend(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}"#);
    input.push(b'\n');
    let (lines, err) = exchange(&[], &input);
    let errors: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l.get("error").is_some()).collect();
    assert_eq!(errors.len(), 1, "{lines:?}");
    assert_eq!(errors[0]["id"], serde_json::Value::Null, "{lines:?}");
    assert_eq!(errors[0]["error"]["code"], -32700, "{lines:?}");
    let answer = lines
        .iter()
        .find(|l| l["id"] == 3)
        .expect("the next call is answered");
    assert_eq!(answer["result"]["content"][0]["text"], "still here");
    assert!(err.contains("not valid JSON"), "logged: {err}");
}

/// A test server over real pipes, driven line by line.
struct Piped {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    /// Every message read so far.
    seen: Vec<serde_json::Value>,
    /// What an elicitation is accepted with.
    elicited: serde_json::Value,
}

impl Piped {
    /// Starts the server with `args` and `LOUSHO_LOG=log` (its stderr piped).
    fn start(args: &[&str], log: &str) -> Self {
        let mut child = Command::new(test_server())
            .args(args)
            .env("LOUSHO_LOG", log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            seen: Vec::new(),
            elicited: serde_json::json!({"ok": true}),
        }
    }

    fn send(&mut self, message: impl std::fmt::Display) {
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// The messages up to the first `done` accepts (elicitations accepted
    /// with `elicited` on the way).
    fn read_until(&mut self, done: impl Fn(&serde_json::Value) -> bool) -> Vec<serde_json::Value> {
        use std::io::BufRead;
        let mut read = Vec::new();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "stdout closed"
            );
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["method"] == "elicitation/create" {
                let (id, content) = (v["id"].clone(), self.elicited.clone());
                self.send(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": content}}));
            }
            self.seen.push(v.clone());
            let last = done(&v);
            read.push(v);
            if last {
                return read;
            }
        }
    }

    /// The messages up to the answer to `id`.
    fn until(&mut self, id: i64) -> Vec<serde_json::Value> {
        self.read_until(|v| v["id"] == id && v.get("method").is_none())
    }

    /// Initializes (with `capabilities`) and waits until rmcp's handshake is
    /// over: it has answered a request after `initialized`.
    fn initialize(&mut self, capabilities: serde_json::Value) {
        self.send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "0"}}}));
        self.until(1);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        self.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
        self.until(2);
    }

    /// Cancels the running call `id` (a `slow_wait`, or a run in one), waits
    /// until it stopped, then stops the server and checks that the call got
    /// no answer; the server's stderr.
    fn cancel_to_the_end(mut self, id: i64) -> String {
        self.send(format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"user stop"}}}}"#));
        self.wait_cancelled(1);
        let (seen, err) = self.finish();
        assert!(
            seen.iter().all(|l| l["id"] != id),
            "no answer to the cancelled call: {seen:?}"
        );
        err
    }

    /// Asks `cancel_status` until it reports `n` cancelled `slow_wait` calls.
    fn wait_cancelled(&mut self, n: usize) {
        let started = std::time::Instant::now();
        for id in 100.. {
            self.send(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"cancel_status","arguments":{{}}}}}}"#));
            let answer = self.until(id);
            let text = &answer.last().unwrap()["result"]["content"][0]["text"];
            if text.as_str() == Some(&format!(r#"{{"cancelled":{n}}}"#)) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the cancelled call never stopped: {text}"
            );
        }
    }

    /// Closes stdin and waits for the server to stop; every message it sent,
    /// and its stderr.
    fn finish(mut self) -> (Vec<serde_json::Value>, String) {
        drop(self.stdin);
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        self.seen
            .extend(rest.lines().map(|l| serde_json::from_str(l).unwrap()));
        wait_with_limit(&mut self.child, Duration::from_secs(10)).expect("EOF stops the server");
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (self.seen, err)
    }
}

#[test]
fn a_cancelled_call_gets_no_response() {
    let mut server = Piped::start(&[], "warn");
    server.initialize(serde_json::json!({}));
    server.send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"test-agent","arguments":{"message":"be slow"},"_meta":{"progressToken":"p8"}}}"#);
    // Cancel once the slow tool runs (its progress notification says so).
    server.read_until(|v| {
        v["method"] == "notifications/progress"
            && v["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("slow_wait"))
    });
    server.cancel_to_the_end(8);
}

/// A direct tool's call talks back in order: the same `talk_back` call, once
/// plain and once with per-request capabilities in `_meta`, gives the same
/// log messages, progress and elicitation, in the same order, then the same
/// result. Then a direct call is cancelled: no answer, and the tool was
/// stopped. rmcp's service handled every one of these calls.
#[test]
fn a_direct_calls_messages_come_in_order_and_a_cancelled_call_gets_no_answer() {
    use serde_json::{Value, json};
    let mut server = Piped::start(&["--talk-back"], "rmcp=debug");
    server.initialize(json!({"elicitation": {}}));

    let call = |id: i64, meta: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "talk_back", "arguments": {}, "_meta": meta}});
    server.send(call(10, json!({"progressToken": "p"})));
    let plain = server.until(10);
    let with_caps = json!({"progressToken": "p", "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    server.send(call(11, with_caps));
    let general = server.until(11);
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
        shape(&plain),
        shape(&general),
        "plain: {plain:?}\nwith capabilities: {general:?}"
    );
    let methods: Vec<&str> = plain
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
        plain[4]["result"]["content"][0]["text"],
        r#"logged: true, progress: true, elicited: {"ok":true}"#
    );

    // A direct call cancelled while it runs gets no answer.
    server.send(r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"slow_wait","arguments":{}}}"#);
    let err = server.cancel_to_the_end(20);
    // rmcp logs each request it handles: every call is among them.
    let err = without_ansi_colours(&err);
    for id in [10, 11, 20] {
        assert!(
            err.contains(&format!("received request id={id} ")),
            "rmcp's service did not handle call {id}: {err}"
        );
    }
}

/// A direct tool that needs approval: the approval question goes to the
/// client through rmcp's peer, and the answer decides the call.
#[test]
fn a_direct_tools_approval_is_asked_through_elicitation() {
    use serde_json::json;
    let mut server = Piped::start(&["--approvals", "elicit"], "rmcp=debug");
    server.initialize(json!({"elicitation": {}}));
    let call = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "delete_order", "arguments": {"id": "42"}}});
    let mut answers = Vec::new();
    for (id, decision) in [(10, "allow"), (11, "deny")] {
        server.elicited = json!({"decision": decision});
        server.send(call(id));
        let seen = server.until(id);
        assert_eq!(seen[0]["method"], "elicitation/create", "{seen:?}");
        answers.push(seen.last().unwrap()["result"].clone());
    }
    assert_eq!(
        answers,
        [
            json!({"content": [{"type": "text", "text": "deleted"}], "isError": false}),
            json!({"content": [{"type": "text", "text": "The user denied the call to `delete_order`."}], "isError": true}),
        ]
    );
    let (_, err) = server.finish();
    let err = without_ansi_colours(&err);
    assert!(
        err.contains("received request id=10 ") && err.contains("received request id=11 "),
        "rmcp's service handled the calls: {err}"
    );
}
