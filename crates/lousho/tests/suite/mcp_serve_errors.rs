//! What a served agent answers to malformed requests over HTTP (the JSON-RPC
//! error the protocol names, with the id when usable), and that a cancelled
//! call gets no JSON-RPC answer at all.

use lousho::mcp::HttpOptions;
use lousho::{ServeOptions, serve_mcp};
use lousho_testkit::serve::{CancelProbe, fixture_agent, fixture_options};
use serde_json::{Value, json};
use std::time::Duration;

fn post(url: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .timeout(Duration::from_secs(20))
}

/// Status, JSON-RPC id and error code of an answer.
type Answer = (u16, Value, Value);

/// Status, JSON-RPC id and error code of the answer to `body`.
async fn answer(url: &str, body: impl Into<reqwest::Body>) -> Answer {
    let res = post(url).body(body).send().await.unwrap();
    let status = res.status().as_u16();
    let text = res.text().await.unwrap();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| json!({"raw": text}));
    (status, v["id"].clone(), v["error"]["code"].clone())
}

#[tokio::test]
async fn malformed_bodies_get_400_with_the_jsonrpc_error_the_protocol_names() {
    let probe = CancelProbe::default();
    let server =
        serve_mcp(ServeOptions::new(fixture_agent(&probe)).http(HttpOptions::new().port(0)))
            .await
            .unwrap();
    let url = server.url().unwrap();
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"a":{}1{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let cases: Vec<(&str, Vec<u8>, Answer)> = vec![
        (
            "invalid UTF-8 in a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}"
                .to_vec(),
            (400, json!(1), json!(-32700)),
        ),
        (
            "a lone surrogate",
            br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\ud800"}}"#.to_vec(),
            (400, json!(2), json!(-32600)),
        ),
        (
            "an object id",
            br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.to_vec(),
            (400, Value::Null, json!(-32600)),
        ),
        (
            "a float id",
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_vec(),
            (400, Value::Null, json!(-32600)),
        ),
        (
            "a null id",
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
            (400, Value::Null, json!(-32600)),
        ),
        (
            "string params",
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":"x"}"#.to_vec(),
            (400, json!(6), json!(-32600)),
        ),
        (
            "100k nesting",
            deep.into_bytes(),
            (400, json!(9), json!(-32600)),
        ),
    ];
    let mut got = Vec::new();
    let mut want = Vec::new();
    for (what, body, expected) in cases {
        let (status, id, code) = answer(&url, body).await;
        // A lone surrogate and deep nesting are valid JSON to some parsers and
        // not to others: either JSON-RPC code is right, the id must be kept.
        let code = if matches!(what, "a lone surrogate" | "100k nesting") && code == json!(-32700) {
            json!(-32600)
        } else {
            code
        };
        got.push((what, status, id, code));
        want.push((what, expected.0, expected.1, expected.2));
    }
    assert_eq!(got, want);
    server.close().await.unwrap();
}

#[tokio::test]
async fn malformed_params_of_known_methods_are_invalid_params() {
    let probe = CancelProbe::default();
    let server = serve_mcp(fixture_options(&probe).http(HttpOptions::new().port(0)))
        .await
        .unwrap();
    let url = server.url().unwrap();
    for body in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#,
    ] {
        let (_, id, code) = answer(&url, body).await;
        assert_eq!((id, code), (json!(1), json!(-32602)), "{body}");
    }
    let (_, _, code) = answer(&url, r#"{"jsonrpc":"2.0","id":1,"method":"frobnicate"}"#).await;
    assert_eq!(code, json!(-32601), "an unknown method is still -32601");

    let res = post(&url)
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test-agent","arguments":{"message":123}}}"#)
        .send()
        .await
        .unwrap();
    let v: Value = res.json().await.unwrap();
    let text = v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(
        text.contains("must be a string") && text.contains("a number") && !text.contains("missing"),
        "{text}"
    );
    server.close().await.unwrap();
}

#[tokio::test]
async fn a_call_cancelled_by_notification_gets_no_jsonrpc_response() {
    let probe = CancelProbe::default();
    let server = serve_mcp(fixture_options(&probe).http(HttpOptions::new().port(0)))
        .await
        .unwrap();
    let url = server.url().unwrap();
    let call = tokio::spawn(
        post(&url)
            .body(r#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"test-agent","arguments":{"message":"be slow"}}}"#)
            .send(),
    );
    // The call registers once its body is read: cancel until it ends.
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"user stop"}}"#;
    let mut tries = 0;
    while !call.is_finished() {
        tries += 1;
        assert!(tries < 200, "the cancel never reached the call");
        let res = post(&url).body(cancel).send().await.unwrap();
        assert_eq!(res.status(), 202);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let res = call.await.unwrap().unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    let body = res.text().await.unwrap();
    assert!(
        !body.contains("jsonrpc"),
        "the cancelled call's stream closes without a JSON-RPC message: {body:?}"
    );
    server.close().await.unwrap();
}

#[tokio::test]
async fn a_cancelled_call_streaming_progress_ends_its_stream_without_a_response() {
    let probe = CancelProbe::default();
    let server = serve_mcp(fixture_options(&probe).http(HttpOptions::new().port(0)))
        .await
        .unwrap();
    let url = server.url().unwrap();
    let mut res = post(&url)
        .body(r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"test-agent","arguments":{"message":"be slow"},"_meta":{"progressToken":"p"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    let mut stream = String::new();
    while !stream.contains("calling tool slow_wait") {
        let chunk = res
            .chunk()
            .await
            .unwrap()
            .expect("progress before the stream ends");
        stream.push_str(&String::from_utf8_lossy(&chunk));
    }
    let cancel =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42}}"#;
    assert_eq!(post(&url).body(cancel).send().await.unwrap().status(), 202);
    while let Some(chunk) = res.chunk().await.unwrap() {
        stream.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(
        !stream.contains("\"result\"") && !stream.contains("\"error\""),
        "the stream ends without a response: {stream}"
    );
    for _ in 0..200 {
        if probe.seen() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(probe.seen(), 1, "the run was cancelled");
    server.close().await.unwrap();
}
