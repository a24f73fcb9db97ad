//! `serve_mcp` in-process over loopback HTTP, driven by rmcp's client and raw
//! requests: naming, close(), cancellation, limits.

use lousho::mcp::{HttpOptions, ServeError};
use lousho::{Agent, define_tool};
use lousho::{ServeOptions, serve_mcp};
use lousho_testkit::serve::{CancelProbe, fixture_agent, fixture_options};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, object};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::time::Duration;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

fn http() -> HttpOptions {
    HttpOptions::new().port(0)
}

async fn client(url: &str) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .unwrap()
}

fn post(url: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..100 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn agent_tool_is_named_after_the_sanitised_server_name() {
    let agent = Agent::builder().model("test").build().unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent.clone())
            .name("support bot v2.1")
            .http(http()),
    )
    .await
    .unwrap();
    let c = client(&server.url().unwrap()).await;
    let names: Vec<String> = c
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["support_bot_v2_1"]);
    let info = c.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "support bot v2.1");
    drop(c);
    server.close().await.unwrap();

    let server = serve_mcp(
        ServeOptions::new(agent)
            .name("x")
            .tool_name("ask")
            .http(http()),
    )
    .await
    .unwrap();
    let c = client(&server.url().unwrap()).await;
    let reply = c
        .call_tool(
            CallToolRequestParams::new("ask").with_arguments(object(json!({"message": "hi"}))),
        )
        .await
        .unwrap();
    assert_eq!(reply.is_error, Some(false));
    assert_eq!(reply.content[0].as_text().unwrap().text, "You said: hi");
    drop(c);
    server.close().await.unwrap();
}

#[tokio::test]
async fn a_direct_tool_named_like_the_agent_tool_is_refused() {
    let agent = Agent::builder().model("test").build().unwrap();
    let clash = define_tool("helper", "Clashes", |_: Value| async { "x" });
    let err = serve_mcp(
        ServeOptions::new(agent)
            .name("helper")
            .tool(clash)
            .http(http()),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ServeError::DuplicateTool(_)), "{err}");
}

#[tokio::test]
async fn a_missing_message_is_an_error_result() {
    let probe = CancelProbe::default();
    let server = serve_mcp(fixture_options(&probe).http(http()))
        .await
        .unwrap();
    let c = client(&server.url().unwrap()).await;
    let reply = c
        .call_tool(CallToolRequestParams::new("test-agent").with_arguments(object(json!({}))))
        .await
        .unwrap();
    assert_eq!(reply.is_error, Some(true));
    assert!(
        reply.content[0]
            .as_text()
            .unwrap()
            .text
            .contains("missing argument `message`")
    );
    drop(c);
    server.close().await.unwrap();
}

#[tokio::test]
async fn dropping_an_http_call_cancels_the_run() {
    let probe = CancelProbe::default();
    let server = serve_mcp(fixture_options(&probe).http(http()))
        .await
        .unwrap();
    let c = client(&server.url().unwrap()).await;
    let call = c.call_tool(
        CallToolRequestParams::new("test-agent")
            .with_arguments(object(json!({"message": "be slow"}))),
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(500), call)
            .await
            .is_err()
    );
    wait_for("the slow tool to see its token", || probe.seen() == 1).await;
    drop(c);
    server.close().await.unwrap();
}

#[tokio::test]
async fn close_cancels_in_flight_calls_and_releases_the_port() {
    let probe = CancelProbe::default();
    let server = serve_mcp(fixture_options(&probe).http(http()))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let url = server.url().unwrap();
    // Close once the slow tool runs (its progress notification says so).
    let (started, running) = tokio::sync::oneshot::channel();
    let slow = tokio::spawn(async move {
        let mut res = post(&url)
            .body(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test-agent","arguments":{"message":"be slow"},"_meta":{"progressToken":"p"}}}"#)
            .send()
            .await?;
        let mut seen = String::new();
        let mut started = Some(started);
        while let Some(chunk) = res.chunk().await? {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("calling tool slow_wait")
                && let Some(tx) = started.take()
            {
                let _ = tx.send(());
            }
        }
        Ok::<_, reqwest::Error>(())
    });
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the slow tool starts")
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), server.close())
        .await
        .expect("close() returns promptly")
        .unwrap();
    assert_eq!(probe.seen(), 1, "the in-flight run was cancelled");
    let _ = slow.await;
    std::net::TcpListener::bind(addr).expect("the port is free again");
}

#[tokio::test]
async fn http_guards_answer_with_the_right_status() {
    let probe = CancelProbe::default();
    let server =
        serve_mcp(ServeOptions::new(fixture_agent(&probe)).http(http().max_body_bytes(1024)))
            .await
            .unwrap();
    let url = server.url().unwrap();

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(4096)
    );
    assert_eq!(post(&url).body(big).send().await.unwrap().status(), 413);

    let res = post(&url)
        .header("host", "evil.example.com")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        403,
        "a foreign Host is refused (DNS rebinding)"
    );
    let res = post(&url)
        .header("origin", "https://evil.example.com")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403, "a foreign Origin is refused");
    let res = post(&url)
        .header("origin", "http://localhost:5173")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "a loopback Origin is fine");

    let res = post(&url).body(r#"[1,2]"#).send().await.unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600);
    let res = post(&url)
        .body(r#"{"id":3,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        (body["id"].clone(), body["error"]["code"].clone()),
        (json!(3), json!(-32600))
    );

    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let res = reqwest::Client::new()
            .request(method.clone(), &url)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 405, "{method}");
        assert_eq!(res.headers()["allow"], "POST");
    }
    server.close().await.unwrap();
}

#[tokio::test]
async fn bearer_auth_accepts_only_the_token() {
    let probe = CancelProbe::default();
    let server = serve_mcp(
        ServeOptions::new(fixture_agent(&probe))
            .http(http())
            .auth(lousho::mcp::Auth::bearer("t0ken")),
    )
    .await
    .unwrap();
    let url = server.url().unwrap();
    for auth in [
        None,
        Some("Bearer wrong"),
        Some("Bearer t0ke"),
        Some("t0ken"),
        Some("Bearer t0ken2"),
    ] {
        let mut req = post(&url).body(INIT);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 401, "{auth:?}");
        assert_eq!(res.headers()["www-authenticate"], "Bearer");
    }
    let res = post(&url)
        .header("authorization", "Bearer t0ken")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(!format!("{:?}", lousho::mcp::Auth::bearer("t0ken")).contains("t0ken"));
    server.close().await.unwrap();
}

#[tokio::test]
async fn a_run_that_needs_approval_is_an_error_result_naming_the_tool() {
    #[derive(serde::Deserialize, lousho::JsonSchema)]
    struct Empty {}
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ran2 = ran.clone();
    let delete_all = define_tool("delete_all", "Deletes everything", move |_: Empty| {
        ran2.store(true, std::sync::atomic::Ordering::SeqCst);
        async { "deleted" }
    })
    .needs_approval(true);
    // The test model calls every tool; delete_all needs approval and there is
    // no human over MCP, so the run pauses and the call must fail clearly.
    let agent = Agent::builder()
        .model("test")
        .tool(delete_all)
        .build()
        .unwrap();
    let server = serve_mcp(ServeOptions::new(agent).name("ops").http(http()))
        .await
        .unwrap();
    let c = client(&server.url().unwrap()).await;
    let tools = c.list_all_tools().await.unwrap();
    // Not exposed directly (no allow_approval_tools), and the agent tool is
    // not advertised read-only since it can reach a tool that needs approval.
    assert_eq!(tools.len(), 1);
    let reply = c
        .call_tool(
            CallToolRequestParams::new("ops").with_arguments(object(json!({"message": "go"}))),
        )
        .await
        .unwrap();
    assert_eq!(reply.is_error, Some(true));
    let text = serde_json::to_string(&reply.content).unwrap();
    assert!(text.contains("approval"), "{text}");
    assert!(text.contains("delete_all"), "{text}");
    assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
    drop(c);
    server.close().await.unwrap();
}

#[tokio::test]
async fn permission_rules_decide_which_direct_tools_are_exposed_and_how() {
    use lousho::policy::Permissions;
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoInput {}
    let rm = define_tool("rm", "Removes", |_: NoInput| async { "removed" }).needs_approval(true);
    let peek = define_tool("peek", "Peeks", |_: NoInput| async { "peeked" }).read_only();
    let look = define_tool("look", "Looks", |_: NoInput| async { "looked" }).read_only();
    let agent = Agent::builder()
        .model("test")
        .tool(look.clone())
        .permissions(Permissions::new().allow("rm").deny("peek").ask("look"))
        .build()
        .unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent)
            .name("ops")
            .tools((rm, peek, look))
            .http(http()),
    )
    .await
    .unwrap();
    let c = client(&server.url().unwrap()).await;
    let tools = c.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    // `rm` needs approval but a rule allows it; `peek` is read-only but denied;
    // `look` is read-only but a rule makes it ask.
    assert_eq!(names, ["ops", "rm"], "{names:?}");
    let reply = c
        .call_tool(CallToolRequestParams::new("rm").with_arguments(object(json!({}))))
        .await
        .unwrap();
    assert_eq!(reply.content[0].as_text().unwrap().text, "removed");
    // The agent can reach `look`, which asks: the agent tool is not read-only.
    let ops = tools.iter().find(|t| t.name == "ops").unwrap();
    let annotations = ops.annotations.as_ref().unwrap();
    assert_eq!(annotations.read_only_hint, Some(false));
    drop(c);
    server.close().await.unwrap();
}
