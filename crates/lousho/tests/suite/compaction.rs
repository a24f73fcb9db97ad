//! Context compaction (issue 35 §4) against the wire-faithful mocks over
//! loopback HTTP: a conversation over its context budget has its tool
//! results trimmed first, then its older messages summarised by a model
//! (here a cheaper one on another provider's mock); the next request
//! carries the summary instead of them, the first message (the task) stays,
//! a tool call is never split from its result (the mocks answer 400 as the
//! APIs do); the summary and the messages it replaced are kept in the
//! session store, which reloads (memory, SQLite, PostgreSQL); a failing
//! summary request falls back to leaving the oldest turns out.

use lousho::agent::{COMPACTION_PROMPT, Compaction, SUMMARY_HEADER};
use lousho::model::{Anthropic, Message, OpenAi, Summary, Usage};
use lousho::session::{MemoryStore, SessionStore};
use lousho::tool::DefinedTool;
use lousho::{Agent, Model, ToolOutput};
use lousho_testkit::mock_provider::{MockProvider, MockReply, RecordedRequest};
use serde_json::{Value, json};
use std::sync::Arc;

type Store = Arc<dyn SessionStore>;

const SECRET: &str = "sk-test-compaction";
pub(super) const TASK: &str = "TASK: plan a trip to Lisbon";
/// What the trim marker says, whatever the count.
const TRIMMED: &str = "more bytes of this tool result left out to fit the context";

/// About `tokens` estimated tokens of text after `tag`.
fn pad(tag: &str, tokens: usize) -> String {
    format!("{tag} {}", "x".repeat(tokens * 4))
}

fn openai(mock: &MockProvider) -> Arc<dyn Model> {
    Arc::new(
        OpenAi::builder("gpt-test")
            .api_key(SECRET)
            .base_url(mock.base_url())
            .build()
            .unwrap(),
    )
}

pub(super) fn anthropic(mock: &MockProvider) -> Arc<dyn Model> {
    Arc::new(
        Anthropic::builder("claude-cheap")
            .api_key(SECRET)
            .base_url(mock.base_url())
            .build()
            .unwrap(),
    )
}

use super::context_budget::{call, result};

/// The pinned task, then turns of ~500 tokens each; turn 2's tool result is
/// ~1,000 tokens (trimmed to 50 before anything is summarised).
pub(super) fn history() -> Vec<Message> {
    vec![
        Message::user(TASK),
        Message::assistant(pad("a1", 500)),
        Message::user("u2"),
        call("c2"),
        result("c2", pad("r2", 1_000)),
        Message::assistant("a2"),
        Message::user(pad("u3", 500)),
        Message::assistant("a3"),
    ]
}

pub(super) fn compaction(summariser: Arc<dyn Model>) -> Compaction {
    Compaction::new()
        .model(summariser)
        .keep_tokens(100)
        .tool_result_tokens(50)
        .summary_tokens(333)
}

fn agent(model: Arc<dyn Model>, summariser: Arc<dyn Model>) -> Agent {
    Agent::builder()
        .model(model)
        .prompt("You are terse.")
        .context_budget(800)
        .compaction(compaction(summariser))
        .build()
        .unwrap()
}

pub(super) async fn stored(store: &Store, history: &[Message]) {
    store.create("trip").await.unwrap();
    store.append("trip", 0, history).await.unwrap();
}

/// An OpenAI request's messages.
fn messages(request: &RecordedRequest) -> Vec<Value> {
    request.body["messages"].as_array().unwrap().clone()
}

/// An Anthropic text field (a string, or text blocks) as one string.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

fn summary_message(text: &str) -> Value {
    json!({"role": "user", "content": format!("{SUMMARY_HEADER}\n\n{text}")})
}

/// Summarises a stored conversation, checks the requests and what is
/// stored, then reloads the session through `reopen` (a new store handle on
/// the same database) and goes on with the summary.
async fn summarised_and_reloaded<F, Fut>(store: Store, reopen: F)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Store>,
{
    let main = MockProvider::openai()
        .reply(MockReply::text_reply("Booked.").usage(50, 5))
        .reply(MockReply::text_reply("Still booked.").usage(60, 6))
        .reply(MockReply::text_reply("Hotel too.").usage(70, 7))
        .start()
        .await;
    let cheap = MockProvider::anthropic()
        .reply(MockReply::text_reply("SUMMARY: Lisbon in May, budget 2k.").usage(100, 30))
        .start()
        .await;
    let (model, summariser) = (openai(&main), anthropic(&cheap));
    stored(&store, &history()).await;
    let session = agent(model.clone(), summariser.clone())
        .open_session(store.clone(), "trip")
        .await
        .unwrap();
    let reply = session.send("now").await.unwrap();
    assert_eq!(reply.text, "Booked.");

    // The summary request: the documented prompt, the transcript of the
    // messages after the task up to the kept ones, the tool result trimmed.
    let asked = cheap.requests();
    assert_eq!(asked.len(), 1, "one summary request");
    let body = &asked[0].body;
    assert_eq!(text_of(&body["system"]), COMPACTION_PROMPT);
    assert_eq!(body["max_tokens"], 333);
    assert!(body.get("tools").is_none(), "no tools in a summary request");
    let transcript = body["messages"].to_string();
    assert!(transcript.contains("a1 xxx") && transcript.contains("u3 xxx"));
    assert!(
        transcript.contains(TRIMMED),
        "the tool result was trimmed: {transcript}"
    );
    assert!(
        !transcript.contains(&format!("r2 {}", "x".repeat(300))),
        "…to 50 tokens"
    );
    assert!(
        !transcript.contains(TASK),
        "the task is pinned, not summarised"
    );
    assert!(!transcript.contains("Assistant: a3"), "a3 is kept");

    // The model's request: the task, the summary, the kept messages.
    let sent = main.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        messages(&sent[0]),
        [
            json!({"role": "system", "content": "You are terse."}),
            json!({"role": "user", "content": TASK}),
            summary_message("SUMMARY: Lisbon in May, budget 2k."),
            json!({"role": "assistant", "content": "a3"}),
            json!({"role": "user", "content": "now"}),
        ]
    );

    // Its usage counts in the run's.
    assert_eq!(reply.usage, Usage::new(150, 35));
    assert_eq!(reply.requests.len(), 2);
    assert_eq!(reply.requests[0].model, summariser.name());
    assert_eq!(reply.requests[1].model, model.name());

    // Kept in the store: every original message, then the input, the
    // summary naming what it replaces, the answer.
    let expected_summary = Summary {
        text: "SUMMARY: Lisbon in May, budget 2k.".into(),
        from: 1,
        to: 7,
        model: summariser.name().into(),
    };
    let check = |messages: &[Message]| {
        assert_eq!(messages.len(), history().len() + 3);
        assert_eq!(messages[..history().len()], history()[..], "originals kept");
        assert_eq!(messages[8], Message::user("now"));
        assert_eq!(messages[9].as_summary(), Some(&expected_summary));
        assert_eq!(messages[10], Message::assistant("Booked."));
    };
    check(&store.load("trip").await.unwrap().unwrap().messages);

    // A new handle on the same database loads it, and the next turn goes
    // on from the summary (no new summary: it fits).
    let again = reopen().await;
    check(&again.load("trip").await.unwrap().unwrap().messages);
    let session = agent(model.clone(), summariser)
        .open_session(again.clone(), "trip")
        .await
        .unwrap();
    let reply = session.send("and the hotel?").await.unwrap();
    assert_eq!(reply.text, "Still booked.");
    assert_eq!(cheap.requests().len(), 1, "no second summary");
    assert_eq!(
        messages(&main.requests()[1])[1..],
        [
            json!({"role": "user", "content": TASK}),
            summary_message("SUMMARY: Lisbon in May, budget 2k."),
            json!({"role": "assistant", "content": "a3"}),
            json!({"role": "user", "content": "now"}),
            json!({"role": "assistant", "content": "Booked."}),
            json!({"role": "user", "content": "and the hotel?"}),
        ]
    );

    // An agent without compaction (nor a context budget) on the same
    // session still sends the summary in place of what it replaced: the
    // history holds one.
    let plain = Agent::builder()
        .model(model)
        .prompt("You are terse.")
        .build()
        .unwrap();
    let session = plain.open_session(again, "trip").await.unwrap();
    assert_eq!(session.send("thanks").await.unwrap().text, "Hotel too.");
    let sent = messages(&main.requests()[2]);
    assert_eq!(
        sent[2],
        summary_message("SUMMARY: Lisbon in May, budget 2k.")
    );
    assert_eq!(
        sent.len(),
        9,
        "task, summary, a3 and the five after: {sent:?}"
    );
    assert!(
        !sent.iter().any(|m| m.to_string().contains("a1 xxx")),
        "a replaced message is not sent"
    );
}

macro_rules! store_suite {
    ($backend:ident, $make:expr) => {
        mod $backend {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test]
            #[allow(clippy::redundant_closure_call)]
            async fn a_summary_replaces_old_turns_and_the_session_still_loads() {
                if let Some((store, reopen)) = ($make)().await {
                    super::summarised_and_reloaded(store, reopen).await;
                }
            }
        }
    };
}

store_suite!(memory, || async {
    let store: Store = Arc::new(MemoryStore::new());
    let same = store.clone();
    Some((store, move || async move { same }))
});

#[cfg(feature = "sqlite")]
store_suite!(sqlite, || async {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    std::mem::forget(dir);
    let store: Store = Arc::new(lousho::session::SqliteStore::open(&path).await.unwrap());
    Some((store, move || async move {
        Arc::new(lousho::session::SqliteStore::open(&path).await.unwrap()) as Store
    }))
});

#[cfg(feature = "postgres")]
store_suite!(postgres, || async {
    let server = lousho_testkit::postgres::PgServer::shared()?;
    let url = server.create_database();
    let store: Store = Arc::new(lousho::session::PostgresStore::connect(&url).await.unwrap());
    Some((store, move || async move {
        Arc::new(lousho::session::PostgresStore::connect(&url).await.unwrap()) as Store
    }))
});

#[tokio::test]
async fn a_conversation_that_fits_once_tool_results_are_trimmed_is_not_summarised() {
    let main = MockProvider::openai()
        .reply(MockReply::text_reply("ok"))
        .start()
        .await;
    let cheap = MockProvider::anthropic().start().await;
    let store: Store = Arc::new(MemoryStore::new());
    stored(
        &store,
        &[
            Message::user(TASK),
            call("c1"),
            result("c1", pad("r1", 1_000)),
            Message::assistant("a1"),
        ],
    )
    .await;
    let session = agent(openai(&main), anthropic(&cheap))
        .open_session(store.clone(), "trip")
        .await
        .unwrap();
    session.send("now").await.unwrap();
    assert!(cheap.requests().is_empty(), "no summary needed");
    let sent = messages(&main.requests()[0]);
    assert_eq!(sent[1], json!({"role": "user", "content": TASK}));
    let tool = sent[3]["content"].as_str().unwrap();
    assert!(tool.starts_with("r1 xxx"), "{tool}");
    assert!(tool.contains(TRIMMED), "{tool}");
    assert!(tool.len() < 400, "trimmed to 50 tokens and the marker");
    // Only what was sent shrank.
    let kept = store.load("trip").await.unwrap().unwrap().messages;
    assert_eq!(kept[2], result("c1", pad("r1", 1_000)));
    assert!(kept.iter().all(|m| m.as_summary().is_none()));
}

#[tokio::test]
async fn a_failing_summariser_falls_back_to_leaving_the_oldest_turns_out() {
    let main = MockProvider::openai()
        .reply(MockReply::text_reply("Booked."))
        .start()
        .await;
    let cheap = MockProvider::anthropic()
        .reply(MockReply::error(
            400,
            "invalid_request_error",
            "mock: no summaries today",
        ))
        .start()
        .await;
    let store: Store = Arc::new(MemoryStore::new());
    stored(&store, &history()).await;
    let session = agent(openai(&main), anthropic(&cheap))
        .open_session(store.clone(), "trip")
        .await
        .unwrap();
    let reply = session.send("now").await.unwrap();
    assert_eq!(reply.text, "Booked.", "the run does not fail");
    assert_eq!(cheap.requests().len(), 1, "the summary was asked for");
    // Today's cut: the newest whole turns that fit (tool results trimmed).
    let sent = messages(&main.requests()[0]);
    assert_eq!(sent[1], json!({"role": "user", "content": "u2"}));
    assert!(!json!(sent).to_string().contains(SUMMARY_HEADER));
    assert!(json!(sent).to_string().contains(TRIMMED));
    let kept = store.load("trip").await.unwrap().unwrap().messages;
    assert_eq!(kept.len(), history().len() + 2, "no summary stored");
    assert!(kept.iter().all(|m| m.as_summary().is_none()));
}

#[tokio::test]
async fn a_long_tool_loop_is_summarised_between_rounds_keeping_the_task_and_the_pairs() {
    // One task, four tool rounds of ~400 tokens each: the conversation
    // passes the budget inside the run, more than once.
    let main = MockProvider::openai()
        .replies((1..=4).map(|i| MockReply::new().tool_call(&format!("c{i}"), "lookup", json!({}))))
        .reply(MockReply::text_reply("done"))
        .start()
        .await;
    let cheap = MockProvider::anthropic()
        .replies((1..=5).map(|i| MockReply::text_reply(&format!("SUMMARY-{i}"))))
        .start()
        .await;
    let lookup = DefinedTool::from_json(
        "lookup",
        "Looks something up",
        json!({"type": "object"}),
        |_: Value, _: lousho::ToolContext| async move { ToolOutput::text(pad("found", 400)) },
    );
    let agent = Agent::builder()
        .model(openai(&main))
        .tool(lookup)
        .context_budget(700)
        .compaction(Compaction::new().model(anthropic(&cheap)).keep_tokens(200))
        .build()
        .unwrap();
    let reply = agent.send(TASK).await.unwrap();
    assert_eq!(reply.text, "done");

    let summaries = cheap.requests();
    assert!(!summaries.is_empty(), "the loop was summarised");
    if summaries.len() > 1 {
        assert!(
            summaries[1].body["messages"]
                .to_string()
                .contains("Earlier summary:\\nSUMMARY-1"),
            "a later summary builds on the earlier one"
        );
    }
    // Every request starts with the task; once summarised, the summary
    // follows it; the mock accepted every request (no call split from its
    // result).
    let sent = main.requests();
    assert_eq!(sent.len(), 5);
    for request in &sent {
        assert_eq!(
            messages(request)[0],
            json!({"role": "user", "content": TASK})
        );
    }
    let last = messages(&sent[4]);
    let n = summaries.len();
    assert_eq!(last[1], summary_message(&format!("SUMMARY-{n}")));
    // The reply keeps every message and the summaries.
    let kept: Vec<&Summary> = reply
        .messages
        .iter()
        .filter_map(Message::as_summary)
        .collect();
    assert_eq!(kept.len(), n);
    assert!(
        kept.iter().all(|s| s.from == 1),
        "the task is never summarised"
    );
    assert_eq!(reply.tool_calls.len(), 4);
}

#[tokio::test]
async fn the_mocks_refuse_a_tool_result_whose_call_was_left_out() {
    // What compaction must never send: checked on both wires.
    let orphan = lousho::model::ModelRequest::new(vec![
        Message::user("hi"),
        result("c9", "lost".into()),
        Message::user("and?"),
    ]);
    for (mock, model) in [
        {
            let m = MockProvider::openai()
                .reply(MockReply::text_reply("no"))
                .start()
                .await;
            let model = openai(&m);
            (m, model)
        },
        {
            let m = MockProvider::anthropic()
                .reply(MockReply::text_reply("no"))
                .start()
                .await;
            let model = anthropic(&m);
            (m, model)
        },
    ] {
        let mut stream = model.stream(&orphan);
        let mut failed = false;
        while let Some(event) = futures::StreamExt::next(&mut stream).await {
            failed |= event.is_err();
        }
        assert!(failed, "{}: an orphaned tool result is a 400", model.name());
        assert_eq!(mock.requests().len(), 1);
    }
}

#[test]
fn compaction_needs_a_context_budget() {
    let e = Agent::builder()
        .model("test")
        .compaction(Compaction::new())
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("context budget"), "{e}");
    let e = Agent::builder()
        .model("test")
        .context_budget(100)
        .compaction(Compaction::new().keep_tokens(0))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("keep_tokens"), "{e}");
}

#[cfg(feature = "spec")]
#[test]
fn a_spec_sets_compaction() {
    use lousho::spec::SpecLoader;
    let load = |text: &str| SpecLoader::new().without_env().parse(text, "agent.yaml");
    let spec = load(
        "model: test\ncontextBudget: 1000\ncompaction:\n  model: openai/gpt-4o-mini\n  keepTokens: 200\n  toolResultTokens: 100\n  summaryTokens: 300\n",
    )
    .unwrap();
    let c = format!("{:?}", spec.compaction.unwrap());
    assert!(
        c.contains("gpt-4o-mini") && c.contains("200") && c.contains("300"),
        "{c}"
    );
    let spec = load("model: test\ncontextBudget: 1000\ncompaction: {}\n").unwrap();
    assert!(spec.compaction.is_some());

    let e = load("model: test\ncompaction: {}\n").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("compaction"));
    assert!(e.to_string().contains("contextBudget"), "{e}");
    let e = load("model: test\ncontextBudget: 9\ncompaction:\n  keepTokens: 0\n").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("compaction.keepTokens"));
    assert_eq!(e.line, Some(4));
    let e = load("model: test\ncontextBudget: 9\ncompaction:\n  model: nope/x\n").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("compaction.model"));
}
