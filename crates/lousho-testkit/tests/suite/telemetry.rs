//! Spans exported over OTLP to the in-process receiver (decoded with the
//! official `opentelemetry-proto` types): names, attributes, parent/child
//! structure, and one trace across a lousho agent and a lousho-served agent
//! in another process.

use super::peers::test_server;
use lousho::McpServer;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Price, PriceTable};
use lousho::policy::{ApprovalDecision, PermissionRule};
use lousho::telemetry::TARGET;
use lousho::telemetry::otel::{OtelConfig, OtelGuard};
use lousho::tool::DefinedTool;
use lousho::{Agent, Approval, ToolContext, ToolOutput};
use lousho_testkit::otlp::{ReceivedSpan, TraceReceiver};
use serde_json::{Value, json};
use std::time::Duration;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;

const WAIT: Duration = Duration::from_secs(60);
const INTERNAL: i32 = 1;
const SERVER: i32 = 2;
const CLIENT: i32 = 3;
const ERROR: i32 = 2;

/// A receiver and this test's (thread-local) exporting subscriber.
struct Traced {
    receiver: TraceReceiver,
    guard: Option<OtelGuard>,
    _default: tracing::subscriber::DefaultGuard,
}

impl Traced {
    async fn start(service: &str) -> Self {
        let receiver = TraceReceiver::start().await;
        let (layer, guard) = OtelConfig::new()
            .endpoint(receiver.endpoint())
            .service_name(service)
            .layer()
            .unwrap();
        let filter = Targets::new().with_target(TARGET, tracing::Level::INFO);
        let subscriber = tracing_subscriber::registry().with(layer.with_filter(filter));
        let default = tracing::subscriber::set_default(subscriber);
        Self {
            receiver,
            guard: Some(guard),
            _default: default,
        }
    }

    /// Sends the ended spans and waits until `done` holds for what arrived.
    async fn spans(&mut self, done: impl Fn(&[ReceivedSpan]) -> bool) -> Vec<ReceivedSpan> {
        let guard = self.guard.take().unwrap();
        tokio::task::spawn_blocking(move || guard.shutdown().unwrap())
            .await
            .unwrap();
        self.receiver.wait_for(WAIT, done).await
    }
}

fn named<'a>(spans: &'a [ReceivedSpan], name: &str) -> Vec<&'a ReceivedSpan> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [ReceivedSpan], name: &str) -> &'a ReceivedSpan {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "one `{name}` span: {spans:#?}");
    found[0]
}

fn count(spans: &[ReceivedSpan], name: &str) -> usize {
    named(spans, name).len()
}

fn add_tool() -> DefinedTool {
    DefinedTool::from_json(
        "add",
        "adds two numbers",
        json!({"type": "object"}),
        |args: Value, _: ToolContext| async move {
            (args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)).to_string()
        },
    )
    .approval(Approval::Never)
}

#[tokio::test]
async fn a_run_with_two_tool_calls_is_one_trace_of_agent_chat_and_tool_spans() {
    let mut traced = Traced::start("lousho-test").await;
    let agent = Agent::builder()
        .name("calc")
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("add", json!({"a": 1, "b": 2}))
                .and_tool_call("add", json!({"a": 3, "b": 4}))
                .usage(100, 20),
            ScriptedTurn::text("3 and 7").usage(150, 30),
        ]))
        .tool(add_tool())
        .prices(PriceTable::empty().with("scripted", Price::new(2.0, 10.0)))
        .build()
        .unwrap();
    let reply = agent.send("add these").await.unwrap();
    assert_eq!(reply.requests.len(), 2);
    drop(agent);

    let spans = traced
        .spans(|s| count(s, "invoke_agent calc") == 1 && count(s, "execute_tool add") == 2)
        .await;
    let run = one(&spans, "invoke_agent calc");
    assert_eq!(run.kind, INTERNAL);
    assert_eq!(run.parent_span_id, "", "the run is the root here");
    assert_eq!(run.service, "lousho-test");
    assert_eq!(run.str("gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(run.str("gen_ai.agent.name"), Some("calc"));
    assert_eq!(run.str("gen_ai.provider.name"), Some("scripted"));
    assert_eq!(run.int("gen_ai.usage.input_tokens"), Some(250));
    assert_eq!(run.int("gen_ai.usage.output_tokens"), Some(50));
    assert_eq!(run.int("lousho.run.turns"), Some(2));
    assert_eq!(run.str("lousho.run.status"), Some("completed"));
    let cost = run.double("lousho.cost.usd").unwrap();
    assert!((cost - 0.001).abs() < 1e-12, "{cost}");

    let chats = named(&spans, "chat scripted");
    assert_eq!(chats.len(), 2);
    for chat in &chats {
        assert_eq!(chat.kind, CLIENT);
        assert_eq!(chat.parent_span_id, run.span_id);
        assert_eq!(chat.trace_id, run.trace_id);
        assert_eq!(chat.str("gen_ai.operation.name"), Some("chat"));
        assert_eq!(chat.str("gen_ai.request.model"), Some("scripted"));
        assert!(
            chat.str("gen_ai.input.messages").is_none(),
            "no content unless opted in"
        );
    }
    let mut usage: Vec<_> = chats
        .iter()
        .map(|c| {
            (
                c.int("gen_ai.usage.input_tokens").unwrap(),
                c.int("gen_ai.usage.output_tokens").unwrap(),
                c.strings("gen_ai.response.finish_reasons").unwrap(),
            )
        })
        .collect();
    usage.sort();
    assert_eq!(
        usage,
        [
            (100, 20, vec!["tool_calls".to_owned()]),
            (150, 30, vec!["stop".to_owned()])
        ]
    );

    let tools = named(&spans, "execute_tool add");
    let mut ids: Vec<_> = tools
        .iter()
        .map(|t| t.str("gen_ai.tool.call.id").unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 2, "each call has its id");
    for tool in &tools {
        assert_eq!(tool.kind, INTERNAL);
        assert_eq!(tool.parent_span_id, run.span_id);
        assert_eq!(tool.trace_id, run.trace_id);
        assert_eq!(tool.str("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(tool.str("gen_ai.tool.name"), Some("add"));
        assert_eq!(tool.str("lousho.tool.decision"), Some("allowed"));
        assert_ne!(tool.status_code, ERROR);
        assert!(tool.str("gen_ai.tool.call.arguments").is_none());
    }
}

#[tokio::test]
async fn a_failed_tool_is_an_error_span_and_content_is_recorded_only_when_opted_in() {
    let mut traced = Traced::start("lousho-test").await;
    let fails = DefinedTool::from_json(
        "fails",
        "always fails",
        json!({"type": "object"}),
        |_, _: ToolContext| async { ToolOutput::error("the disk is full") },
    )
    .approval(Approval::Never);
    let agent = Agent::builder()
        .name("failing")
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("fails", json!({"path": "/tmp/x"})),
            ScriptedTurn::text("it failed"),
        ]))
        .tool(fails)
        .record_content(true)
        .prompt("You are terse.")
        .build()
        .unwrap();
    let reply = agent.send("write it").await.unwrap();
    assert!(reply.tool_calls[0].output.is_error);

    let spans = traced
        .spans(|s| count(s, "invoke_agent failing") == 1)
        .await;
    let run = one(&spans, "invoke_agent failing");
    assert_ne!(
        run.status_code, ERROR,
        "a failed tool does not fail the run"
    );
    let tool = one(&spans, "execute_tool fails");
    assert_eq!(tool.parent_span_id, run.span_id);
    assert_eq!(tool.status_code, ERROR);
    assert_eq!(tool.str("error.type"), Some("tool_error"));
    assert!(tool.status_message.contains("the disk is full"), "{tool:?}");
    assert_eq!(
        tool.str("gen_ai.tool.call.arguments"),
        Some(r#"{"path":"/tmp/x"}"#)
    );
    let chats = named(&spans, "chat scripted");
    let first = chats
        .iter()
        .find(|c| c.strings("gen_ai.response.finish_reasons") == Some(vec!["tool_calls".into()]))
        .unwrap();
    let input: Value = serde_json::from_str(first.str("gen_ai.input.messages").unwrap()).unwrap();
    assert_eq!(input[0]["role"], "user");
    assert_eq!(input[0]["parts"][0]["content"], "write it");
    let output: Value = serde_json::from_str(first.str("gen_ai.output.messages").unwrap()).unwrap();
    assert_eq!(output[0]["parts"][0]["type"], "tool_call");
    assert_eq!(output[0]["parts"][0]["name"], "fails");
    assert!(
        first
            .str("gen_ai.system_instructions")
            .unwrap()
            .contains("You are terse.")
    );
}

#[tokio::test]
async fn approvals_show_as_the_tool_spans_decision() {
    let mut traced = Traced::start("lousho-test").await;
    let risky = DefinedTool::from_json(
        "risky",
        "needs approval",
        json!({"type": "object"}),
        |_, _: ToolContext| async { "done" },
    )
    .approval(Approval::Always);
    let agent = Agent::builder()
        .name("careful")
        .model(ScriptedModel::repeating([
            ScriptedTurn::tool_call("risky", json!({"ok": true}))
                .and_tool_call("risky", json!({"ok": false})),
            ScriptedTurn::text("done"),
        ]))
        .tool(risky)
        .build()
        .unwrap();
    // With a handler: one approved, one denied.
    let reply = agent
        .send("go")
        .approval_handler(|request| async move {
            if request.input["ok"] == true {
                ApprovalDecision::Approve
            } else {
                ApprovalDecision::deny("not this one")
            }
        })
        .await
        .unwrap();
    assert!(!reply.is_interrupted());
    // Without one: both wait, the run pauses.
    let paused = agent.send("go again").await.unwrap();
    assert!(paused.is_interrupted());

    let spans = traced
        .spans(|s| count(s, "invoke_agent careful") == 2 && count(s, "execute_tool risky") == 4)
        .await;
    let mut decisions: Vec<_> = named(&spans, "execute_tool risky")
        .iter()
        .map(|s| s.str("lousho.tool.decision").unwrap())
        .collect();
    decisions.sort();
    assert_eq!(decisions, ["approved", "denied", "pending", "pending"]);
    let statuses: Vec<_> = named(&spans, "invoke_agent careful")
        .iter()
        .map(|s| s.str("lousho.run.status").unwrap())
        .collect();
    assert!(statuses.contains(&"completed") && statuses.contains(&"interrupted"));
}

#[tokio::test]
async fn an_mcp_call_to_a_served_lousho_agent_is_one_trace_across_both_processes() {
    let mut traced = Traced::start("caller-process").await;
    let server = McpServer::stdio(test_server().to_string_lossy())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", traced.receiver.endpoint())
        .env("OTEL_SERVICE_NAME", "served-process")
        .env("OTEL_BSP_SCHEDULE_DELAY", "50");
    let agent = Agent::builder()
        .name("caller")
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("served__test-agent", json!({"message": "hello"})),
            ScriptedTurn::text("relayed"),
        ]))
        .mcp_server("served", server)
        .permission_rule(PermissionRule::allow("served__*"))
        .build()
        .unwrap();
    let reply = agent.send("ask the served agent").await.unwrap();
    assert_eq!(
        reply.tool_calls[0].output.to_model_text(),
        "You said: hello",
        "{reply:?}"
    );
    // The served process sends its last spans when its stdin closes.
    agent.close().await;

    let spans = traced
        .spans(|s| {
            s.iter()
                .any(|x| x.service == "served-process" && x.name.starts_with("invoke_agent"))
                && s.iter()
                    .any(|x| x.service == "served-process" && x.name == "tools/call test-agent")
                && count(s, "invoke_agent caller") == 1
        })
        .await;
    let caller = one(&spans, "invoke_agent caller");
    let tool = one(&spans, "execute_tool served__test-agent");
    assert_eq!(tool.parent_span_id, caller.span_id);
    let calls = named(&spans, "tools/call test-agent");
    let client = calls
        .iter()
        .find(|s| s.kind == CLIENT)
        .expect("client span");
    let server = calls
        .iter()
        .find(|s| s.kind == SERVER)
        .expect("server span");
    assert_eq!(client.service, "caller-process");
    assert_eq!(client.parent_span_id, tool.span_id);
    assert_eq!(client.str("mcp.method.name"), Some("tools/call"));
    assert_eq!(client.str("gen_ai.tool.name"), Some("test-agent"));
    assert!(client.str("jsonrpc.request.id").is_some());

    // The other process: its server span is the client span's child, in the same trace.
    assert_eq!(server.service, "served-process");
    assert_eq!(
        server.trace_id, caller.trace_id,
        "one trace across both processes"
    );
    assert_eq!(server.parent_span_id, client.span_id);
    assert_eq!(server.str("mcp.method.name"), Some("tools/call"));
    let served_run = spans
        .iter()
        .find(|s| s.service == "served-process" && s.name.starts_with("invoke_agent"))
        .unwrap();
    assert_eq!(served_run.parent_span_id, server.span_id);
    assert_eq!(served_run.trace_id, caller.trace_id);
    let served_chat = spans
        .iter()
        .find(|s| s.service == "served-process" && s.name.starts_with("chat "))
        .expect("the served agent's model request");
    assert_eq!(served_chat.parent_span_id, served_run.span_id);
}
