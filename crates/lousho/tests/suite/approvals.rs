//! Approval policies (annotations × policy), the approval handler and the
//! approval-requested event.

use futures::StreamExt;
use lousho::agent::RunStatus;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::policy::{ApprovalDecision, ApprovalRequest};
use lousho::policy::{Decision, DecisionReason};
use lousho::tool::ToolOrigin;
use lousho::{Agent, AgentEvent, Approval, ToolAnnotations};
use lousho_testkit::tools::counting_echo;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Run,
    Ask,
}

fn annotation_cases() -> Vec<(&'static str, ToolAnnotations)> {
    vec![
        ("none", ToolAnnotations::new()),
        ("readOnly true", ToolAnnotations::new().read_only(true)),
        ("destructive true", ToolAnnotations::new().destructive(true)),
        (
            "destructive false",
            ToolAnnotations::new().destructive(false),
        ),
        ("readOnly false", ToolAnnotations::new().read_only(false)),
    ]
}

fn policies() -> Vec<(&'static str, Approval)> {
    vec![
        ("annotations", Approval::Annotations),
        ("always", Approval::Always),
        ("never", Approval::Never),
        // Asks only for tools that say they are destructive.
        (
            "custom",
            Approval::custom(|_name, a| a.destructive == Some(true)),
        ),
    ]
}

/// The table: rows are annotations, columns the policies above.
fn expected(annotations: &str, policy: &str) -> Expect {
    use Expect::{Ask, Run};
    let row = match annotations {
        "none" => [Ask, Ask, Run, Run],
        "readOnly true" => [Run, Ask, Run, Run],
        "destructive true" => [Ask, Ask, Run, Ask],
        "destructive false" => [Run, Ask, Run, Run],
        "readOnly false" => [Ask, Ask, Run, Run],
        other => panic!("no row for {other}"),
    };
    let column = ["annotations", "always", "never", "custom"]
        .iter()
        .position(|p| *p == policy)
        .unwrap();
    row[column]
}

#[tokio::test]
async fn annotations_and_policy_decide_run_or_ask() {
    for (annotation_name, annotations) in annotation_cases() {
        for (policy_name, policy) in policies() {
            let expect = expected(annotation_name, policy_name);
            let case = format!("annotations {annotation_name} × policy {policy_name}");
            let calls = Arc::new(AtomicUsize::new(0));
            let tool = counting_echo("act", calls.clone())
                .annotations(annotations.clone())
                .approval(policy.clone());
            let model = ScriptedModel::new([
                ScriptedTurn::tool_call("act", json!({"text": "x"})),
                ScriptedTurn::text("done"),
            ]);
            let agent = Agent::builder().model(model).tool(tool).build().unwrap();

            // The static decision (what `lousho tools` and the MCP server see)…
            let decision = agent.tool_decision("act");
            let want = if expect == Expect::Ask {
                Decision::Ask
            } else {
                Decision::Run
            };
            assert_eq!(decision.decision, want, "{case}: static decision");

            // …and what a run does: no handler, so "ask" pauses.
            let reply = agent.send("go").await.unwrap();
            match expect {
                Expect::Run => {
                    assert_eq!(reply.status, RunStatus::Completed, "{case}");
                    assert_eq!(calls.load(Ordering::SeqCst), 1, "{case}: ran once");
                }
                Expect::Ask => {
                    assert_eq!(reply.status, RunStatus::Interrupted, "{case}");
                    assert_eq!(reply.pending.len(), 1, "{case}");
                    assert_eq!(calls.load(Ordering::SeqCst), 0, "{case}: did not run");
                }
            }
        }
    }
}

#[tokio::test]
async fn static_decision_names_the_policy_or_rule() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder()
        .model("test")
        .tool(counting_echo("a", calls.clone()).approval(Approval::Annotations))
        .tool(counting_echo("b", calls.clone()).needs_approval(true))
        .tool(counting_echo("c", calls.clone()))
        .permission_rule(lousho::policy::PermissionRule::deny("c"))
        .build()
        .unwrap();
    let a = agent.tool_decision("a");
    assert_eq!(
        (a.decision, a.reason),
        (Decision::Ask, DecisionReason::Annotations)
    );
    let b = agent.tool_decision("b");
    assert_eq!(
        (b.decision, b.reason),
        (Decision::Ask, DecisionReason::Always)
    );
    let c = agent.tool_decision("c");
    assert_eq!(
        serde_json::to_value(&c).unwrap(),
        json!({"decision": "deny", "reason": "rule:c"})
    );
    assert_eq!(
        agent.tool_decision("nope").reason,
        DecisionReason::UnknownTool
    );
}

#[tokio::test]
async fn handler_gets_the_request_and_approves() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tool = counting_echo("files__delete", calls.clone())
        .annotations(
            ToolAnnotations::new()
                .title("Delete a file")
                .destructive(true),
        )
        .approval(Approval::Annotations)
        .origin(ToolOrigin::mcp("files", "delete"));
    let seen: Arc<Mutex<Vec<ApprovalRequest>>> = Arc::default();
    let seen2 = seen.clone();
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("files__delete", json!({"text": "a.txt"})),
        ScriptedTurn::text("deleted"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .tool(tool)
        .approval_handler(move |request| {
            seen2.lock().unwrap().push(request);
            async { ApprovalDecision::Approve }
        })
        .build()
        .unwrap();
    let reply = agent.send("delete a.txt").await.unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(reply.text, "deleted");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let request = &seen[0];
    assert_eq!(request.tool_name, "files__delete");
    assert_eq!(request.display_name.as_deref(), Some("Delete a file"));
    assert_eq!(request.input, json!({"text": "a.txt"}));
    assert_eq!(request.annotations.destructive, Some(true));
    assert_eq!(request.origin.as_deref(), Some("files"));
    assert_eq!(request.reason, DecisionReason::Annotations);
}

#[tokio::test]
async fn handler_denial_reaches_the_model_as_an_error_result() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("wipe", json!({})),
        ScriptedTurn::text("ok, I will not"),
    ]);
    let recorder = model.clone();
    let agent = Agent::builder()
        .model(model)
        .tool(counting_echo("wipe", calls.clone()).needs_approval(true))
        .approval_handler(|_| async { ApprovalDecision::deny("not on a Friday") })
        .build()
        .unwrap();
    let reply = agent.send("wipe it").await.unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let request = recorder.last_request().unwrap();
    let result = request
        .messages
        .last()
        .unwrap()
        .tool_results_iter()
        .next()
        .unwrap()
        .clone();
    assert!(result.output.is_error);
    assert!(
        result.output.to_model_text().contains("not on a Friday"),
        "{result:?}"
    );
    assert!(reply.tool_calls[0].output.is_error);
}

#[tokio::test]
async fn a_panicking_handler_denies() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("wipe", json!({})),
        ScriptedTurn::text("fine"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .tool(counting_echo("wipe", calls.clone()).needs_approval(true))
        .approval_handler(|_| async { panic!("the terminal went away") })
        .build()
        .unwrap();
    let reply = agent.send("wipe it").await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert!(reply.tool_calls[0].output.is_error);
}

#[tokio::test]
async fn stream_emits_approval_requested_before_pausing() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ScriptedTurn::tool_call("wipe", json!({"text": "all"}))]);
    let agent = Agent::builder()
        .model(model)
        .tool(counting_echo("wipe", calls.clone()).needs_approval(true))
        .build()
        .unwrap();
    let mut stream = agent.send("wipe it").stream();
    let mut requested = Vec::new();
    let mut started = 0;
    let mut reply = None;
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            AgentEvent::ApprovalRequested(r) => requested.push(r),
            AgentEvent::ToolCallStarted(_) => started += 1,
            AgentEvent::Done(r) => reply = Some(*r),
            _ => {}
        }
    }
    let reply = reply.unwrap();
    assert_eq!(requested.len(), 1);
    assert_eq!(requested[0].tool_name, "wipe");
    assert_eq!(requested[0].input, json!({"text": "all"}));
    assert_eq!(started, 0, "a call waiting for approval is not started");
    assert_eq!(reply.status, RunStatus::Interrupted);
    assert_eq!(reply.pending, requested);
}

#[tokio::test]
async fn cancelling_stops_waiting_for_an_answer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([ScriptedTurn::tool_call("wipe", json!({}))]);
    let agent = Agent::builder()
        .model(model)
        .tool(counting_echo("wipe", calls.clone()).needs_approval(true))
        .approval_handler(|_| futures::future::pending())
        .build()
        .unwrap();
    let cancel = lousho::CancellationToken::new();
    let run = agent.send("wipe").cancel(cancel.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let err = tokio::time::timeout(std::time::Duration::from_secs(5), run)
        .await
        .expect("the run stops when cancelled")
        .unwrap_err();
    assert!(matches!(err, lousho::AgentError::Cancelled), "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    canceller.await.unwrap();
}
