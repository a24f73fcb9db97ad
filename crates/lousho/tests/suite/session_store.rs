//! One behaviour suite for every session store: in memory, SQLite (feature
//! `sqlite`) and PostgreSQL (feature `postgres`, against a real server the
//! testkit starts; skipped when PostgreSQL is not installed, a failure under
//! CI=true).

use futures::StreamExt;
use lousho::agent::RunStatus;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::model::{Message, ToolCall, ToolResult};
use lousho::session::{
    LeaseSettings, LeaseState, MemoryStore, PausedRun, SessionStore, StoreError, TaskRequest,
    TaskRequests,
};
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentEvent, RunState, ToolOutput};
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

type Store = Arc<dyn SessionStore>;

/// Runs every behaviour against the stores `$make` (an async expression
/// giving `Option<Store>`; `None` skips) makes, one fresh store per test.
macro_rules! behaviour_suite {
    ($backend:ident, $make:expr) => {
        mod $backend {
            #[allow(unused_imports)]
            use super::*;

            async fn store() -> Option<Store> {
                $make
            }

            behaviour_suite!(@tests
                a_new_session_is_empty_and_its_id_taken,
                appended_messages_load_back_in_order_with_the_version,
                a_stale_append_conflicts_and_writes_nothing,
                an_append_to_a_missing_session_is_not_found,
                list_shows_the_most_recently_updated_first,
                delete_removes_the_messages_and_the_paused_runs,
                paused_runs_are_saved_replaced_loaded_and_deleted,
                bad_ids_are_refused,
                concurrent_opens_make_one_session,
                concurrent_writers_retrying_on_conflict_lose_nothing,
                a_stored_session_continues_in_a_new_agent,
                a_run_of_a_stale_session_continues_after_the_stored_turns,
                a_session_lease_is_one_holders_until_given_back_or_run_out,
                two_runs_of_one_session_take_turns,
                a_paused_turn_of_a_stored_session_is_resumed_from_the_store,
                counters_count_to_their_limit_in_a_window_then_start_again,
                shared_tasks_are_written_read_asked_and_taken,
                the_requests_of_many_tasks_are_taken_in_one_call,
            );
        }
    };
    (@tests $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                if let Some(store) = store().await {
                    super::$name(store).await;
                }
            }
        )*
    };
}

behaviour_suite!(memory, Some(Arc::new(MemoryStore::new()) as Store));

#[cfg(feature = "sqlite")]
behaviour_suite!(sqlite, {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("sessions.db");
    // The folder lives as long as the test binary (the store holds the file).
    std::mem::forget(dir);
    Some(Arc::new(lousho::session::SqliteStore::open(path).await.unwrap()) as Store)
});

#[cfg(feature = "postgres")]
behaviour_suite!(postgres, {
    let server = lousho_testkit::postgres::PgServer::shared()?;
    let url = server.create_database();
    Some(Arc::new(lousho::session::PostgresStore::connect(&url).await.unwrap()) as Store)
});

/// Messages of every kind: text, tool calls, tool results.
fn sample_messages() -> Vec<Message> {
    let call = ToolCall {
        id: "call-1".into(),
        name: "lookup".into(),
        arguments: json!({"path": "a.txt", "nested": {"n": [1, 2.5, null]}}),
    };
    vec![
        Message::user("hello ünïcode 🎉"),
        Message {
            role: lousho::model::Role::Assistant,
            parts: vec![
                lousho::model::Part::Text {
                    text: "Let me look.".into(),
                },
                lousho::model::Part::ToolCall(call.clone()),
            ],
        },
        Message::tool_results([ToolResult {
            call_id: call.id,
            name: call.name,
            output: ToolOutput::text("found it"),
        }]),
        Message::assistant("Done."),
    ]
}

async fn a_new_session_is_empty_and_its_id_taken(store: Store) {
    assert!(store.load("s").await.unwrap().is_none());
    let info = store.create("s").await.unwrap();
    assert_eq!((info.id.as_str(), info.version), ("s", 0));
    let loaded = store.load("s").await.unwrap().unwrap();
    assert_eq!(loaded.info.version, 0);
    assert!(loaded.messages.is_empty());
    let again = store.create("s").await.unwrap_err();
    assert!(matches!(again, StoreError::AlreadyExists { ref session } if session == "s"));
}

async fn appended_messages_load_back_in_order_with_the_version(store: Store) {
    store.create("s").await.unwrap();
    let all = sample_messages();
    assert_eq!(store.append("s", 0, &all[..1]).await.unwrap(), 1);
    assert_eq!(store.append("s", 1, &all[1..]).await.unwrap(), 4);
    assert_eq!(store.append("s", 4, &[]).await.unwrap(), 4);
    let loaded = store.load("s").await.unwrap().unwrap();
    assert_eq!(loaded.info.version, 4);
    assert_eq!(loaded.messages, all);
    assert!(loaded.info.updated_at >= loaded.info.created_at);
}

async fn a_stale_append_conflicts_and_writes_nothing(store: Store) {
    store.create("s").await.unwrap();
    store.append("s", 0, &sample_messages()[..2]).await.unwrap();
    let err = store
        .append("s", 1, &[Message::user("late")])
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
    assert!(matches!(
        err,
        StoreError::Conflict {
            expected: 1,
            found: 2,
            ..
        }
    ));
    let err = store
        .append("s", 3, &[Message::user("early")])
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        StoreError::Conflict {
            expected: 3,
            found: 2,
            ..
        }
    ));
    let loaded = store.load("s").await.unwrap().unwrap();
    assert_eq!(loaded.messages, sample_messages()[..2]);
}

async fn an_append_to_a_missing_session_is_not_found(store: Store) {
    let err = store
        .append("nope", 0, &[Message::user("x")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { ref session } if session == "nope"));
    assert!(store.load("nope").await.unwrap().is_none());
}

async fn list_shows_the_most_recently_updated_first(store: Store) {
    assert!(store.list().await.unwrap().is_empty());
    store.create("a").await.unwrap();
    store.create("b").await.unwrap();
    // Timestamps have millisecond precision: make "a" the newer one.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    store.append("a", 0, &[Message::user("x")]).await.unwrap();
    let list = store.list().await.unwrap();
    let ids: Vec<_> = list.iter().map(|s| (s.id.as_str(), s.version)).collect();
    assert_eq!(ids, [("a", 1), ("b", 0)]);
}

async fn delete_removes_the_messages_and_the_paused_runs(store: Store) {
    store.create("s").await.unwrap();
    store.append("s", 0, &sample_messages()).await.unwrap();
    let state = paused_state().await;
    store
        .save_run("r1", &PausedRun::new(state.clone()).session("s"))
        .await
        .unwrap();
    store.save_run("r2", &PausedRun::new(state)).await.unwrap();
    assert!(store.delete("s").await.unwrap());
    assert!(!store.delete("s").await.unwrap());
    assert!(store.load("s").await.unwrap().is_none());
    assert!(
        store.load_run("r1").await.unwrap().is_none(),
        "the session's run went with it"
    );
    assert!(
        store.load_run("r2").await.unwrap().is_some(),
        "another run stays"
    );
    // A new session of that name starts empty.
    store.create("s").await.unwrap();
    store.append("s", 0, &[Message::user("new")]).await.unwrap();
    let loaded = store.load("s").await.unwrap().unwrap();
    assert_eq!(loaded.messages, [Message::user("new")]);
}

async fn paused_runs_are_saved_replaced_loaded_and_deleted(store: Store) {
    let state = paused_state().await;
    assert!(store.load_run("r").await.unwrap().is_none());
    let run = PausedRun::new(state.clone()).context(json!({"spec": "/a.yaml"}));
    store.save_run("r", &run).await.unwrap();
    assert_eq!(store.load_run("r").await.unwrap().unwrap(), run);
    let replaced = PausedRun::new(state).session("s").context(json!({"n": 2}));
    store.save_run("r", &replaced).await.unwrap();
    let loaded = store.load_run("r").await.unwrap().unwrap();
    assert_eq!(loaded, replaced);
    assert_eq!(loaded.state.pending().count(), 1);
    assert!(store.delete_run("r").await.unwrap());
    assert!(!store.delete_run("r").await.unwrap());
    assert!(store.load_run("r").await.unwrap().is_none());
}

async fn bad_ids_are_refused(store: Store) {
    let long = "x".repeat(257);
    for bad in ["", "a\nb", long.as_str()] {
        let err = store.create(bad).await.unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidId { .. }),
            "{bad:?}: {err}"
        );
    }
    let err = store
        .save_run("", &PausedRun::new(paused_state().await))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidId { .. }));
    // 256 characters is fine.
    store.create(&"é".repeat(256)).await.unwrap();
}

async fn concurrent_opens_make_one_session(store: Store) {
    let opens = (0..8).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.open("shared").await })
    });
    for open in futures::future::join_all(opens).await {
        assert_eq!(open.unwrap().unwrap().info.version, 0);
    }
    assert_eq!(store.list().await.unwrap().len(), 1);
}

/// Appends one message, reloading and retrying on a conflict.
async fn append_retrying(store: &Store, session: &str, message: Message) -> usize {
    let mut conflicts = 0;
    loop {
        let version = store.load(session).await.unwrap().unwrap().info.version;
        match store
            .append(session, version, std::slice::from_ref(&message))
            .await
        {
            Ok(v) => {
                assert_eq!(v, version + 1);
                return conflicts;
            }
            Err(e) if e.is_conflict() => conflicts += 1,
            Err(e) => panic!("append failed: {e}"),
        }
    }
}

async fn concurrent_writers_retrying_on_conflict_lose_nothing(store: Store) {
    store.create("s").await.unwrap();
    let writers = (0..4).map(|w| {
        let store = store.clone();
        tokio::spawn(async move {
            let mut conflicts = 0;
            for i in 0..25 {
                conflicts += append_retrying(&store, "s", Message::user(format!("{w}-{i}"))).await;
            }
            conflicts
        })
    });
    futures::future::join_all(writers).await;
    let loaded = store.load("s").await.unwrap().unwrap();
    assert_eq!(loaded.info.version, 100);
    let texts: Vec<String> = loaded.messages.iter().map(Message::text).collect();
    let unique: HashSet<&String> = texts.iter().collect();
    assert_eq!(unique.len(), 100, "no message lost or duplicated");
    for w in 0..4 {
        let mine: Vec<usize> = texts
            .iter()
            .filter_map(|t| t.strip_prefix(&format!("{w}-")))
            .map(|i| i.parse().unwrap())
            .collect();
        assert_eq!(
            mine,
            (0..25).collect::<Vec<_>>(),
            "each writer's order kept"
        );
    }
}

fn scripted(turns: Vec<ScriptedTurn>) -> (Agent, ScriptedModel) {
    let model = ScriptedModel::new(turns);
    let agent = Agent::builder()
        .model(model.clone())
        .prompt("You remember.")
        .build()
        .unwrap();
    (agent, model)
}

async fn a_stored_session_continues_in_a_new_agent(store: Store) {
    let (agent, _) = scripted(vec![ScriptedTurn::text("Hi Ada.")]);
    let session = agent.open_session(store.clone(), "chat").await.unwrap();
    assert_eq!(session.id(), Some("chat"));
    session.send("I am Ada.").await.unwrap();
    assert_eq!(store.load("chat").await.unwrap().unwrap().info.version, 2);

    // "Another process": a new agent, the same store.
    let (agent, model) = scripted(vec![ScriptedTurn::text("You are Ada.")]);
    let session = agent.open_session(store.clone(), "chat").await.unwrap();
    assert_eq!(session.history().len(), 2);
    let reply = session.send("Who am I?").await.unwrap();
    assert_eq!(reply.text, "You are Ada.");
    let sent = model.last_request().unwrap();
    assert_eq!(
        sent.messages,
        [
            Message::user("I am Ada."),
            Message::assistant("Hi Ada."),
            Message::user("Who am I?"),
        ],
        "the model saw the stored conversation"
    );
    let loaded = store.load("chat").await.unwrap().unwrap();
    assert_eq!(loaded.messages.len(), 4);
    assert_eq!(loaded.messages[3], Message::assistant("You are Ada."));
    assert_eq!(session.history(), loaded.messages);
}

async fn a_run_of_a_stale_session_continues_after_the_stored_turns(store: Store) {
    let (agent, model) = scripted(vec![ScriptedTurn::text("one"), ScriptedTurn::text("two")]);
    let first = agent.open_session(store.clone(), "chat").await.unwrap();
    let second = agent.open_session(store.clone(), "chat").await.unwrap();
    first.send("from first").await.unwrap();
    // `second` read the session before the first turn: its run reloads it
    // (under the lease) instead of failing with a conflict.
    second.send("from second").await.unwrap();
    let expected = [
        Message::user("from first"),
        Message::assistant("one"),
        Message::user("from second"),
        Message::assistant("two"),
    ];
    assert_eq!(model.last_request().unwrap().messages, expected[..3]);
    let loaded = store.load("chat").await.unwrap().unwrap();
    assert_eq!(loaded.messages, expected);
    assert_eq!(second.history(), expected);
    // Appends outside runs keep their version checks.
    let err = store
        .append("chat", 2, &[Message::user("stale")])
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
}

async fn a_session_lease_is_one_holders_until_given_back_or_run_out(store: Store) {
    let long = Duration::from_secs(600);
    let acquired = |s: LeaseState| matches!(s, LeaseState::Acquired);
    assert!(acquired(store.acquire_lease("s", "a", long).await.unwrap()));
    match store.acquire_lease("s", "b", long).await.unwrap() {
        LeaseState::Held { holder, expires_in } => {
            assert_eq!(holder, "a");
            assert!(expires_in <= long && expires_in > Duration::ZERO);
        }
        other => panic!("b took a's lease: {other:?}"),
    }
    assert!(
        acquired(store.acquire_lease("s", "a", long).await.unwrap()),
        "the holder takes it again"
    );
    assert!(store.renew_lease("s", "a", long).await.unwrap());
    assert!(!store.renew_lease("s", "b", long).await.unwrap());
    store.release_lease("s", "b").await.unwrap();
    assert!(!acquired(
        store.acquire_lease("s", "b", long).await.unwrap()
    ));
    assert!(
        acquired(store.acquire_lease("other", "b", long).await.unwrap()),
        "leases are per session"
    );
    store.release_lease("s", "a").await.unwrap();
    assert!(acquired(store.acquire_lease("s", "b", long).await.unwrap()));

    // A holder that stops renewing (crashed) loses the lease once it runs out.
    assert!(acquired(
        store
            .acquire_lease("t", "crashed", Duration::from_millis(50))
            .await
            .unwrap()
    ));
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut took_over = false;
    while Instant::now() < deadline && !took_over {
        took_over = acquired(store.acquire_lease("t", "next", long).await.unwrap());
        if !took_over {
            tokio::task::yield_now().await;
        }
    }
    assert!(took_over, "the lease never ran out");
    assert!(!store.renew_lease("t", "crashed", long).await.unwrap());
    assert!(store.delete("t").await.unwrap() || store.load("t").await.unwrap().is_none());
}

/// The counters of per-caller limits (`count_in_window`): counted up to the
/// limit in one window (concurrent counts all counted, none past it), then
/// from 0 again once the window ended.
async fn counters_count_to_their_limit_in_a_window_then_start_again(store: Store) {
    let long = Duration::from_secs(600);
    let count = |key: &'static str, window, amount, limit| {
        let store = store.clone();
        async move {
            store
                .count_in_window(key, window, amount, limit)
                .await
                .unwrap()
                .expect("this store keeps counters")
        }
    };
    let first = count("k", long, 1, 2).await;
    assert!(first.added && first.count == 1, "{first:?}");
    assert!(first.resets_in <= long && first.resets_in > Duration::ZERO);
    assert_eq!(count("k", long, 1, 2).await.count, 2);
    let over = count("k", long, 1, 2).await;
    assert!(!over.added && over.count == 2, "{over:?}");
    assert!(over.resets_in > Duration::ZERO, "{over:?}");
    // A check without counting, and an add with no limit.
    assert!(!count("k", long, 0, 2).await.added);
    assert!(count("k", long, 0, 3).await.added);
    assert_eq!(count("k", long, 40, u64::MAX).await.count, 42);
    assert_eq!(
        count("other", long, 1, 2).await.count,
        1,
        "counters are per key"
    );

    // Twenty at once against a limit of ten: ten counted.
    let all = (0..20).map(|_| tokio::spawn(count("race", long, 1, 10)));
    let added = futures::future::join_all(all)
        .await
        .into_iter()
        .filter(|c| c.as_ref().unwrap().added)
        .count();
    assert_eq!(added, 10);
    assert_eq!(count("race", long, 0, u64::MAX).await.count, 10);

    // Once its window ended a counter starts from 0 again.
    let short = Duration::from_millis(50);
    assert!(count("short", short, 1, 1).await.added);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let c = count("short", short, 1, 1).await;
        if c.added {
            assert_eq!(c.count, 1, "{c:?}");
            break;
        }
        assert!(Instant::now() < deadline, "the window never ended");
        tokio::task::yield_now().await;
    }
}

/// Served tasks kept for replicas (`task_write` and the methods beside
/// it): the state is replaced and the owner kept; cancels and answers left
/// by other replicas are taken (answers once); a task past its keep is
/// unknown.
async fn shared_tasks_are_written_read_asked_and_taken(store: Store) {
    let long = Duration::from_secs(600);
    assert!(store.task_read("t1").await.unwrap().is_none());
    assert!(
        !store
            .task_request("t1", &TaskRequest::Cancel)
            .await
            .unwrap(),
        "an unknown task cannot be asked"
    );
    let working = json!({"taskId": "t1", "status": "working"});
    store
        .task_write("t1", Some("alice"), &working, false, long)
        .await
        .unwrap();
    let read = store.task_read("t1").await.unwrap().expect("kept");
    assert_eq!(read.owner.as_deref(), Some("alice"));
    assert_eq!(read.state, working);
    assert!(!read.ended);
    assert!(read.written_ago < long, "{read:?}");

    // Nothing asked yet; then two replicas' answers, then a cancel.
    let asked = store.task_take_requests("t1").await.unwrap();
    assert!(!asked.cancel && asked.answers.is_empty(), "{asked:?}");
    let answers = |k: &str, v| {
        let mut map = serde_json::Map::new();
        map.insert(k.to_owned(), v);
        TaskRequest::Answers(map)
    };
    assert!(
        store
            .task_request("t1", &answers("q1", json!({"action": "accept"})))
            .await
            .unwrap()
    );
    assert!(
        store
            .task_request("t1", &answers("q2", json!(2)))
            .await
            .unwrap()
    );
    let asked = store.task_take_requests("t1").await.unwrap();
    assert!(!asked.cancel, "{asked:?}");
    assert_eq!(asked.answers.get("q1"), Some(&json!({"action": "accept"})));
    assert_eq!(asked.answers.get("q2"), Some(&json!(2)));
    assert!(
        store
            .task_take_requests("t1")
            .await
            .unwrap()
            .answers
            .is_empty(),
        "answers are taken once"
    );
    assert!(
        store
            .task_request("t1", &TaskRequest::Cancel)
            .await
            .unwrap()
    );
    assert!(store.task_take_requests("t1").await.unwrap().cancel);
    assert!(
        store.task_take_requests("t1").await.unwrap().cancel,
        "a cancel stays asked"
    );

    // Its end replaces its state; a later write keeps the first owner.
    let done = json!({"taskId": "t1", "status": "completed", "result": {"content": []}});
    store
        .task_write("t1", None, &done, true, long)
        .await
        .unwrap();
    let read = store.task_read("t1").await.unwrap().expect("kept");
    assert!(read.ended);
    assert_eq!(read.state, done);
    assert_eq!(read.owner.as_deref(), Some("alice"));

    // A task no longer kept is unknown, and cannot be asked.
    store
        .task_write("t2", None, &working, false, Duration::ZERO)
        .await
        .unwrap();
    assert!(store.task_read("t2").await.unwrap().is_none());
    assert!(
        !store
            .task_request("t2", &TaskRequest::Cancel)
            .await
            .unwrap()
    );
    assert!(
        store.task_read("t1").await.unwrap().is_some(),
        "others stay"
    );
}

async fn two_runs_of_one_session_take_turns(store: Store) {
    // The first run's tool waits for the gate; the second run waits for the
    // first run's lease meanwhile.
    let gate = Arc::new(tokio::sync::Notify::new());
    let opened = gate.clone();
    let wait = DefinedTool::from_json(
        "wait",
        "Waits",
        json!({"type": "object"}),
        move |_input: serde_json::Value, _ctx: lousho::ToolContext| {
            let gate = opened.clone();
            async move {
                gate.notified().await;
                ToolOutput::text("waited")
            }
        },
    );
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_call("wait", json!({})),
        ScriptedTurn::text("first done"),
        ScriptedTurn::text("second done"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .tool(wait)
        .build()
        .unwrap();
    let lease = LeaseSettings::new().wait(Duration::from_secs(600));
    let one = agent
        .open_session(store.clone(), "shared")
        .await
        .unwrap()
        .with_lease(lease);
    let two = agent
        .open_session(store.clone(), "shared")
        .await
        .unwrap()
        .with_lease(lease);
    let mut first = one.send("first").stream();
    loop {
        match first.next().await.unwrap().unwrap() {
            AgentEvent::ToolCallStarted(_) => break,
            _ => continue,
        }
    }
    let mut second = two.send("second").stream();
    match second.next().await.unwrap().unwrap() {
        AgentEvent::SessionBusy { session, holder } => {
            assert_eq!(session, "shared");
            assert!(!holder.is_empty());
        }
        other => panic!("the second run did not wait: {other:?}"),
    }
    gate.notify_one();
    let first = reply_of(first).await;
    let second = reply_of(second).await;
    assert_eq!(
        (first.text.as_str(), second.text.as_str()),
        ("first done", "second done")
    );
    let loaded = store.load("shared").await.unwrap().unwrap();
    let texts: Vec<String> = loaded.messages.iter().map(Message::text).collect();
    assert_eq!(
        texts,
        ["first", "", "", "first done", "second", "second done"],
        "each run's turn in one piece"
    );
    assert_eq!(
        model.last_request().unwrap().messages.len(),
        5,
        "the second run saw the first one's turn"
    );
}

/// The reply at the end of a run's events.
async fn reply_of(mut events: lousho::agent::AgentStream) -> lousho::Reply {
    while let Some(event) = events.next().await {
        if let AgentEvent::Done(reply) = event.unwrap() {
            return *reply;
        }
    }
    panic!("the run ended without a reply")
}

/// An agent whose `delete` tool needs approval.
fn approving_agent(turns: Vec<ScriptedTurn>) -> Agent {
    let delete = DefinedTool::from_json(
        "delete",
        "Deletes a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        |_input: serde_json::Value, _ctx: lousho::ToolContext| async move {
            ToolOutput::text("deleted")
        },
    )
    .needs_approval(true);
    Agent::builder()
        .model(ScriptedModel::new(turns))
        .tool(delete)
        .build()
        .unwrap()
}

async fn paused_state() -> RunState {
    let agent = approving_agent(vec![ScriptedTurn::tool_call(
        "delete",
        json!({"path": "a"}),
    )]);
    let reply = agent.send("delete a").await.unwrap();
    assert_eq!(reply.status, RunStatus::Interrupted);
    reply.state.unwrap()
}

async fn a_paused_turn_of_a_stored_session_is_resumed_from_the_store(store: Store) {
    let agent = approving_agent(vec![ScriptedTurn::tool_call(
        "delete",
        json!({"path": "a"}),
    )]);
    let session = agent.open_session(store.clone(), "chat").await.unwrap();
    let reply = session.send("delete a").await.unwrap();
    assert_eq!(reply.status, RunStatus::Interrupted);
    assert_eq!(
        store.load("chat").await.unwrap().unwrap().info.version,
        0,
        "a paused turn is not stored as history"
    );
    let call_id = reply.pending[0].call_id.clone();
    store
        .save_run(
            "run-1",
            &PausedRun::new(reply.state.unwrap()).session("chat"),
        )
        .await
        .unwrap();

    // "Another process": the run and its session read back from the store.
    let agent = approving_agent(vec![ScriptedTurn::text("Deleted.")]);
    let paused = store.load_run("run-1").await.unwrap().unwrap();
    let session = agent
        .open_session(store.clone(), paused.session.clone().unwrap())
        .await
        .unwrap();
    let reply = session
        .resume(
            paused.state,
            lousho::policy::Decisions::new().approve(&call_id),
        )
        .await
        .unwrap();
    assert_eq!(reply.text, "Deleted.");
    let loaded = store.load("chat").await.unwrap().unwrap();
    assert_eq!(loaded.info.version, 4, "user, call, result, answer");
    assert_eq!(loaded.messages[0], Message::user("delete a"));
    assert_eq!(loaded.messages[3], Message::assistant("Deleted."));
}

/// The PostgreSQL store's pool: a call waiting on the database (here for a
/// row another client holds) does not hold up the store's other calls, as it
/// did when the store had one connection for all of them.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_call_waiting_on_a_lock_does_not_hold_up_the_others() {
    let Some(server) = lousho_testkit::postgres::PgServer::shared() else {
        return;
    };
    let url = server.create_database();
    let store: Store = Arc::new(lousho::session::PostgresStore::connect(&url).await.unwrap());
    store
        .task_write(
            "t",
            None,
            &json!({"status": "working"}),
            false,
            Duration::from_secs(600),
        )
        .await
        .unwrap();
    store.create("s").await.unwrap();
    // Another client holds the task's row.
    let (mut raw, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let tx = raw.transaction().await.unwrap();
    tx.execute("SELECT 1 FROM lousho_tasks WHERE id = 't' FOR UPDATE", &[])
        .await
        .unwrap();
    // A cancel for the task waits for the row, on one of the store's connections.
    let blocked = tokio::spawn({
        let store = store.clone();
        async move { store.task_request("t", &TaskRequest::Cancel).await }
    });
    let (watch, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let waiting: i64 = watch
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if waiting == 1 {
            break;
        }
        assert!(!blocked.is_finished(), "{:?}", blocked.await);
        assert!(
            Instant::now() < deadline,
            "the cancel never waited for the row"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Meanwhile the store's other calls go on (the bound only keeps a
    // regression from hanging the suite: with one connection they wait for
    // the row's holder, which waits for them).
    let other = async {
        store.append("s", 0, &[Message::user("hi")]).await.unwrap();
        store.load("s").await.unwrap().unwrap()
    };
    let loaded = tokio::time::timeout(Duration::from_secs(60), other)
        .await
        .expect("the store's other calls waited behind the blocked one");
    assert_eq!(loaded.messages.len(), 1);
    assert!(!blocked.is_finished());
    tx.commit().await.unwrap();
    assert!(blocked.await.unwrap().unwrap());
    assert!(store.task_take_requests("t").await.unwrap().cancel);
}

async fn the_requests_of_many_tasks_are_taken_in_one_call(store: Store) {
    let long = Duration::from_secs(600);
    let ids: Vec<String> = (0..50).map(|i| format!("many-{i}")).collect();
    for id in &ids {
        store
            .task_write(id, None, &json!({"status": "working"}), false, long)
            .await
            .unwrap();
    }
    assert!(store.task_take_requests_of(&ids).await.unwrap().is_empty());
    let mut answers = serde_json::Map::new();
    answers.insert("q".to_owned(), json!("yes"));
    store
        .task_request("many-3", &TaskRequest::Answers(answers.clone()))
        .await
        .unwrap();
    store
        .task_request("many-40", &TaskRequest::Cancel)
        .await
        .unwrap();
    store
        .task_request("many-41", &TaskRequest::Cancel)
        .await
        .unwrap();
    store
        .task_request("many-41", &TaskRequest::Answers(answers.clone()))
        .await
        .unwrap();
    // Unknown ids are no error; they have nothing asked.
    let mut asking = ids.clone();
    asking.push("unknown".to_owned());
    let mut asked = store.task_take_requests_of(&asking).await.unwrap();
    asked.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        asked,
        [
            (
                "many-3".to_owned(),
                TaskRequests::new(false, answers.clone())
            ),
            (
                "many-40".to_owned(),
                TaskRequests::new(true, Default::default())
            ),
            ("many-41".to_owned(), TaskRequests::new(true, answers)),
        ]
    );
    // Answers are taken; a cancel stays asked.
    let again = store.task_take_requests_of(&ids).await.unwrap();
    let mut again: Vec<_> = again
        .into_iter()
        .map(|(id, r)| (id, r.cancel, r.answers.len()))
        .collect();
    again.sort();
    assert_eq!(
        again,
        [
            ("many-40".to_owned(), true, 0),
            ("many-41".to_owned(), true, 0)
        ]
    );
}

/// TLS to PostgreSQL: the connection string's `sslmode` asks for it, the
/// server's certificate is verified (against `sslrootcert` when given, else
/// the system's authorities, which do not know the test's), and without
/// `sslmode` the store connects as before, in plain text.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_over_tls_verifies_the_server_certificate() {
    let Some(bin) = lousho_testkit::postgres::find_bin() else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "PostgreSQL is not installed"
        );
        return;
    };
    let server = lousho_testkit::postgres::PgServer::start_tls(&bin).unwrap();
    let conn = server.create_database();
    let ca = server.ca_certificate();
    let verified = lousho::session::PostgresStore::connect(&format!(
        "{conn} application_name=verified sslmode=verify-full sslrootcert={}",
        ca.display()
    ))
    .await
    .unwrap();
    verified.create("s").await.unwrap();
    let plain = lousho::session::PostgresStore::connect(&format!("{conn} application_name=plain"))
        .await
        .unwrap();
    assert!(plain.load("s").await.unwrap().is_some());
    // What the server says of each store's (pooled, still open) connection.
    let (admin, connection) = tokio_postgres::connect(&conn, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let rows = admin
        .query(
            "SELECT a.application_name, s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
             WHERE a.datname = current_database() AND a.application_name IN ('verified', 'plain')
             ORDER BY 1",
            &[],
        )
        .await
        .unwrap();
    let seen: Vec<(String, bool)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        seen,
        [("plain".to_owned(), false), ("verified".to_owned(), true)]
    );
    // Without the test's authority, its certificate is refused, by name.
    let refused = lousho::session::PostgresStore::connect(&format!("{conn} sslmode=require"))
        .await
        .unwrap_err();
    let text = refused.to_string();
    assert!(
        text.contains("certificate was refused") && text.contains("sslrootcert"),
        "{text}"
    );
    server.stop();
}
