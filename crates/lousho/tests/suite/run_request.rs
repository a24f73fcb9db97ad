//! One run request: nothing runs until it is awaited or streamed; its
//! options (max turns, timeout, approval handler) apply to that run only.

use futures::StreamExt;
use lousho::agent::RunStatus;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::policy::ApprovalDecision;
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentError, AgentEvent, ToolContext};
use lousho_testkit::tools::counting_echo;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Generous: the machine running the tests may be loaded.
const BOUND: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_request_that_is_never_awaited_or_streamed_runs_nothing() {
    let model = ScriptedModel::new([ScriptedTurn::text("never")]);
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let request = agent.send("hello").max_turns(3);
    assert!(format!("{request:?}").contains("RunRequest"));
    drop(request);
    // A later run gets the first scripted turn: the dropped one took none.
    assert_eq!(agent.send("again").await.unwrap().text, "never");
    assert_eq!(model.played(), 1);
}

#[tokio::test]
async fn max_turns_of_a_run_overrides_the_agents_limit() {
    let model = ScriptedModel::repeating([ScriptedTurn::tool_call("echo", json!({"text": "x"}))]);
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder()
        .model(model.clone())
        .tool(counting_echo("echo", calls.clone()))
        .max_turns(10)
        .build()
        .unwrap();
    let err = agent.send("loop").max_turns(2).await.unwrap_err();
    assert!(
        matches!(err, AgentError::MaxTurnsExceeded { max_turns: 2 }),
        "{err}"
    );
    assert_eq!(model.played(), 2);
    // The agent's own limit still holds for the next run.
    let err = agent.send("loop").await.unwrap_err();
    assert!(
        matches!(err, AgentError::MaxTurnsExceeded { max_turns: 10 }),
        "{err}"
    );
}

#[tokio::test]
async fn a_run_past_its_timeout_fails_with_timed_out_after_its_tool_saw_the_token() {
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let tool = DefinedTool::from_json("wait", "waits", json!({"type": "object"}), {
        let saw_cancel = saw_cancel.clone();
        move |_, ctx: ToolContext| {
            let saw_cancel = saw_cancel.clone();
            async move {
                ctx.cancel.cancelled().await;
                saw_cancel.store(true, Ordering::SeqCst);
                "stopped"
            }
        }
    });
    let model = ScriptedModel::new([ScriptedTurn::tool_call("wait", json!({}))]);
    let agent = Agent::builder().model(model).tool(tool).build().unwrap();
    let timeout = Duration::from_millis(200);
    let err = tokio::time::timeout(BOUND, agent.send("go").timeout(timeout))
        .await
        .expect("the run outlived its timeout")
        .unwrap_err();
    assert!(
        matches!(err, AgentError::TimedOut { timeout: t } if t == timeout),
        "{err}"
    );
    assert!(err.to_string().contains("timeout"), "{err}");
    assert!(saw_cancel.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_timeout_fails_a_streamed_run_too() {
    let agent = Agent::builder()
        .model(ScriptedModel::new([ScriptedTurn::hang()]))
        .build()
        .unwrap();
    let mut events = agent
        .send("go")
        .timeout(Duration::from_millis(100))
        .stream();
    let last = tokio::time::timeout(BOUND, events.next())
        .await
        .expect("the stream outlived its timeout");
    assert!(
        matches!(last, Some(Err(AgentError::TimedOut { .. }))),
        "{last:?}"
    );
}

#[tokio::test]
async fn a_run_within_its_timeout_is_unaffected() {
    let agent = Agent::builder().model("test").build().unwrap();
    let reply = agent
        .send("hi")
        .timeout(Duration::from_secs(600))
        .await
        .unwrap();
    assert_eq!(reply.text, "You said: hi");
}

fn approval_agent(calls: Arc<AtomicUsize>, deny_in_agent: bool) -> Agent {
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("wipe", json!({"text": "x"})),
        ScriptedTurn::text("done"),
    ]);
    let builder = Agent::builder()
        .model(model)
        .tool(counting_echo("wipe", calls).needs_approval(true));
    let builder = if deny_in_agent {
        builder.approval_handler(|_| async { ApprovalDecision::deny("the agent says no") })
    } else {
        builder
    };
    builder.build().unwrap()
}

#[tokio::test]
async fn a_runs_approval_handler_answers_instead_of_the_agents() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = approval_agent(calls.clone(), true);
    let asked = Arc::new(AtomicUsize::new(0));
    let reply = agent
        .send("wipe it")
        .approval_handler({
            let asked = asked.clone();
            move |request| {
                assert_eq!(request.tool_name, "wipe");
                asked.fetch_add(1, Ordering::SeqCst);
                async { ApprovalDecision::Approve }
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Without it, the agent's handler answers again.
    let agent = approval_agent(calls.clone(), true);
    let reply = agent.send("wipe it").await.unwrap();
    assert!(reply.tool_calls[0].output.is_error);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_runs_approval_handler_keeps_an_agent_without_one_from_pausing() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = approval_agent(calls.clone(), false);
    let reply = agent
        .send("wipe it")
        .approval_handler(|_| async { ApprovalDecision::Approve })
        .await
        .unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_streamed_session_turn_joins_the_history_when_done() {
    let model = ScriptedModel::new([ScriptedTurn::text("first"), ScriptedTurn::text("second")]);
    let agent = Agent::builder().model(model.clone()).build().unwrap();
    let session = agent.session();
    let mut events = session.send("one").stream();
    let mut done = false;
    while let Some(event) = events.next().await {
        done |= matches!(event.unwrap(), AgentEvent::Done(_));
    }
    assert!(done);
    assert_eq!(session.history().len(), 2);
    let reply = session.send("two").await.unwrap();
    assert_eq!(reply.text, "second");
    let texts: Vec<String> = model.requests()[1]
        .messages
        .iter()
        .map(|m| m.text())
        .collect();
    assert_eq!(texts, ["one", "first", "two"]);
}

#[tokio::test]
async fn a_failed_session_turn_leaves_the_history_as_it_was() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("first"),
        ScriptedTurn::error("the provider is down"),
    ]);
    let agent = Agent::builder().model(model).build().unwrap();
    let session = agent.session();
    session.send("one").await.unwrap();
    let before = session.history();
    assert!(session.send("two").await.is_err());
    assert_eq!(session.history(), before);
}
