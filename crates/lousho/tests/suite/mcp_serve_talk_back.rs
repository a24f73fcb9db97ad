//! Tools that talk back: a served tool's `ToolContext` reports progress,
//! sends log messages, elicits and samples through the calling MCP client
//! (rmcp's client over loopback HTTP), and fails with a typed error when the
//! client lacks the capability, cannot answer (stateless HTTP), or there is
//! no MCP client at all.

#![allow(deprecated)] // logging and sampling: deprecated by SEP-2577, spoken by 2025-11-25

use lousho::mcp::HttpOptions;
use lousho::tool::{
    ClientError, DefinedTool, Elicitation, LogLevel, SamplingRequest, ToolContext, ToolOutput,
};
use lousho::{Agent, Model};
use lousho::{ServeOptions, serve_mcp};
use lousho_testkit::serve::KeywordModel;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData,
    Implementation, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    SamplingMessage, SetLevelRequestParams, object,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// A client that answers everything and records what it was sent.
#[derive(Clone, Default)]
struct Answering {
    caps: bool,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Answering {
    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        let caps = if self.caps {
            ClientCapabilities::builder()
                .enable_elicitation()
                .enable_sampling()
                .build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("talk-back-test", "0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            return Err(ErrorData::invalid_params("form only", None));
        };
        self.seen.lock().unwrap().push(format!("elicit: {message}"));
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"})))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _cx: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = serde_json::to_value(&params.messages).unwrap();
        self.seen
            .lock()
            .unwrap()
            .push(format!("sample: {}", asked[0]["content"]["text"]));
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("blue"),
            "client-model".to_owned(),
        ))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().push(format!(
            "progress: {} {}",
            params.progress,
            params.message.unwrap_or_default()
        ));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.seen
            .lock()
            .unwrap()
            .push(format!("log: {:?} {}", params.level, params.data));
    }
}

/// `probe`: reports progress, logs at debug and info, elicits, samples, and
/// returns what each gave.
fn probe() -> DefinedTool {
    DefinedTool::from_json(
        "probe",
        "Talks back to the client",
        json!({"type": "object", "properties": {}}),
        |_input: Value, ctx: ToolContext| async move {
            let mut out = Vec::new();
            out.push(format!(
                "progress: {:?}",
                ctx.report_progress(50.0, Some(100.0), Some("half")).await
            ));
            out.push(format!(
                "debug: {:?}",
                ctx.log(LogLevel::Debug, "quiet").await
            ));
            out.push(format!("info: {:?}", ctx.log(LogLevel::Info, "loud").await));
            out.push(
                match ctx
                    .elicit(
                        "Your name?",
                        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                    )
                    .await
                {
                    Ok(Elicitation::Accepted(m)) => format!("elicit: {}", Value::Object(m)),
                    Ok(other) => format!("elicit: {other:?}"),
                    Err(e) => format!("elicit error: {e}"),
                },
            );
            out.push(
                match ctx.sample(SamplingRequest::new(10).user("sky?")).await {
                    Ok(r) => format!("sample: {} from {}", r.text, r.model),
                    Err(e) => format!("sample error: {e}"),
                },
            );
            ToolOutput::text(out.join("\n"))
        },
    )
}

async fn call_probe(stateful: bool, caps: bool) -> (String, Vec<String>) {
    let agent = Agent::builder().model("test").build().unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent)
            .tool(probe())
            .http(HttpOptions::new().port(0).stateful(stateful)),
    )
    .await
    .unwrap();
    let handler = Answering {
        caps,
        ..Default::default()
    };
    let client = handler
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(
            server.url().unwrap(),
        ))
        .await
        .unwrap();
    if stateful {
        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
            .await
            .unwrap();
    }
    let result = client
        .call_tool(CallToolRequestParams::new("probe").with_arguments(object(json!({}))))
        .await
        .unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    drop(client);
    server.close().await.unwrap();
    (text, handler.seen())
}

#[tokio::test]
async fn a_served_tool_talks_back_over_stateful_http() {
    let (text, seen) = call_probe(true, true).await;
    assert!(text.contains("progress: Ok(())"), "{text}");
    assert!(
        seen.contains(&"progress: 50 half".to_owned()),
        "rmcp's client sends a progress token: {seen:?}"
    );
    assert!(
        text.contains("debug: Ok(())") && text.contains("info: Ok(())"),
        "{text}"
    );
    assert!(text.contains(r#"elicit: {"name":"Ada"}"#), "{text}");
    assert!(text.contains("sample: blue from client-model"), "{text}");
    assert!(seen.contains(&"elicit: Your name?".to_owned()), "{seen:?}");
    assert!(seen.contains(&r#"sample: "sky?""#.to_owned()), "{seen:?}");
    assert!(seen.contains(&r#"log: Info "loud""#.to_owned()), "{seen:?}");
    assert!(
        !seen.iter().any(|s| s.contains("quiet")),
        "below the level the client set: dropped: {seen:?}"
    );
}

#[tokio::test]
async fn a_client_without_the_capabilities_gets_typed_errors() {
    let (text, seen) = call_probe(true, false).await;
    assert!(
        text.contains("elicit error: cannot ask the user (elicitation): the MCP client did not declare the `elicitation` capability"),
        "{text}"
    );
    assert!(
        text.contains("sample error: cannot ask the client's model (sampling): the MCP client did not declare the `sampling` capability"),
        "{text}"
    );
    assert!(
        !seen
            .iter()
            .any(|s| s.starts_with("elicit") || s.starts_with("sample"))
    );
}

#[tokio::test]
async fn stateless_http_cannot_ask_the_client() {
    let (text, _) = call_probe(false, true).await;
    assert!(
        text.contains("elicit error: the MCP client could not ask the user (elicitation): the client cannot answer server requests on this connection"),
        "{text}"
    );
    assert!(text.contains("HttpOptions::stateful(true)"), "{text}");
    assert!(
        text.contains("sample error: the MCP client could not"),
        "{text}"
    );
    assert!(
        text.contains("info: Ok(())"),
        "notifications still flow: {text}"
    );
}

#[tokio::test]
async fn without_an_mcp_client_every_method_says_so() {
    let ctx = ToolContext::new("c1");
    assert!(!ctx.has_client() && !ctx.can_elicit() && !ctx.can_sample());
    let e = ctx
        .elicit("x", json!({"type": "object"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::NotUnderMcp { .. }), "{e:?}");
    assert!(e.to_string().contains("did not come from an MCP client"));
    assert!(matches!(
        ctx.sample(SamplingRequest::new(1).user("x")).await,
        Err(ClientError::NotUnderMcp { .. })
    ));
    assert!(matches!(
        ctx.log(LogLevel::Info, "x").await,
        Err(ClientError::NotUnderMcp { .. })
    ));
    assert!(matches!(
        ctx.report_progress(1.0, None, None).await,
        Err(ClientError::NotUnderMcp { .. })
    ));
}

/// A tool the served agent calls talks back too: its log reaches the
/// client that called the agent tool, and its progress joins the run's.
#[tokio::test]
async fn the_served_agents_tools_talk_back_to_the_caller() {
    let logging_lookup = DefinedTool::from_json(
        "lookup_order",
        "Look up an order",
        json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        |_input: Value, ctx: ToolContext| async move {
            ctx.log(LogLevel::Info, "looking it up").await.unwrap();
            ctx.report_progress(1.0, Some(2.0), Some("halfway"))
                .await
                .unwrap();
            ToolOutput::text("shipped")
        },
    )
    .read_only();
    let model: Arc<dyn Model> = Arc::new(KeywordModel);
    let agent = Agent::builder()
        .model(model)
        .tool(logging_lookup)
        .build()
        .unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent)
            .name("agent")
            .http(HttpOptions::new().port(0).stateful(true)),
    )
    .await
    .unwrap();
    let handler = Answering::default();
    let client = handler
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(
            server.url().unwrap(),
        ))
        .await
        .unwrap();
    let params =
        CallToolRequestParams::new("agent").with_arguments(object(json!({"message": "lookup 42"})));
    let result = client.call_tool(params).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    drop(client);
    server.close().await.unwrap();
    let seen = handler.seen();
    assert!(
        seen.contains(&r#"log: Info "looking it up""#.to_owned()),
        "{seen:?}"
    );
    let progress: Vec<&String> = seen.iter().filter(|s| s.starts_with("progress")).collect();
    assert!(
        progress.iter().any(|s| s.ends_with("halfway (1/2)")),
        "the tool's numbers go in the message: {progress:?}"
    );
}

/// POSTs `body` to a stateless server as a plain client would; the JSON-RPC
/// messages of the answer (one JSON body, or each event of a stream) and
/// whether it was a stream.
async fn post_raw(url: &str, body: Value) -> (Vec<Value>, bool) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let stream = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream");
    let text = response.text().await.unwrap();
    let messages = if stream {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_json::from_str(d.trim()).unwrap())
            .collect()
    } else {
        vec![serde_json::from_str(&text).unwrap()]
    };
    (messages, stream)
}

/// Over stateless HTTP, a call of a direct tool is answered in JSON when the
/// tool sends nothing first, and its log messages come in an event stream
/// before the result when it does; a progress token changes only the
/// progress.
#[tokio::test]
async fn stateless_calls_answer_in_json_or_stream_their_logs_first() {
    let echo = DefinedTool::from_json(
        "echo",
        "Echo",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |input: Value, _ctx: ToolContext| async move {
            ToolOutput::text(input["text"].as_str().unwrap_or_default().to_owned())
        },
    )
    .read_only();
    let agent = Agent::builder().model("test").build().unwrap();
    let server = serve_mcp(
        ServeOptions::new(agent)
            .tool(probe())
            .tool(echo)
            .http(HttpOptions::new().port(0)),
    )
    .await
    .unwrap();
    let url = server.url().unwrap();
    let call = |id: u32, name: &str, token: bool| {
        let mut params = json!({"name": name, "arguments": {"text": "hi"}});
        if token {
            params["_meta"] = json!({"progressToken": "t"});
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    // A progress token may make rmcp stream the answer.
    let (here, here_streamed) = post_raw(&url, call(1, "echo", false)).await;
    let (rmcp, _) = post_raw(&url, call(2, "echo", true)).await;
    assert!(!here_streamed, "nothing before the result: JSON");
    assert_eq!(here.len(), 1);
    assert_eq!(here[0]["id"], 1);
    assert_eq!(here[0]["result"], rmcp.last().unwrap()["result"]);
    assert_eq!(here[0]["result"]["content"][0]["text"], "hi");

    let (here, here_streamed) = post_raw(&url, call(3, "probe", false)).await;
    assert!(here_streamed, "log messages come first: an event stream");
    let logs: Vec<&Value> = here
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 2, "{here:?}");
    assert_eq!(logs[1]["params"]["data"], "loud");
    let last = here.last().unwrap();
    assert_eq!(last["id"], 3);
    let text = last["result"]["content"][0]["text"].as_str().unwrap();
    let (rmcp, _) = post_raw(&url, call(4, "probe", true)).await;
    let rmcp_text = rmcp.last().unwrap()["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    // The same, but for the progress the token asked for.
    let without_progress = |t: &str| t.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(without_progress(text), without_progress(rmcp_text));
    assert!(
        text.contains("progress: Err(ProgressNotRequested)"),
        "{text}"
    );
    assert!(text.contains("HttpOptions::stateful(true)"), "{text}");

    // An unknown tool: invalid params.
    let (unknown, _) = post_raw(&url, call(5, "nope", false)).await;
    assert_eq!(unknown[0]["error"]["code"], -32602, "{unknown:?}");
    server.close().await.unwrap();
}
