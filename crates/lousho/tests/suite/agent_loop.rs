//! The agent loop: turns, concurrency, cancellation, errors.

use futures::StreamExt;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Part, Role};
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentError, AgentEvent, CancellationToken, ToolContext};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Barrier, Notify};

fn object() -> serde_json::Value {
    json!({"type": "object"})
}

#[tokio::test]
async fn two_slow_tools_in_one_turn_run_concurrently() {
    // Each tool waits at a barrier for two: run one after the other, neither returns.
    let barrier = Arc::new(Barrier::new(2));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let make = |name: &str| {
        let (barrier, in_flight, max_in_flight) =
            (barrier.clone(), in_flight.clone(), max_in_flight.clone());
        DefinedTool::from_json(name, "slow", object(), move |_, _| {
            let (barrier, in_flight, max_in_flight) =
                (barrier.clone(), in_flight.clone(), max_in_flight.clone());
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                max_in_flight.fetch_max(now, Ordering::SeqCst);
                barrier.wait().await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                "done"
            }
        })
    };
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("slow_a", json!({})).and_tool_call("slow_b", json!({})),
        ScriptedTurn::text("both done"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .tool(make("slow_a"))
        .tool(make("slow_b"))
        .build()
        .unwrap();
    let reply = tokio::time::timeout(Duration::from_secs(10), agent.send("go"))
        .await
        .expect("tools did not overlap: the barrier never released")
        .unwrap();
    assert_eq!(reply.text, "both done");
    assert_eq!(max_in_flight.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_parallel_limit_bounds_tool_calls_in_flight() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let (i2, m2) = (in_flight.clone(), max_in_flight.clone());
    let tool = DefinedTool::from_json("work", "w", object(), move |_, _| {
        let (in_flight, max_in_flight) = (i2.clone(), m2.clone());
        async move {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            max_in_flight.fetch_max(now, Ordering::SeqCst);
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
            "ok"
        }
    });
    let mut turn = ScriptedTurn::tool_call("work", json!({}));
    for _ in 0..5 {
        turn = turn.and_tool_call("work", json!({}));
    }
    let model = ScriptedModel::new([turn, ScriptedTurn::text("done")]);
    let agent = Agent::builder()
        .model(model)
        .tool(tool)
        .max_parallel_tools(2)
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.tool_calls.len(), 6);
    assert_eq!(max_in_flight.load(Ordering::SeqCst), 2);
}

fn blocking_tool(started: Arc<Notify>, saw_cancel: Arc<AtomicBool>) -> DefinedTool {
    DefinedTool::from_json(
        "wait_forever",
        "waits",
        object(),
        move |_, ctx: ToolContext| {
            let (started, saw_cancel) = (started.clone(), saw_cancel.clone());
            async move {
                started.notify_one();
                ctx.cancel.cancelled().await;
                saw_cancel.store(true, Ordering::SeqCst);
                "cancelled"
            }
        },
    )
}

#[tokio::test]
async fn cancelling_a_run_fires_the_running_tools_token() {
    let started = Arc::new(Notify::new());
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let model = ScriptedModel::new([ScriptedTurn::tool_call("wait_forever", json!({}))]);
    let agent = Agent::builder()
        .model(model)
        .tool(blocking_tool(started.clone(), saw_cancel.clone()))
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let run = tokio::spawn({
        let agent = agent.clone();
        let token = token.clone();
        async move { agent.send("go").cancel(token).await }
    });
    started.notified().await;
    token.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(result, Err(AgentError::Cancelled)), "{result:?}");
    assert!(saw_cancel.load(Ordering::SeqCst));
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_run() {
    let started = Arc::new(Notify::new());
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let model = ScriptedModel::new([ScriptedTurn::tool_call("wait_forever", json!({}))]);
    let agent = Agent::builder()
        .model(model)
        .tool(blocking_tool(started.clone(), saw_cancel.clone()))
        .build()
        .unwrap();
    let mut stream = agent.send("go").stream();
    // Read until the tool has started, then drop the stream.
    while let Some(event) = stream.next().await {
        if matches!(event.unwrap(), AgentEvent::ToolCallStarted(_)) {
            break;
        }
    }
    started.notified().await;
    drop(stream);
    tokio::time::timeout(Duration::from_secs(5), async {
        while !saw_cancel.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the tool never saw its token fire");
}

#[tokio::test]
async fn cancelling_while_the_model_streams_stops_the_run() {
    let model = ScriptedModel::new([ScriptedTurn::hang()]);
    let agent = Agent::builder().model(model).build().unwrap();
    let token = CancellationToken::new();
    let t2 = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        t2.cancel();
    });
    let result = tokio::time::timeout(Duration::from_secs(5), agent.send("go").cancel(token))
        .await
        .unwrap();
    assert!(matches!(result, Err(AgentError::Cancelled)), "{result:?}");
}

#[tokio::test]
async fn an_unknown_tool_becomes_an_error_result_the_model_sees() {
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("no_such_tool", json!({})),
        ScriptedTurn::text("ok"),
    ]);
    let known = DefinedTool::from_json("known", "k", object(), |_, _| async { "k" });
    let agent = Agent::builder()
        .model(model.clone())
        .tool(known)
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.text, "ok");
    let request = model.last_request().unwrap();
    let result = request
        .messages
        .last()
        .unwrap()
        .tool_results_iter()
        .next()
        .unwrap()
        .clone();
    assert!(result.output.is_error);
    let text = result.output.to_model_text();
    assert!(
        text.contains("unknown tool `no_such_tool`") && text.contains("known"),
        "{text}"
    );
}

#[tokio::test]
async fn failing_and_panicking_tools_become_error_results() {
    let failing = DefinedTool::from_json("failing", "f", object(), |_, _| async {
        Err::<String, _>("disk full")
    });
    let panicking = DefinedTool::from_json("panicking", "p", object(), |_, _| async {
        if true {
            panic!("boom");
        }
        "unreachable"
    });
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("failing", json!({})).and_tool_call("panicking", json!({})),
        ScriptedTurn::text("recovered"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .tool(failing)
        .tool(panicking)
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.text, "recovered");
    let outputs: Vec<_> = reply.tool_calls.iter().map(|r| &r.output).collect();
    assert!(outputs.iter().all(|o| o.is_error));
    assert_eq!(outputs[0].to_model_text(), "disk full");
    assert!(outputs[1].to_model_text().contains("panicked: boom"));
}

#[tokio::test]
async fn exceeding_max_turns_is_a_typed_error() {
    let tool = DefinedTool::from_json("again", "a", object(), |_, _| async { "again" });
    let model = ScriptedModel::repeating([ScriptedTurn::tool_call("again", json!({}))]);
    let agent = Agent::builder()
        .model(model)
        .tool(tool)
        .max_turns(3)
        .build()
        .unwrap();
    let err = agent.send("loop").await.unwrap_err();
    assert!(
        matches!(err, AgentError::MaxTurnsExceeded { max_turns: 3 }),
        "{err}"
    );
}

#[tokio::test]
async fn the_model_is_sent_the_prompt_tools_and_results() {
    let tool = DefinedTool::from_json(
        "lookup",
        "Look things up",
        json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        |input, _| async move { format!("found {}", input["id"].as_str().unwrap_or("?")) },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("lookup", json!({"id": "42"})).usage(10, 2),
        ScriptedTurn::text("It is 42.").usage(20, 4),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .prompt("Be brief.")
        .tool(tool)
        .build()
        .unwrap();
    let reply = agent.send("find 42").await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].system.as_deref(), Some("Be brief."));
    assert_eq!(requests[0].tools.len(), 1);
    assert_eq!(requests[0].tools[0].name, "lookup");
    assert_eq!(requests[0].tools[0].description, "Look things up");
    assert_eq!(requests[0].messages.len(), 1);
    assert_eq!(requests[0].messages[0].text(), "find 42");

    let second = &requests[1].messages;
    assert_eq!(second.len(), 3);
    assert_eq!(second[1].role, Role::Assistant);
    let call = second[1].tool_calls().next().unwrap();
    assert_eq!(
        (call.name.as_str(), &call.arguments),
        ("lookup", &json!({"id": "42"}))
    );
    let Part::ToolResult(result) = &second[2].parts[0] else {
        panic!("not a tool result")
    };
    assert_eq!(result.call_id, call.id);
    assert_eq!(result.output.to_model_text(), "found 42");

    assert_eq!(reply.text, "It is 42.");
    assert_eq!(reply.usage.input_tokens, 30);
    assert_eq!(reply.usage.output_tokens, 6);
    assert_eq!(reply.messages.len(), 4);
}

#[tokio::test]
async fn stream_yields_text_tool_and_turn_events_in_order() {
    let tool = DefinedTool::from_json("t", "t", object(), |_, _| async { "r" });
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("t", json!({})),
        ScriptedTurn::text("final"),
    ]);
    let agent = Agent::builder().model(model).tool(tool).build().unwrap();
    let events: Vec<AgentEvent> = agent
        .send("go")
        .stream()
        .map(|e| e.unwrap())
        .collect()
        .await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            AgentEvent::TextDelta(_) => "text",
            AgentEvent::ToolCallStarted(_) => "started",
            AgentEvent::ToolCallFinished { .. } => "finished",
            AgentEvent::TurnFinished { .. } => "turn",
            AgentEvent::Done(_) => "done",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["started", "finished", "turn", "text", "turn", "done"]
    );
}

#[tokio::test]
async fn a_session_keeps_history_between_sends() {
    let model = ScriptedModel::new([ScriptedTurn::text("first"), ScriptedTurn::text("second")]);
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let session = agent.session();
    session.send("one").await.unwrap();
    let reply = session.send("two").await.unwrap();
    assert_eq!(reply.text, "second");
    let sent = &model.requests()[1].messages;
    let texts: Vec<String> = sent.iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["one", "first", "two"]);
    assert_eq!(session.history().len(), 4);
    // A fresh send does not see the session's history.
    let fresh = Agent::builder()
        .model(ScriptedModel::new([ScriptedTurn::text("x")]))
        .build()
        .unwrap();
    assert_eq!(fresh.send("alone").await.unwrap().messages.len(), 2);
}

#[tokio::test]
async fn ready_and_close_do_nothing_without_tool_sources() {
    let agent = Agent::builder().model("test").build().unwrap();
    agent.ready().await.unwrap();
    agent.close().await;
    agent.close().await;
    assert_eq!(
        agent.send("still works").await.unwrap().text,
        "You said: still works"
    );
}
