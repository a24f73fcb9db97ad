//! Context that grows: a conversation longer than the agent's context budget
//! is sent without its oldest turns, never splitting a tool call from its
//! result; checked by what the ScriptedModel was sent.

use lousho::Agent;
use lousho::ToolOutput;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Message, Part, Role, ToolCall, ToolResult};
use lousho::session::{MemoryStore, SessionStore};
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;

/// ~1,000 estimated tokens of text.
fn pad(tag: &str) -> String {
    format!("{tag} {}", "x".repeat(4000))
}

/// An assistant turn that calls `lookup` (id `id`).
pub(super) fn call(id: &str) -> Message {
    Message {
        role: Role::Assistant,
        parts: vec![Part::ToolCall(ToolCall {
            id: id.into(),
            name: "lookup".into(),
            arguments: json!({}),
        })],
    }
}

/// The result of call `id`.
pub(super) fn result(id: &str, text: String) -> Message {
    Message::tool_results([ToolResult {
        call_id: id.into(),
        name: "lookup".into(),
        output: ToolOutput::text(text),
    }])
}

/// Five stored turns of ~1,000 tokens each; turns 2 and 4 hold a tool call
/// whose (large) result is most of the turn.
fn history() -> Vec<Message> {
    vec![
        Message::user(pad("u1")),
        Message::assistant("a1"),
        Message::user("u2"),
        call("c2"),
        result("c2", pad("r2")),
        Message::assistant("a2"),
        Message::user(pad("u3")),
        Message::assistant("a3"),
        Message::user("u4"),
        call("c4"),
        result("c4", pad("r4")),
        Message::assistant("a4"),
        Message::user(pad("u5")),
        Message::assistant("a5"),
    ]
}

async fn send_with_budget(budget: Option<usize>) -> (Vec<Message>, lousho::model::ModelRequest) {
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    store.create("long").await.unwrap();
    store.append("long", 0, &history()).await.unwrap();
    let model = ScriptedModel::new([ScriptedTurn::text("ok")]);
    let mut builder = Agent::builder()
        .model(model.clone())
        .prompt("You are terse.");
    if let Some(budget) = budget {
        builder = builder.context_budget(budget);
    }
    let agent = builder.build().unwrap();
    let session = agent.open_session(store.clone(), "long").await.unwrap();
    session.send("now").await.unwrap();
    let stored = store.load("long").await.unwrap().unwrap().messages;
    (stored, model.last_request().unwrap())
}

/// Every tool result sent has its call sent, and the other way round.
fn assert_pairs_whole(messages: &[Message]) {
    let calls: HashSet<&str> = messages
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|c| c.id.as_str())
        .collect();
    let results: HashSet<&str> = messages
        .iter()
        .flat_map(|m| m.tool_results_iter())
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(calls, results, "a tool call was split from its result");
}

#[tokio::test]
async fn a_conversation_over_the_budget_is_sent_as_its_newest_whole_turns() {
    // Room for about two and a half old turns besides the new one.
    let (stored, sent) = send_with_budget(Some(2_700)).await;
    let all = [history(), vec![Message::user("now")]].concat();
    assert_eq!(
        sent.system.as_deref(),
        Some("You are terse."),
        "the system prompt always goes"
    );
    assert_eq!(
        sent.messages.first().unwrap().role,
        Role::User,
        "it starts with a user message"
    );
    assert!(sent.messages.len() < all.len(), "older turns were left out");
    assert_eq!(
        sent.messages[..],
        all[all.len() - sent.messages.len()..],
        "the newest messages, unchanged and in order"
    );
    // Turn 4 (a call and its ~1,000-token result) and turn 5 fit; turn 3 does
    // not: a cut by size alone would have landed inside turn 4's pair.
    assert_eq!(sent.messages.first().unwrap(), &Message::user("u4"));
    assert_pairs_whole(&sent.messages);
    // Only what was sent shrank.
    assert_eq!(stored.len(), all.len() + 1);
    assert_eq!(stored[..all.len()], all[..]);
}

#[tokio::test]
async fn a_budget_that_holds_everything_sends_everything() {
    let (_, sent) = send_with_budget(Some(100_000)).await;
    assert_eq!(sent.messages.len(), history().len() + 1);
    let (_, unlimited) = send_with_budget(None).await;
    assert_eq!(unlimited.messages.len(), history().len() + 1);
}

#[tokio::test]
async fn the_newest_turn_goes_even_when_it_alone_is_over_the_budget() {
    let (_, sent) = send_with_budget(Some(10)).await;
    assert_eq!(sent.messages, [Message::user("now")]);
}

#[tokio::test]
async fn a_run_with_tool_turns_keeps_its_own_calls_and_results_under_a_tight_budget() {
    // The current run's own tool turns are part of its newest turn: they
    // all go, with the results the model needs.
    let lookup = lousho::tool::DefinedTool::from_json(
        "lookup",
        "Looks up",
        json!({"type": "object"}),
        |_: serde_json::Value, _: lousho::ToolContext| async move { ToolOutput::text(pad("found")) },
    )
    .read_only();
    let model = ScriptedModel::new([
        ScriptedTurn::text("noted"),
        ScriptedTurn::tool_call("lookup", json!({})),
        ScriptedTurn::tool_call("lookup", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .tool(lookup)
        .context_budget(1_500)
        .build()
        .unwrap();
    let session = agent.session();
    session.send(pad("old")).await.unwrap();
    let reply = session.send("look twice").await.unwrap();
    assert_eq!(reply.text, "done");
    let sent = model.last_request().unwrap();
    assert_eq!(sent.messages.first().unwrap(), &Message::user("look twice"));
    assert_eq!(sent.messages.len(), 5, "user, call, result, call, result");
    assert_pairs_whole(&sent.messages);
}

#[cfg(feature = "spec")]
#[tokio::test]
async fn a_spec_sets_the_budget_with_context_budget() {
    use lousho::spec::{SpecErrorKind, SpecLoader};
    let load = |text: &str| SpecLoader::new().without_env().parse(text, "agent.yaml");
    let spec = load("model: test\nprompt: You are terse.\ncontextBudget: 2700\n").unwrap();
    assert_eq!(spec.context_budget, Some(2_700));

    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    store.create("long").await.unwrap();
    store.append("long", 0, &history()).await.unwrap();
    let model = ScriptedModel::new([ScriptedTurn::text("ok")]);
    let agent = spec
        .agent_builder()
        .unwrap()
        .model(model.clone())
        .build()
        .unwrap();
    let session = agent.open_session(store, "long").await.unwrap();
    session.send("now").await.unwrap();
    let sent = model.last_request().unwrap();
    // The same cut as `AgentBuilder::context_budget(2_700)` makes.
    assert_eq!(sent.messages.first().unwrap(), &Message::user("u4"));
    assert_pairs_whole(&sent.messages);

    // Without the key: no limit.
    let spec = load("model: test\n").unwrap();
    assert_eq!(spec.context_budget, None);

    let e = load("model: test\ncontextBudget: 0\n").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("contextBudget"));
    assert_eq!(e.line, Some(2));
    assert!(matches!(*e.kind, SpecErrorKind::Invalid(_)), "{e}");
    let e = load("model: test\ncontextbudget: 10\n").unwrap_err();
    assert_eq!(
        *e.kind,
        SpecErrorKind::UnknownKey {
            suggestion: Some("contextBudget".into())
        }
    );
}
