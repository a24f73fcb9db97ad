//! The step journal (issue 34 §2–3), on every store: a run of a stored
//! session that stops without finishing is `interrupted` and resumable from
//! its last committed step — committed model turns are not asked again, a
//! read-only tool that was in flight runs again, a write tool in flight does
//! not run again unless approved (the model is told it was interrupted).
//!
//! The stop is a cancel in the middle of the third turn's calls (both tools
//! block until cancelled): what a SIGKILL leaves is the same journal, minus
//! the `interrupted` mark, which the store derives from the lapsed lease
//! (the CLI tests kill a process for real). A run interrupted after a
//! compaction summary: `compaction_journal.rs`.

use super::compaction_journal::a_run_interrupted_after_a_summary_resumes_without_asking_for_it_again;
use futures::StreamExt;
use lousho::agent::AgentStream;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Message, Role};
use lousho::policy::{ApprovalDecision, DecisionReason};
use lousho::session::{JournalStatus, MemoryStore, SessionStore};
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentEvent, CancellationToken, ToolOutput};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

type Store = Arc<dyn SessionStore>;

macro_rules! journal_suite {
    ($backend:ident, $make:expr) => {
        mod $backend {
            #[allow(unused_imports)]
            use super::*;

            async fn store() -> Option<Store> {
                $make
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn an_interrupted_run_resumes_from_its_last_committed_step() {
                if let Some(store) = store().await {
                    super::an_interrupted_run_resumes_from_its_last_committed_step(store).await;
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_run_interrupted_after_a_summary_resumes_without_asking_for_it_again() {
                if let Some(store) = store().await {
                    super::a_run_interrupted_after_a_summary_resumes_without_asking_for_it_again(
                        store,
                    )
                    .await;
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn without_an_approval_handler_the_write_in_flight_pauses_the_resumed_run() {
                if let Some(store) = store().await {
                    super::without_an_approval_handler_the_write_in_flight_pauses_the_resumed_run(
                        store,
                    )
                    .await;
                }
            }
        }
    };
}

journal_suite!(memory, Some(Arc::new(MemoryStore::new()) as Store));

#[cfg(feature = "sqlite")]
journal_suite!(sqlite, {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    std::mem::forget(dir);
    Some(Arc::new(lousho::session::SqliteStore::open(path).await.unwrap()) as Store)
});

#[cfg(feature = "postgres")]
journal_suite!(postgres, {
    let server = lousho_testkit::postgres::PgServer::shared()?;
    let url = server.create_database();
    Some(Arc::new(lousho::session::PostgresStore::connect(&url).await.unwrap()) as Store)
});

/// How often each tool ran.
#[derive(Default)]
struct Counts {
    lookup: AtomicUsize,
    write: AtomicUsize,
    /// Calls begun, of either tool.
    calls: AtomicUsize,
}

impl Counts {
    /// Counts a call; `true` if it must block (the `block_from`th call on).
    fn begin(&self, block_from: Option<usize>) -> bool {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        block_from.is_some_and(|from| n >= from)
    }
}

/// `lookup` (read-only) and `write`; with `block_from`, calls from that
/// one on (counting from 0) wait for the run's cancellation instead.
fn agent(model: ScriptedModel, counts: Arc<Counts>, block_from: Option<usize>) -> Agent {
    let c = counts.clone();
    let lookup = DefinedTool::from_json(
        "lookup",
        "Reads",
        json!({"type": "object"}),
        move |_input: serde_json::Value, ctx: lousho::ToolContext| {
            let c = c.clone();
            async move {
                assert!(
                    ctx.idempotency_key()
                        .is_some_and(|k| k.ends_with(&ctx.call_id))
                );
                if c.begin(block_from) {
                    ctx.cancel.cancelled().await;
                    return ToolOutput::error("cancelled");
                }
                c.lookup.fetch_add(1, Ordering::SeqCst);
                ToolOutput::text("looked")
            }
        },
    )
    .read_only();
    let write = DefinedTool::from_json(
        "write",
        "Writes",
        json!({"type": "object"}),
        move |_input: serde_json::Value, ctx: lousho::ToolContext| {
            let c = counts.clone();
            async move {
                if c.begin(block_from) {
                    ctx.cancel.cancelled().await;
                    return ToolOutput::error("cancelled");
                }
                c.write.fetch_add(1, Ordering::SeqCst);
                ToolOutput::text("written")
            }
        },
    );
    Agent::builder()
        .model(model)
        .tool(lookup)
        .tool(write)
        .build()
        .unwrap()
}

async fn an_interrupted_run_resumes_from_its_last_committed_step(store: Store) {
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_call("lookup", json!({})),
        ScriptedTurn::tool_call("write", json!({})),
        ScriptedTurn::tool_call("lookup", json!({})).and_tool_call("write", json!({})),
    ]);
    let counts = Arc::new(Counts::default());
    let run = interrupted(store.clone(), model, counts.clone()).await;
    assert_eq!(counts.lookup.load(Ordering::SeqCst), 1);
    assert_eq!(counts.write.load(Ordering::SeqCst), 1);
    assert_eq!(
        store.load("chat").await.unwrap().unwrap().info.version,
        0,
        "nothing in the history before the run completes"
    );

    // Resume with a new agent: the model answers once (turn 4).
    let model = ScriptedModel::new(vec![ScriptedTurn::text("all done")]);
    let counts = Arc::new(Counts::default());
    let again = agent(model.clone(), counts.clone(), None);
    let session = again.open_session(store.clone(), "chat").await.unwrap();
    let runs = session.runs().await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].id, run);
    assert_eq!(runs[0].status, JournalStatus::Interrupted);
    assert_eq!(runs[0].steps, 5, "3 turns, 2 results");
    let asked = Arc::new(AtomicUsize::new(0));
    let a = asked.clone();
    let reply = session
        .resume_interrupted(&run)
        .approval_handler(move |request| {
            let a = a.clone();
            async move {
                assert_eq!(request.tool_name, "write");
                assert_eq!(request.reason, DecisionReason::Interrupted);
                a.fetch_add(1, Ordering::SeqCst);
                ApprovalDecision::deny("not twice")
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.text, "all done");
    assert_eq!(asked.load(Ordering::SeqCst), 1, "the write was asked about");
    assert_eq!(
        counts.lookup.load(Ordering::SeqCst),
        1,
        "the read ran again"
    );
    assert_eq!(counts.write.load(Ordering::SeqCst), 0, "the write did not");
    assert_eq!(model.requests().len(), 1, "committed turns not asked again");
    let sent = &model.requests()[0].messages;
    let roles: Vec<Role> = sent.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant,
            Role::Tool,
            Role::Assistant,
            Role::Tool
        ]
    );
    let last: Vec<(String, String)> = sent[6]
        .tool_results_iter()
        .map(|r| (r.name.clone(), r.output.to_model_text()))
        .collect();
    assert_eq!(last[0], ("lookup".into(), "looked".into()));
    assert!(last[1].1.contains("was interrupted"), "{last:?}");
    let stored = store.load("chat").await.unwrap().unwrap();
    assert_eq!(stored.messages.len(), 8);
    assert_eq!(stored.messages[7], Message::assistant("all done"));
    assert!(
        session.runs().await.unwrap().is_empty(),
        "the journal is gone"
    );
}

async fn without_an_approval_handler_the_write_in_flight_pauses_the_resumed_run(store: Store) {
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_call("lookup", json!({})),
        ScriptedTurn::tool_call("write", json!({})),
        ScriptedTurn::tool_call("lookup", json!({})).and_tool_call("write", json!({})),
    ]);
    let run = interrupted(store.clone(), model, Arc::new(Counts::default())).await;
    let model = ScriptedModel::new(vec![ScriptedTurn::text("all done")]);
    let counts = Arc::new(Counts::default());
    let again = agent(model.clone(), counts.clone(), None);
    let session = again.open_session(store.clone(), "chat").await.unwrap();
    let reply = session.resume_interrupted(&run).await.unwrap();
    assert_eq!(reply.status, lousho::agent::RunStatus::Interrupted);
    assert_eq!(reply.pending.len(), 1);
    assert_eq!(reply.pending[0].tool_name, "write");
    assert_eq!(reply.pending[0].reason, DecisionReason::Interrupted);
    assert_eq!(counts.lookup.load(Ordering::SeqCst), 1);
    assert_eq!(counts.write.load(Ordering::SeqCst), 0);
    assert!(model.requests().is_empty());
    // Approved, the paused turn finishes: the write runs now.
    let call = reply.pending[0].call_id.clone();
    let reply = session
        .resume(
            reply.state.unwrap(),
            lousho::policy::Decisions::new().approve(&call),
        )
        .await
        .unwrap();
    assert_eq!(reply.text, "all done");
    assert_eq!(counts.write.load(Ordering::SeqCst), 1);
    assert_eq!(store.load("chat").await.unwrap().unwrap().messages.len(), 8);
}

/// Runs "go" in session `chat` with `model` (a lookup, a write, then both
/// at once) and cancels it once the third turn's two calls started (they
/// block until then): the journal holds turns 1–3 and the results of turns
/// 1–2. Returns the run's id.
async fn interrupted(store: Store, model: ScriptedModel, counts: Arc<Counts>) -> String {
    let first = agent(model, counts, Some(2));
    let session = first.open_session(store.clone(), "chat").await.unwrap();
    let cancel = CancellationToken::new();
    let events = session.send("go").cancel(cancel.clone()).stream();
    let mut started = 0;
    until_cancelled(events, |event| {
        if let AgentEvent::ToolCallStarted(_) = event {
            started += 1;
            if started == 4 {
                cancel.cancel();
            }
        }
    })
    .await;
    let runs = session.runs().await.unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].id.clone()
}

/// Passes each of a run's `events` to `on` until the stream ends, and
/// checks that the run was cancelled (it must not complete).
pub(super) async fn until_cancelled(mut events: AgentStream, mut on: impl FnMut(AgentEvent)) {
    let mut ended = None;
    while let Some(event) = events.next().await {
        match event {
            Ok(AgentEvent::Done(_)) => panic!("the run completed"),
            Ok(event) => on(event),
            Err(e) => ended = Some(e),
        }
    }
    assert!(
        matches!(ended, Some(lousho::AgentError::Cancelled)),
        "{ended:?}"
    );
}
