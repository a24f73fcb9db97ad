//! Agents as tools of other agents (`Agent::as_tool`): cancellation through
//! every level, approvals to the calling run's handler, usage added to the
//! calling run's reply, and the depth limit.

use lousho::model::Usage;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::policy::ApprovalDecision;
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentError, Approval, CancellationToken, ToolContext};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Long enough for a loaded 2-core machine; every wait is for an event.
const WAIT: Duration = Duration::from_secs(20);

/// A tool that reports `started:<level>`, waits for its cancellation
/// token, then reports `cancelled:<level>`.
fn waiter(level: &'static str, events: mpsc::UnboundedSender<String>) -> DefinedTool {
    DefinedTool::from_json(
        format!("wait_{level}"),
        "waits until cancelled",
        json!({"type": "object"}),
        move |_, ctx: ToolContext| {
            let events = events.clone();
            async move {
                let _ = events.send(format!("started:{level}"));
                ctx.cancel.cancelled().await;
                let _ = events.send(format!("cancelled:{level}"));
                "stopped"
            }
        },
    )
}

#[tokio::test]
async fn cancelling_the_top_run_stops_every_level_and_each_levels_tool_sees_its_token() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let bottom = Agent::builder()
        .name("bottom")
        .model(ScriptedModel::new([ScriptedTurn::tool_call(
            "wait_bottom",
            json!({}),
        )]))
        .tool(waiter("bottom", tx.clone()))
        .build()
        .unwrap();
    let middle = Agent::builder()
        .name("middle")
        .model(ScriptedModel::new([ScriptedTurn::tool_call(
            "bottom",
            json!({"message": "go down"}),
        )
        .and_tool_call("wait_middle", json!({}))]))
        .tool(bottom.as_tool("bottom", "the bottom agent"))
        .tool(waiter("middle", tx.clone()))
        .build()
        .unwrap();
    let top = Agent::builder()
        .name("top")
        .model(ScriptedModel::new([ScriptedTurn::tool_call(
            "middle",
            json!({"message": "go down"}),
        )
        .and_tool_call("wait_top", json!({}))]))
        .tool(middle.as_tool("middle", "the middle agent"))
        .tool(waiter("top", tx.clone()))
        .build()
        .unwrap();

    let token = CancellationToken::new();
    let run = tokio::spawn(top.send("go").cancel(token.clone()).into_future());
    let mut started = Vec::new();
    while started.len() < 3 {
        let event = tokio::time::timeout(WAIT, rx.recv())
            .await
            .expect("every level's tool starts")
            .unwrap();
        started.push(event);
    }
    started.sort();
    assert_eq!(started, ["started:bottom", "started:middle", "started:top"]);

    token.cancel();
    let mut cancelled = Vec::new();
    while cancelled.len() < 3 {
        let event = tokio::time::timeout(WAIT, rx.recv())
            .await
            .expect("every level's tool sees its token fire")
            .unwrap();
        cancelled.push(event);
    }
    cancelled.sort();
    assert_eq!(
        cancelled,
        ["cancelled:bottom", "cancelled:middle", "cancelled:top"]
    );
    let result = tokio::time::timeout(WAIT, run)
        .await
        .expect("the top run ends")
        .unwrap();
    assert!(matches!(result, Err(AgentError::Cancelled)), "{result:?}");
}

#[tokio::test]
async fn a_childs_approvals_go_to_the_calling_runs_handler() {
    let ran = Arc::new(Mutex::new(false));
    let ran_in_tool = ran.clone();
    let gated = DefinedTool::from_json(
        "delete",
        "deletes",
        json!({"type": "object"}),
        move |_, _: ToolContext| {
            let ran = ran_in_tool.clone();
            async move {
                *ran.lock().unwrap() = true;
                "deleted"
            }
        },
    )
    .approval(Approval::Always);
    let child = Agent::builder()
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("delete", json!({})),
            ScriptedTurn::text("child done"),
        ]))
        .tool(gated)
        .build()
        .unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let asked_in_handler = asked.clone();
    let parent = Agent::builder()
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("child", json!({"message": "delete it"})),
            ScriptedTurn::text("parent done"),
        ]))
        .tool(child.as_tool("child", "the child"))
        .approval_handler(move |request| {
            asked_in_handler
                .lock()
                .unwrap()
                .push(request.tool_name.clone());
            async { ApprovalDecision::Approve }
        })
        .build()
        .unwrap();
    let reply = parent.send("go").await.unwrap();
    assert_eq!(reply.text, "parent done");
    assert_eq!(*asked.lock().unwrap(), ["delete"]);
    assert!(*ran.lock().unwrap(), "the approved call ran");
    assert_eq!(reply.tool_calls[0].output.to_model_text(), "child done");
}

#[tokio::test]
async fn a_child_that_needs_approval_without_a_handler_fails_the_call_saying_so() {
    let gated = DefinedTool::from_json(
        "delete",
        "deletes",
        json!({"type": "object"}),
        |_, _: ToolContext| async { "deleted" },
    )
    .approval(Approval::Always);
    let child = Agent::builder()
        .model(ScriptedModel::new([ScriptedTurn::tool_call(
            "delete",
            json!({}),
        )]))
        .tool(gated)
        .build()
        .unwrap();
    let parent = Agent::builder()
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("child", json!({"message": "delete it"})),
            ScriptedTurn::text("parent done"),
        ]))
        .tool(child.as_tool("child", "the child"))
        .build()
        .unwrap();
    let reply = parent.send("go").await.unwrap();
    let output = &reply.tool_calls[0].output;
    assert!(output.is_error);
    let text = output.to_model_text();
    assert!(
        text.contains("`delete`") && text.contains("approval"),
        "{text}"
    );
}

#[tokio::test]
async fn a_childs_usage_adds_to_the_calling_runs_reply() {
    let child = Agent::builder()
        .model(ScriptedModel::new([
            ScriptedTurn::text("child done").usage(40, 4)
        ]))
        .build()
        .unwrap();
    let parent = Agent::builder()
        .model(ScriptedModel::new([
            ScriptedTurn::tool_call("child", json!({"message": "hi"})).usage(100, 10),
            ScriptedTurn::text("parent done").usage(200, 20),
        ]))
        .tool(child.as_tool("child", "the child"))
        .build()
        .unwrap();
    let reply = parent.send("go").await.unwrap();
    assert_eq!(reply.requests.len(), 3, "{:?}", reply.requests);
    assert_eq!(reply.usage, Usage::new(340, 34));
}

#[tokio::test]
async fn agents_calling_agents_stop_at_the_depth_limit_with_the_typed_error() {
    // A chain of agents each calling the next: level 0 (the top run) calls
    // level 1, … level 2 calls level 3, which the limit of 2 refuses.
    let leaf_model = ScriptedModel::new([ScriptedTurn::text("leaf")]);
    let mut agent = Agent::builder().model(leaf_model.clone()).build().unwrap();
    let mut models = Vec::new();
    for _ in 0..3 {
        let model = ScriptedModel::new([
            ScriptedTurn::tool_call("next", json!({"message": "again"})),
            ScriptedTurn::text("done"),
        ]);
        models.push(model.clone());
        agent = Agent::builder()
            .model(model)
            .tool(agent.as_tool("next", "the next level").max_depth(2))
            .build()
            .unwrap();
    }
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.text, "done");
    assert_eq!(leaf_model.played(), 0, "level 3 never ran");
    // models[0] is level 2: its call was refused, and it saw why.
    let seen = serde_json::to_string(&models[0].last_request().unwrap().messages).unwrap();
    assert!(seen.contains("deeper than 2 levels"), "{seen}");
    let top_seen = serde_json::to_string(&reply.messages).unwrap();
    assert!(!top_seen.contains("deeper than"), "{top_seen}");
}

#[tokio::test]
async fn calling_an_agent_tool_past_the_limit_gives_the_typed_error() {
    use lousho::Tool;
    use lousho::tool::ToolError;
    let agent = Agent::builder().model("test").build().unwrap();
    let tool = agent.as_tool("next", "the next level").max_depth(0);
    let error = tool
        .call(json!({"message": "hi"}), ToolContext::new("call-1"))
        .await
        .unwrap_err();
    match error {
        ToolError::Agent { tool, source } => {
            assert_eq!(tool, "next");
            assert!(
                matches!(
                    source.downcast_ref::<AgentError>(),
                    Some(AgentError::TooDeep { limit: 0 })
                ),
                "{source}"
            );
        }
        other => panic!("expected ToolError::Agent, got {other:?}"),
    }
}
