//! A fixture agent to serve over MCP in tests: a keyword-driven model and
//! tools with observable behaviour (a slow tool that records its
//! cancellation, a read-only lookup, a tool that needs approval).

use futures::stream;
use lousho::ServeOptions;
use lousho::model::{FinishReason, ModelStream, Role};
use lousho::model::{ModelError, ModelEvent, ModelRequest, ToolCall};
use lousho::tool::DefinedTool;
use lousho::{Agent, Model, ToolAnnotations, ToolContext, ToolOutput};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A model that reads the user's message:
/// - contains `fail` → the model errors (`the fixture model failed on purpose`);
/// - contains `slow` → calls `slow_wait` (which waits until cancelled);
/// - contains `lookup` → calls `lookup_order {"id": "42", "delay_ms": 200}`,
///   then reports its result (the delay spaces out progress notifications);
/// - contains `delete` → calls `delete_order {"id": "42"}` (needs approval),
///   then reports its result;
/// - otherwise → answers `You said: <message>`.
#[derive(Debug, Clone, Default)]
pub struct KeywordModel;

impl Model for KeywordModel {
    fn name(&self) -> &str {
        "fixture/keyword"
    }

    fn stream(&self, request: &ModelRequest) -> ModelStream {
        let last = request.messages.last();
        let events: Vec<Result<ModelEvent, ModelError>> = match last {
            Some(m) if m.role == Role::Tool => {
                let text: Vec<String> = m
                    .tool_results_iter()
                    .map(|r| format!("{}: {}", r.name, r.output.to_model_text()))
                    .collect();
                vec![
                    Ok(ModelEvent::TextDelta(format!(
                        "Tool results: {}",
                        text.join("; ")
                    ))),
                    Ok(ModelEvent::Finished(FinishReason::Stop)),
                ]
            }
            _ => {
                let said = last.map(|m| m.text()).unwrap_or_default();
                let call = |name: &str, arguments: Value| {
                    vec![
                        Ok(ModelEvent::ToolCall(ToolCall {
                            id: "call_1".into(),
                            name: name.into(),
                            arguments,
                        })),
                        Ok(ModelEvent::Finished(FinishReason::ToolCalls)),
                    ]
                };
                if said.contains("fail") {
                    vec![Err(ModelError::Scripted(
                        "the fixture model failed on purpose".into(),
                    ))]
                } else if said.contains("slow") {
                    call("slow_wait", json!({}))
                } else if said.contains("delete") {
                    call("delete_order", json!({"id": "42"}))
                } else if said.contains("lookup") {
                    call("lookup_order", json!({"id": "42", "delay_ms": 200}))
                } else {
                    vec![
                        Ok(ModelEvent::TextDelta(format!("You said: {said}"))),
                        Ok(ModelEvent::Finished(FinishReason::Stop)),
                    ]
                }
            }
        };
        Box::pin(stream::iter(events))
    }
}

/// Counts how often `slow_wait` saw its cancellation token fire.
#[derive(Debug, Clone, Default)]
pub struct CancelProbe(Arc<AtomicUsize>);

impl CancelProbe {
    /// How many cancellations were seen.
    pub fn seen(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// `lookup_order {id, delay_ms?}` → `{"id": id, "status": "shipped"}` (after
/// `delay_ms`); read-only, titled.
pub fn lookup_order() -> DefinedTool {
    DefinedTool::from_json(
        "lookup_order",
        "Look up an order",
        json!({
            "type": "object",
            "properties": {"id": {"type": "string"}, "delay_ms": {"type": "integer"}},
            "required": ["id"]
        }),
        |input: Value, _ctx: ToolContext| async move {
            let id = input
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned();
            if let Some(ms) = input.get("delay_ms").and_then(Value::as_u64) {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            ToolOutput::json(json!({"id": id, "status": "shipped"}))
        },
    )
    .annotations(ToolAnnotations::read_only_tool().title("Look up order"))
}

/// `echo {text}` → the text; no annotations at all (the fastest direct tool).
pub fn echo() -> DefinedTool {
    DefinedTool::from_json(
        "echo",
        "Echo the text back",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |input: Value, _ctx: ToolContext| async move {
            ToolOutput::text(
                input
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            )
        },
    )
}

/// `delete_order {id}`: needs approval; its own hints claim read-only (which
/// must never be advertised).
pub fn delete_order() -> DefinedTool {
    DefinedTool::from_json(
        "delete_order",
        "Delete an order",
        json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        |_input: Value, _ctx: ToolContext| async move { ToolOutput::text("deleted") },
    )
    .annotations(ToolAnnotations::new().read_only(true).idempotent(true))
    .needs_approval(true)
}

/// `slow_wait`: waits up to 30 s for its token; counts the cancellation,
/// whether it sees its token fire or its call is dropped (a served direct
/// tool's is, when the client cancels it).
pub fn slow_wait(probe: &CancelProbe) -> DefinedTool {
    /// Counts a call stopped before it finished.
    struct Unfinished(Arc<AtomicUsize>, bool);
    impl Drop for Unfinished {
        fn drop(&mut self) {
            if self.1 {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    let probe = probe.0.clone();
    DefinedTool::from_json(
        "slow_wait",
        "Wait a long time",
        json!({"type": "object", "properties": {}}),
        move |_input: Value, ctx: ToolContext| {
            let unfinished = Unfinished(probe.clone(), true);
            async move {
                // The whole guard moves into the call's future.
                let mut unfinished = unfinished;
                tokio::select! {
                    () = ctx.cancel.cancelled() => ToolOutput::error("cancelled"),
                    () = tokio::time::sleep(Duration::from_secs(30)) => {
                        unfinished.1 = false;
                        ToolOutput::text("waited")
                    }
                }
            }
        },
    )
    .read_only()
}

/// `talk_back`: everything a served tool can send its client, in order:
/// two log messages, a progress report (when the call asked for progress),
/// then an elicitation (when the client can answer one); its text says what
/// came back. (`lousho-test-server --talk-back` serves it directly.)
pub fn talk_back() -> DefinedTool {
    DefinedTool::from_json(
        "talk_back",
        "Log, report progress and ask the user",
        json!({"type": "object", "properties": {}}),
        |_input: Value, ctx: ToolContext| async move {
            let logged = [
                ctx.log(lousho::tool::LogLevel::Info, "one").await,
                ctx.log(lousho::tool::LogLevel::Warning, json!({"n": 2}))
                    .await,
            ];
            let progress = ctx.report_progress(1.0, Some(2.0), Some("half")).await;
            let elicited = if ctx.can_elicit() {
                match ctx
                    .elicit(
                        "Proceed?",
                        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                    )
                    .await
                {
                    Ok(lousho::tool::Elicitation::Accepted(content)) => {
                        Value::Object(content).to_string()
                    }
                    Ok(other) => format!("{other:?}"),
                    Err(e) => format!("error: {e}"),
                }
            } else {
                "cannot elicit".to_owned()
            };
            ToolOutput::text(format!(
                "logged: {}, progress: {}, elicited: {elicited}",
                logged.iter().all(Result::is_ok),
                progress.is_ok()
            ))
        },
    )
}

/// `sample_back` → `sampled: <text>`: asks the client's model (through
/// `ToolContext::sample`) to say hi; `cannot sample` when the client cannot be
/// asked, `error: …` when the request fails.
pub fn sample_back() -> DefinedTool {
    DefinedTool::from_json(
        "sample_back",
        "Ask the client's model to say hi",
        json!({"type": "object", "properties": {}}),
        |_input: Value, ctx: ToolContext| async move {
            if !ctx.can_sample() {
                return ToolOutput::text("cannot sample");
            }
            let request = lousho::tool::SamplingRequest::new(50)
                .system("Be brief.")
                .user("say hi");
            match ctx.sample(request).await {
                Ok(reply) => ToolOutput::text(format!("sampled: {}", reply.text)),
                Err(e) => ToolOutput::text(format!("error: {e}")),
            }
        },
    )
}

/// `cancel_status` → `{"cancelled": n}`: how many `slow_wait` calls were cancelled.
pub fn cancel_status(probe: &CancelProbe) -> DefinedTool {
    let probe = probe.0.clone();
    DefinedTool::from_json(
        "cancel_status",
        "How many slow_wait calls saw their cancellation",
        json!({"type": "object", "properties": {}}),
        move |_input: Value, _ctx: ToolContext| {
            let n = probe.load(Ordering::SeqCst);
            async move { ToolOutput::json(json!({"cancelled": n})) }
        },
    )
    .read_only()
}

/// The fixture agent (`KeywordModel` with `lookup_order` and `slow_wait`, both
/// read-only, so the agent tool is advertised read-only).
pub fn fixture_agent(probe: &CancelProbe) -> Agent {
    Agent::builder()
        .name("test-agent")
        .description("The fixture agent")
        .model(KeywordModel)
        .tool(lookup_order())
        .tool(slow_wait(probe))
        .build()
        .expect("the fixture agent builds")
}

/// The fixture agent that can also call `delete_order` (needs approval).
pub fn approvals_agent(probe: &CancelProbe) -> Agent {
    Agent::builder()
        .name("test-agent")
        .description("The fixture agent")
        .model(KeywordModel)
        .tool(lookup_order())
        .tool(slow_wait(probe))
        .tool(delete_order())
        .build()
        .expect("the fixture agent builds")
}

/// Serve options for the fixture: server `test-agent`, direct tools
/// `lookup_order`, `echo`, `cancel_status` and (only with
/// `ServeApprovals::Elicit` or `Allow`) `delete_order`.
pub fn fixture_options(probe: &CancelProbe) -> ServeOptions {
    fixture_options_for(fixture_agent(probe), probe)
}

/// [`fixture_options`] for another agent (e.g. [`approvals_agent`]).
pub fn fixture_options_for(agent: Agent, probe: &CancelProbe) -> ServeOptions {
    ServeOptions::new(agent)
        .name("test-agent")
        .description("Ask the fixture agent")
        .tools((lookup_order(), echo(), cancel_status(probe), delete_order()))
}

/// Several agents on one server (`lousho-test-server --agents`): `team`
/// calls `writer` as a tool, which calls `researcher` as a tool (agents as
/// tools, in process); each of the three is also served as its own tool.
/// Every agent uses the `test` model: it calls each tool it has once, then
/// reports the results; without tools it echoes the message.
pub fn team_options() -> ServeOptions {
    let build = |name: &str, description: &str, tools: Vec<lousho::agent::AgentTool>| {
        Agent::builder()
            .name(name)
            .description(description)
            .model("test")
            .tools(tools)
            .build()
            .expect("the team's agents build")
    };
    let researcher = build("researcher", "Finds facts", Vec::new());
    let writer = build(
        "writer",
        "Writes, asking the researcher",
        vec![researcher.as_tool("researcher", "Ask the researcher")],
    );
    let team = build(
        "team",
        "The team lead",
        vec![writer.as_tool("writer", "Ask the writer")],
    );
    ServeOptions::new(team)
        .name("team")
        .agent("writer", writer)
        .agent("researcher", researcher)
}

/// Agents on the calling client's model (`lousho-test-server --sampling`):
/// `sampler` (`model: sampling`, prompt "You look up orders.", the
/// `lookup_order` tool) and `plain` (`model: sampling`, no tools).
pub fn sampling_options() -> ServeOptions {
    let sampler = Agent::builder()
        .name("sampler")
        .description("Looks up orders with the client's model")
        .model("sampling")
        .prompt("You look up orders.")
        .tool(lookup_order())
        .build()
        .expect("the sampling agent builds");
    let plain = Agent::builder()
        .name("plain")
        .description("Answers with the client's model")
        .model("sampling")
        .build()
        .expect("the sampling agent builds");
    ServeOptions::new(sampler)
        .name("sampler")
        .agent("plain", plain)
}

/// What the chain's `wait_<level>` tools saw (`lousho-test-server --chain`):
/// `started:<level>` when each began, `cancelled:<level>` when its token fired.
#[derive(Debug, Clone, Default)]
pub struct ChainProbe(Arc<std::sync::Mutex<Vec<String>>>);

impl ChainProbe {
    fn record(&self, event: String) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event);
        }
    }

    fn events(&self, prefix: &str) -> Vec<String> {
        let events = self.0.lock().map(|e| e.clone()).unwrap_or_default();
        let mut found: Vec<String> = events
            .into_iter()
            .filter_map(|e| e.strip_prefix(prefix).map(str::to_owned))
            .collect();
        found.sort();
        found
    }
}

/// `wait_<level>`: records `started:<level>`, waits for its cancellation
/// token, records `cancelled:<level>`.
fn chain_waiter(level: &'static str, probe: &ChainProbe) -> DefinedTool {
    let probe = probe.clone();
    DefinedTool::from_json(
        format!("wait_{level}"),
        "Waits until cancelled",
        json!({"type": "object", "properties": {}}),
        move |_input: Value, ctx: ToolContext| {
            let probe = probe.clone();
            async move {
                probe.record(format!("started:{level}"));
                ctx.cancel.cancelled().await;
                probe.record(format!("cancelled:{level}"));
                "stopped"
            }
        },
    )
    .read_only()
}

/// An agent-as-tool chain (`lousho-test-server --chain`): the served agent
/// `top` calls `wait_top` and the agent `middle` as a tool, which calls
/// `wait_middle` and `bottom`, which calls `wait_bottom` — every level
/// waits until cancelled. The direct tool `chain_status` returns
/// `{"started": [levels], "cancelled": [levels]}`, so a client can cancel
/// `top` once every level runs and then see every level's token fire.
pub fn chain_options(probe: &ChainProbe) -> ServeOptions {
    let build = |name: &str, tools: Vec<lousho::agent::AgentTool>, level: &'static str| {
        Agent::builder()
            .name(name)
            .description(format!("The {level} of the chain"))
            .model("test")
            .tools(tools)
            .tool(chain_waiter(level, probe))
            .build()
            .expect("the chain's agents build")
    };
    let bottom = build("bottom", Vec::new(), "bottom");
    let middle = build(
        "middle",
        vec![bottom.as_tool("bottom", "The bottom agent")],
        "middle",
    );
    let top = build(
        "top",
        vec![middle.as_tool("middle", "The middle agent")],
        "top",
    );
    let status = probe.clone();
    let chain_status = DefinedTool::from_json(
        "chain_status",
        "Which levels of the chain started and which saw their cancellation",
        json!({"type": "object", "properties": {}}),
        move |_input: Value, _ctx: ToolContext| {
            let report = json!({
                "started": status.events("started:"),
                "cancelled": status.events("cancelled:"),
            });
            async move { ToolOutput::json(report) }
        },
    )
    .read_only();
    ServeOptions::new(top)
        .name("top")
        .description("The top of the chain")
        .tool(chain_status)
}

/// `long_steps {steps}` → `done after N steps`: reports each step as
/// progress (`step i (i/N)`, 100 ms apart); served as a task to clients
/// with the tasks extension ([`DefinedTool::serve_as_task`]).
pub fn long_steps() -> DefinedTool {
    DefinedTool::from_json(
        "long_steps",
        "Work through some steps",
        json!({"type": "object", "properties": {"steps": {"type": "integer"}}}),
        |input: Value, ctx: ToolContext| async move {
            let steps = input.get("steps").and_then(Value::as_u64).unwrap_or(3);
            for i in 1..=steps {
                let message = format!("step {i}");
                #[allow(clippy::cast_precision_loss)]
                let _ = ctx
                    .report_progress(i as f64, Some(steps as f64), Some(&message))
                    .await;
                tokio::select! {
                    () = ctx.cancel.cancelled() => return ToolOutput::error("cancelled"),
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
            }
            ToolOutput::text(format!("done after {steps} steps"))
        },
    )
    .serve_as_task(true)
}

/// `add_tool`: adds the tool `added` (answers "added") to the server whose
/// catalog is put in `catalog` once it serves, so its clients hear
/// `tools/list_changed`; a second call says it was already added.
/// (`lousho-test-server --grow` serves it directly.)
pub fn add_tool(catalog: Arc<std::sync::OnceLock<lousho::mcp::ServerCatalog>>) -> DefinedTool {
    DefinedTool::from_json(
        "add_tool",
        "Adds the tool `added` to this server",
        json!({"type": "object", "properties": {}}),
        move |_input: Value, _ctx: ToolContext| {
            let catalog = catalog.clone();
            async move {
                let Some(catalog) = catalog.get() else {
                    return ToolOutput::error("the server is not serving yet");
                };
                let added = DefinedTool::from_json(
                    "added",
                    "Was added while serving",
                    json!({"type": "object", "properties": {}}),
                    |_input: Value, _ctx: ToolContext| async { ToolOutput::text("added") },
                );
                match catalog.add_tools(added).await {
                    Ok(()) => ToolOutput::text("added the tool `added`"),
                    Err(e) => ToolOutput::error(e.to_string()),
                }
            }
        },
    )
}

/// The answer schema of [`output_options`]' agent.
pub fn forecast_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "celsius": {"type": "number"}
        },
        "required": ["city", "celsius"],
        "additionalProperties": false
    })
}

/// An agent with an output schema (`lousho-test-server --output`):
/// `forecast`, whose model always answers `{"city": "Paris", "celsius":
/// 21.5}`, served with that schema as its tool's `outputSchema`.
pub fn output_options() -> ServeOptions {
    let model = lousho::model::testing::ScriptedModel::repeating([
        lousho::model::testing::ScriptedTurn::text(r#"{"city": "Paris", "celsius": 21.5}"#),
    ]);
    let agent = Agent::builder()
        .name("forecast")
        .description("Forecasts the weather")
        .model(model)
        .output_schema(lousho::model::OutputSchema::new(
            "forecast",
            forecast_schema(),
        ))
        .build()
        .expect("the forecast agent builds");
    ServeOptions::new(agent).name("forecast")
}

/// Agents with budgets (`lousho-test-server --budget`), both on the `test`
/// model: `worker` (the `echo` tool, which the model calls on its first
/// turn; a budget of one turn per call, so every call stops at it) and
/// `frugal` (no tools: one turn per call; a session budget of one turn, so
/// a connection's or MCP session's second call stops at it).
pub fn budget_options() -> ServeOptions {
    use lousho::agent::Budget;
    let worker = Agent::builder()
        .name("worker")
        .description("Works with tools")
        .model("test")
        .tool(echo())
        .budget(Budget::new().turns(1))
        .build()
        .expect("the worker builds");
    let frugal = Agent::builder()
        .name("frugal")
        .description("Answers once per session")
        .model("test")
        .session_budget(Budget::new().turns(1))
        .build()
        .expect("the frugal agent builds");
    ServeOptions::new(worker)
        .name("worker")
        .agent("frugal", frugal)
}
