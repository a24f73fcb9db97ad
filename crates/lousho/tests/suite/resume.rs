//! Pausing for approval and resuming, in the same or a new `Agent`.

use futures::StreamExt;
use lousho::agent::{RunStateError, RunStatus};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Role, ToolResult};
use lousho::policy::Decisions;
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentError, AgentEvent, RunState, ToolContext, ToolOutput};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One "process": its tools count their calls.
struct Process {
    agent: Agent,
    model: ScriptedModel,
    lookups: Arc<AtomicUsize>,
    deletes: Arc<AtomicUsize>,
}

/// The configuration both processes share: `lookup` runs freely (and notes
/// in the conversation state that it ran), `delete` needs approval (and
/// reports what the state said).
fn process(script: Vec<ScriptedTurn>) -> Process {
    let lookups = Arc::new(AtomicUsize::new(0));
    let deletes = Arc::new(AtomicUsize::new(0));
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    let l = lookups.clone();
    let lookup = DefinedTool::from_json(
        "lookup",
        "Finds a file",
        schema.clone(),
        move |input: Value, ctx: ToolContext| {
            l.fetch_add(1, Ordering::SeqCst);
            ctx.state.set("looked_up", input["path"].clone());
            async move { ToolOutput::text("found a.txt") }
        },
    );
    let d = deletes.clone();
    let delete =
        DefinedTool::from_json(
            "delete",
            "Deletes a file",
            schema,
            move |input: Value, ctx: ToolContext| {
                d.fetch_add(1, Ordering::SeqCst);
                let looked_up = ctx.state.get("looked_up");
                async move {
                    ToolOutput::json(json!({"deleted": input["path"], "looked_up": looked_up}))
                }
            },
        )
        .needs_approval(true);
    let model = ScriptedModel::new(script);
    let agent = Agent::builder()
        .model(model.clone())
        .prompt("You manage files.")
        .tool(lookup)
        .tool(delete)
        .build()
        .unwrap();
    Process {
        agent,
        model,
        lookups,
        deletes,
    }
}

fn first_turn() -> ScriptedTurn {
    ScriptedTurn::tool_call("lookup", json!({"path": "a.txt"}))
        .and_tool_call("delete", json!({"path": "a.txt"}))
        .and_text("Let me look and delete.")
        .usage(10, 5)
}

/// Pauses a run in a first process and returns the stored state.
async fn pause_in_first_process() -> (Process, String, String) {
    let first = process(vec![first_turn()]);
    let reply = first.agent.send("delete a.txt").await.unwrap();
    assert_eq!(reply.status, RunStatus::Interrupted);
    assert_eq!(reply.pending.len(), 1);
    let call_id = reply.pending[0].call_id.clone();
    assert_eq!(reply.pending[0].tool_name, "delete");
    assert_eq!(
        first.lookups.load(Ordering::SeqCst),
        1,
        "the free call ran before pausing"
    );
    assert_eq!(first.deletes.load(Ordering::SeqCst), 0);
    assert_eq!(
        reply.tool_calls.len(),
        1,
        "the interrupted reply shows the finished call"
    );
    let json = reply.state.unwrap().to_json().unwrap();
    (first, json, call_id)
}

fn tool_results(messages: &[lousho::model::Message]) -> Vec<ToolResult> {
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .flat_map(|m| m.tool_results_iter().cloned())
        .collect()
}

#[tokio::test]
async fn a_new_agent_resumes_a_serialised_run_and_runs_the_approved_call_once() {
    let (first, json, call_id) = pause_in_first_process().await;

    // "Another process": a new agent from the same configuration, the state
    // read back from a string.
    let second = process(vec![ScriptedTurn::text("Deleted a.txt.").usage(7, 3)]);
    let state = RunState::from_json(&json).unwrap();
    assert_eq!(state.pending().count(), 1);
    let reply = second
        .agent
        .resume(state, Decisions::new().approve(&call_id))
        .await
        .unwrap();

    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(reply.text, "Deleted a.txt.");
    assert_eq!(
        second.deletes.load(Ordering::SeqCst),
        1,
        "the approved call ran once"
    );
    assert_eq!(
        second.lookups.load(Ordering::SeqCst),
        0,
        "the other call was not re-run"
    );
    assert_eq!(first.lookups.load(Ordering::SeqCst), 1);
    assert_eq!(first.deletes.load(Ordering::SeqCst), 0);
    assert_eq!(first.model.played(), 1);
    assert_eq!(second.model.played(), 1);
    assert_eq!(reply.turns, 2);
    assert_eq!(reply.usage.total(), 25);
    let names: Vec<_> = reply
        .tool_calls
        .iter()
        .map(|r| r.call.name.as_str())
        .collect();
    assert_eq!(names, ["lookup", "delete"]);

    // The model's next request has both results, in call order, and the
    // conversation state written before the pause reached the resumed call.
    let request = second.model.last_request().unwrap();
    assert_eq!(request.system.as_deref(), Some("You manage files."));
    let results = tool_results(&request.messages);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].name, "lookup");
    assert_eq!(results[0].output.to_model_text(), "found a.txt");
    assert_eq!(results[1].name, "delete");
    assert_eq!(results[1].call_id, call_id);
    assert_eq!(
        results[1].output.structured,
        Some(json!({"deleted": "a.txt", "looked_up": "a.txt"}))
    );
    assert_eq!(request.messages[0].text(), "delete a.txt");
}

#[tokio::test]
async fn a_denial_on_resume_produces_the_error_result() {
    let (_first, json, call_id) = pause_in_first_process().await;
    let second = process(vec![ScriptedTurn::text("OK, I left it.")]);
    let state = RunState::from_json(&json).unwrap();
    let reply = second
        .agent
        .resume(state, Decisions::new().deny(&call_id, "keep that file"))
        .await
        .unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(second.deletes.load(Ordering::SeqCst), 0);
    assert_eq!(second.lookups.load(Ordering::SeqCst), 0);
    let results = tool_results(&second.model.last_request().unwrap().messages);
    assert!(!results[0].output.is_error);
    assert!(results[1].output.is_error);
    assert!(results[1].output.to_model_text().contains("keep that file"));
}

#[tokio::test]
async fn missing_or_malformed_answers_deny() {
    for decisions in [
        Decisions::new(),
        Decisions::new().approve("some_other_call"),
        Decisions::from_json(&json!({"call_0_1": {"decision": "yes please"}})),
        Decisions::from_json(&json!("approve everything")),
    ] {
        let (_first, json, call_id) = pause_in_first_process().await;
        assert_eq!(call_id, "call_0_1");
        let second = process(vec![ScriptedTurn::text("OK.")]);
        let reply = second
            .agent
            .resume(RunState::from_json(&json).unwrap(), decisions.clone())
            .await
            .unwrap();
        assert_eq!(reply.status, RunStatus::Completed);
        assert_eq!(second.deletes.load(Ordering::SeqCst), 0, "{decisions:?}");
        assert!(reply.tool_calls[1].output.is_error, "{decisions:?}");
    }
}

#[tokio::test]
async fn a_streamed_resume_starts_only_the_pending_call() {
    let (_first, json, call_id) = pause_in_first_process().await;
    let second = process(vec![ScriptedTurn::text("Done.")]);
    let mut stream = second
        .agent
        .resume(
            RunState::from_json(&json).unwrap(),
            Decisions::new().approve(&call_id),
        )
        .stream();
    let mut started = Vec::new();
    let mut done = None;
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            AgentEvent::ToolCallStarted(call) => started.push(call.name),
            AgentEvent::ApprovalRequested(r) => panic!("asked again: {r:?}"),
            AgentEvent::Done(reply) => done = Some(reply),
            _ => {}
        }
    }
    assert_eq!(started, ["delete"]);
    assert_eq!(done.unwrap().status, RunStatus::Completed);
}

#[tokio::test]
async fn a_resumed_run_can_pause_again_in_a_later_turn() {
    let (_first, json, call_id) = pause_in_first_process().await;
    let second = process(vec![
        ScriptedTurn::tool_call("delete", json!({"path": "b.txt"})),
        ScriptedTurn::text("Both gone."),
    ]);
    let reply = second
        .agent
        .resume(
            RunState::from_json(&json).unwrap(),
            Decisions::new().approve(&call_id),
        )
        .await
        .unwrap();
    assert_eq!(reply.status, RunStatus::Interrupted);
    assert_eq!(reply.turns, 2);
    let state = reply.state.unwrap();
    let next_id = state.pending().next().unwrap().call_id.clone();
    let reply = second
        .agent
        .resume(state, Decisions::new().approve(next_id))
        .await
        .unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(reply.turns, 3);
    assert_eq!(second.deletes.load(Ordering::SeqCst), 2);
    assert_eq!(reply.tool_calls.len(), 3);
}

#[tokio::test]
async fn a_session_keeps_a_paused_run_out_of_its_history_until_it_completes() {
    let p = process(vec![first_turn(), ScriptedTurn::text("Gone.")]);
    let session = p.agent.session();
    let reply = session.send("delete a.txt").await.unwrap();
    assert_eq!(reply.status, RunStatus::Interrupted);
    assert!(session.history().is_empty());
    let call_id = reply.pending[0].call_id.clone();
    let reply = session
        .resume(reply.state.unwrap(), Decisions::new().approve(call_id))
        .await
        .unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(session.history(), reply.messages);
    assert_eq!(session.state().get("looked_up"), Some(json!("a.txt")));
}

#[tokio::test]
async fn unreadable_states_are_typed_errors() {
    let (_first, json, _) = pause_in_first_process().await;
    let mut value: Value = serde_json::from_str(&json).unwrap();
    value["version"] = json!(99);
    let err = RunState::from_json(&value.to_string()).unwrap_err();
    assert!(
        matches!(err, RunStateError::UnsupportedVersion { found: 99 }),
        "{err}"
    );
    assert!(matches!(
        RunState::from_json("{"),
        Err(RunStateError::Json(_))
    ));

    // A state whose calls all have results has nothing to resume.
    let state: RunState = serde_json::from_str(&json).unwrap();
    let p = process(vec![ScriptedTurn::text("x")]);
    let reply = p
        .agent
        .resume(state.clone(), Decisions::new())
        .await
        .unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    let mut done: Value = serde_json::to_value(&state).unwrap();
    done["turn"]["calls"][1]["output"] = json!({"content": []});
    let done: RunState = serde_json::from_value(done).unwrap();
    let err = p.agent.resume(done, Decisions::new()).await.unwrap_err();
    assert!(
        matches!(err, AgentError::RunState(RunStateError::NothingPending)),
        "{err}"
    );
}

/// The stored format is what another process (maybe a newer lousho) reads
/// back: changes to it show up here.
#[tokio::test]
async fn the_run_state_format_is_stable() {
    let (_first, json, _) = pause_in_first_process().await;
    let value: Value = serde_json::from_str(&json).unwrap();
    insta::assert_json_snapshot!("run_state", value);
}
