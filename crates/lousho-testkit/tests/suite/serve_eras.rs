//! One path for both protocol eras, served side: a 2025-11-25 client (the
//! `initialize` handshake) and a 2026-07-28 client (no handshake, protocol
//! metadata in each request's `_meta`) make the same requests, over stdio
//! and over stateless HTTP. Every request must be handled by rmcp's service
//! (its `received request` log names the id) and every `tools/call` by
//! lousho's `ServerHandler::call_tool` (its `serving a tools/call` log names
//! the id and the era), with the same answers in both eras. A second path
//! for either era — calls answered beside rmcp's service, or beside the
//! handler — fails this test.

use super::peers::{test_server, wait_with_limit, without_ansi_colours};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// What the servers log: rmcp's request handling and lousho's handler.
const LOG: &str = "rmcp::service=debug,lousho::mcp::server=debug";

/// The requests each era makes (id, method, params): a listing, a direct
/// tool's call, an agent run, an unknown tool.
fn requests() -> Vec<(i64, &'static str, Value)> {
    vec![
        (10, "tools/list", json!({})),
        (
            11,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ),
        (
            12,
            "tools/call",
            json!({"name": "test-agent", "arguments": {"message": "order 42?"}}),
        ),
        (13, "tools/call", json!({"name": "nope", "arguments": {}})),
    ]
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Era {
    Handshake,
    Modern,
}

impl Era {
    fn version(self) -> &'static str {
        match self {
            Era::Handshake => "2025-11-25",
            Era::Modern => "2026-07-28",
        }
    }

    /// `params` as this era sends them: 2026-07-28 carries the protocol
    /// version, client info and capabilities in `_meta`.
    fn params(self, mut params: Value) -> Value {
        if self == Era::Modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        params
    }
}

fn request(era: Era, id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": era.params(params)})
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The era's requests over stdio: the answers by id, and the server's stderr.
fn over_stdio(era: Era) -> (Vec<Value>, String) {
    let mut child = Command::new(test_server())
        .env("LOUSHO_LOG", LOG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    if era == Era::Handshake {
        writeln!(stdin, "{INITIALIZE}\n{INITIALIZED}").unwrap();
    }
    for (id, method, params) in requests() {
        writeln!(stdin, "{}", request(era, id, method, params)).unwrap();
    }
    drop(stdin);
    wait_with_limit(&mut child, Duration::from_secs(20)).expect("EOF stops the server");
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let answers = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["id"].as_i64().is_some_and(|id| id >= 10))
        .collect();
    (answers, stderr_of(&mut child))
}

/// The era's requests over stateless HTTP, one POST each: the answers, and
/// the server's stderr.
fn over_http(era: Era) -> (Vec<Value>, String) {
    let mut child = Command::new(test_server())
        .args(["--http", "--port", "0"])
        .env("LOUSHO_LOG", LOG)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("a listening line")
        .to_owned();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answers = rt.block_on(async {
        let client = reqwest::Client::new();
        let mut answers = Vec::new();
        for (id, method, params) in requests() {
            let mut post = client
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", era.version());
            if era == Era::Modern {
                post = post.header("mcp-method", method);
                if method == "tools/call" {
                    post = post.header("mcp-name", params["name"].as_str().unwrap());
                }
            }
            let body = request(era, id, method, params).to_string();
            let text = post.body(body).send().await.unwrap().text().await.unwrap();
            // JSON, or an event stream whose last data line is the answer.
            let answer = text
                .lines()
                .rev()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .find(|d| !d.is_empty())
                .unwrap_or(text.trim())
                .to_owned();
            answers.push(serde_json::from_str(&answer).unwrap());
        }
        answers
    });
    let _ = child.kill();
    let _ = child.wait();
    (answers, stderr_of(&mut child))
}

fn stderr_of(child: &mut Child) -> String {
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    without_ansi_colours(&err)
}

/// Checks one era on one transport; its answers, for comparing eras.
fn check(transport: &str, era: Era, (answers, err): (Vec<Value>, String)) -> Vec<Value> {
    let label = format!("{transport}, {}", era.version());
    for (id, method, _) in requests() {
        assert!(
            err.contains(&format!("received request id={id} ")),
            "{label}: rmcp's service did not handle request {id}:\n{err}"
        );
        if method == "tools/call" {
            let served = err.lines().any(|l| {
                l.contains("serving a tools/call")
                    && l.contains(&format!("id={id} "))
                    && l.contains(&format!("protocol=\"{}\"", era.version()))
            });
            assert!(
                served,
                "{label}: lousho's handler did not serve call {id}:\n{err}"
            );
        }
    }
    let mut by_id: Vec<Value> = answers;
    by_id.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(
        by_id.iter().map(|a| a["id"].as_i64()).collect::<Vec<_>>(),
        [Some(10), Some(11), Some(12), Some(13)],
        "{label}: one answer per request: {by_id:?}"
    );
    // The answers without what only the era shapes (2026-07-28 results say
    // `resultType`; its listing carries cache hints).
    by_id
        .into_iter()
        .map(|mut a| {
            if let Some(result) = a["result"].as_object_mut() {
                for key in ["resultType", "ttlMs", "cacheScope"] {
                    result.remove(key);
                }
            }
            a
        })
        .collect()
}

#[test]
fn both_eras_take_one_path_over_stdio_and_http() {
    for transport in ["stdio", "http"] {
        let run = |era| match transport {
            "stdio" => over_stdio(era),
            _ => over_http(era),
        };
        let old = check(transport, Era::Handshake, run(Era::Handshake));
        let new = check(transport, Era::Modern, run(Era::Modern));
        assert_eq!(old, new, "{transport}: the eras' answers differ");
        assert_eq!(old[1]["result"]["content"][0]["text"], "hi", "{old:?}");
        assert_eq!(old[3]["error"]["code"], -32602, "{old:?}");
        assert_ne!(old[2]["result"]["isError"], true, "{old:?}");
    }
}
