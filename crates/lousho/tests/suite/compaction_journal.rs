//! Context compaction and the step journal (issue 35 follow-up), on every
//! store: a summary is announced (`AgentEvent::Compacted`, with the range it
//! replaces and the model that wrote it) and committed as a step of the
//! stored session's run, so a run interrupted after it resumes with the
//! summary in its conversation and the summarising model is asked once in
//! all.
//!
//! The stop is a cancel while turn 1's read-only call runs (it blocks until
//! cancelled): the journal holds the summary and turn 1, and the resumed
//! run runs the read again, then asks the model for turn 2. The test runs
//! on each store in `session_journal.rs`'s suite.

use super::compaction::{TASK, anthropic, compaction, history, stored};
use super::session_journal::until_cancelled;
use lousho::agent::SUMMARY_HEADER;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Message, Role, Summary, Usage};
use lousho::session::{JournalStatus, SessionStore};
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentEvent, CancellationToken, Model, ToolOutput};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

type Store = Arc<dyn SessionStore>;

const SUMMARY: &str = "SUMMARY: Lisbon in May, budget 2k.";

/// The compacting agent of `compaction.rs`, with a read-only `lookup`
/// (counted in `looked`) that, with `block`, waits for the run's cancel.
fn agent(
    model: ScriptedModel,
    summariser: Arc<dyn Model>,
    looked: Arc<AtomicUsize>,
    block: bool,
) -> Agent {
    let lookup = DefinedTool::from_json(
        "lookup",
        "Reads",
        json!({"type": "object"}),
        move |_input: serde_json::Value, ctx: lousho::ToolContext| {
            let looked = looked.clone();
            async move {
                if block {
                    ctx.cancel.cancelled().await;
                    return ToolOutput::error("cancelled");
                }
                looked.fetch_add(1, Ordering::SeqCst);
                ToolOutput::text("looked")
            }
        },
    )
    .read_only();
    Agent::builder()
        .model(model)
        .prompt("You are terse.")
        .tool(lookup)
        .context_budget(800)
        .compaction(compaction(summariser))
        .build()
        .unwrap()
}

/// Summarised, interrupted, resumed on `store`.
pub(super) async fn a_run_interrupted_after_a_summary_resumes_without_asking_for_it_again(
    store: Store,
) {
    let cheap = MockProvider::anthropic()
        .reply(MockReply::text_reply(SUMMARY).usage(100, 30))
        .start()
        .await;
    let summariser = anthropic(&cheap);
    stored(&store, &history()).await;
    let expected = Summary {
        text: SUMMARY.into(),
        from: 1,
        to: 7,
        model: summariser.name().into(),
    };

    // The first run: summarised before turn 1, cancelled in turn 1's call.
    let model = ScriptedModel::new([ScriptedTurn::tool_call("lookup", json!({}))]);
    let looked = Arc::new(AtomicUsize::new(0));
    let first = agent(model, summariser.clone(), looked.clone(), true);
    let session = first.open_session(store.clone(), "trip").await.unwrap();
    let cancel = CancellationToken::new();
    let events = session.send("now").cancel(cancel.clone()).stream();
    let mut seen = Vec::new();
    until_cancelled(events, |event| match event {
        AgentEvent::Compacted { summary, usage } => {
            assert_eq!(summary, expected, "the range replaced and the model");
            assert_eq!(usage, Usage::new(100, 30), "the summary request's tokens");
            seen.push("compacted");
        }
        AgentEvent::ToolCallStarted(_) => {
            seen.push("call");
            cancel.cancel();
        }
        _ => {}
    })
    .await;
    assert_eq!(seen, ["compacted", "call"], "announced before the turn");
    let runs = session.runs().await.unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].status, JournalStatus::Interrupted);
    assert_eq!(runs[0].steps, 2, "the summary and turn 1");

    // Resumed by a new agent: the read runs again, the model answers turn
    // 2 from the summary; nobody asks for a summary again.
    let model = ScriptedModel::new([ScriptedTurn::text("Booked.")]);
    let again = agent(model.clone(), summariser.clone(), looked.clone(), false);
    let session = again.open_session(store.clone(), "trip").await.unwrap();
    let reply = session.resume_interrupted(&runs[0].id).await.unwrap();
    assert_eq!(reply.text, "Booked.");
    assert_eq!(looked.load(Ordering::SeqCst), 1, "the read ran again");
    assert_eq!(cheap.requests().len(), 1, "the summary was asked for once");
    assert_eq!(model.requests().len(), 1, "turn 1 was not asked again");

    // Turn 2's request: the task, the summary in place of messages 1..7,
    // then the kept message, the input and turn 1.
    let sent = &model.requests()[0].messages;
    let roles: Vec<Role> = sent.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::Tool
        ]
    );
    assert_eq!(sent[0], Message::user(TASK));
    assert_eq!(
        sent[1],
        Message::user(format!("{SUMMARY_HEADER}\n\n{SUMMARY}"))
    );
    assert_eq!(sent[2], Message::assistant("a3"));
    assert_eq!(sent[3], Message::user("now"));

    // The summary request still counts in the resumed run's usage.
    assert_eq!(reply.requests.len(), 3, "summary, turn 1, turn 2");
    assert_eq!(reply.requests[0].model, summariser.name());
    assert_eq!(reply.requests[0].usage, Usage::new(100, 30));

    // Stored: the originals, the input, the summary where it was made,
    // turn 1 and its result, the answer.
    let kept = store.load("trip").await.unwrap().unwrap().messages;
    assert_eq!(kept.len(), history().len() + 5);
    assert_eq!(kept[..history().len()], history()[..]);
    assert_eq!(kept[8], Message::user("now"));
    assert_eq!(kept[9].as_summary(), Some(&expected));
    assert_eq!(kept[10].role, Role::Assistant);
    assert_eq!(kept[11].role, Role::Tool);
    assert_eq!(kept[12], Message::assistant("Booked."));
    assert!(
        session.runs().await.unwrap().is_empty(),
        "the journal is gone"
    );
}
