//! Tasks across replicas (issues 31, 34): two `lousho mcp --http` replicas
//! on one session store (SQLite, PostgreSQL), as behind a load balancer
//! that sends each request anywhere. A task started on one replica is
//! polled on the other to its result; a task cancelled through the replica
//! that does not run it ends `cancelled`; a task's approval question shows
//! on the other replica, which takes the answer (`tasks/update`) to it; a
//! task whose replica is SIGKILLed is reported `failed` by the other once
//! its heartbeat stops.
//!
//! The client is a stateless 2026-07-28 client with the tasks extension
//! (raw JSON-RPC, `lousho_testkit::replicas::post`); the agent's tool is a
//! server on the official Python SDK (`interop/python/gated_server.py`)
//! whose `peek` blocks reading a FIFO the test holds.

use super::common::{Gate, count, on_both_stores, release};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use lousho_testkit::replicas::{post, tasks_client_meta};
use serde_json::{Value, json};
use std::time::Duration;

/// Starts a task of the agent tool on `url` for a client whose `_meta` is
/// `meta`: the task's id.
async fn start_task(url: &str, id: u64, message: &str, meta: Value) -> String {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "chat", "arguments": {"message": message}, "_meta": meta}});
    let started = post(url, None, &call).await;
    assert_eq!(started.status, 200, "{}", started.body);
    started.body["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {}", started.body))
        .to_owned()
}

/// A task request (`tasks/get`, `tasks/cancel`, `tasks/update` with
/// `more` params) of `task` to `url`: the JSON-RPC answer.
async fn task_request_with(url: &str, method: &str, task: &str, more: Value) -> Value {
    let mut body = json!({"jsonrpc": "2.0", "id": 99, "method": method,
        "params": {"taskId": task, "_meta": tasks_client_meta()}});
    if let Value::Object(more) = more {
        body["params"].as_object_mut().unwrap().extend(more);
    }
    let answer = post(url, None, &body).await;
    assert_eq!(answer.status, 200, "{method}: {}", answer.body);
    answer.body
}

/// [`task_request_with`] and no more params.
async fn task_request(url: &str, method: &str, task: &str) -> Value {
    task_request_with(url, method, task, Value::Null).await
}

/// Polls `tasks/get` of `task` on `url`, as a client does (every
/// `pollIntervalMs`), until `done` holds for the task: the task then.
async fn poll_until(url: &str, task: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut seen = Vec::new();
    for _ in 0..600 {
        let answer = task_request(url, "tasks/get", task).await;
        let state = answer["result"].clone();
        assert!(state.is_object(), "tasks/get of {task} on {url}: {answer}");
        if done(&state) {
            return state;
        }
        let wait = state["pollIntervalMs"].as_u64().unwrap_or(500);
        seen.push(state);
        tokio::time::sleep(Duration::from_millis(wait)).await;
    }
    panic!("task {task} on {url} never got there: {seen:?}");
}

async fn tasks_go_on_across_replicas(store: String) {
    let Some(gate) = Gate::new() else {
        return;
    };
    let fifos = [gate.fifo("one"), gate.fifo("two"), gate.fifo("three")];
    let note = gate.file("note", "poked");
    let peek = |fifo: &str| MockReply::new().tool_call("c", "gate__peek", json!({"path": fifo}));
    let mock = MockProvider::openai()
        .reply(peek(&fifos[0]))
        .reply(MockReply::text_reply("done"))
        .reply(peek(&fifos[1]))
        .reply(MockReply::new().tool_call("w", "gate__poke", json!({"path": note})))
        .reply(MockReply::text_reply("written"))
        .reply(peek(&fifos[2]))
        .start()
        .await;
    // `poke` (a write, no hints) needs approval: the task asks its client.
    let mut replicas = gate.replicas(&mock, store, "  sessions: true\n  approvals: elicit\n");
    let (r0, r1) = (replicas.url(0).to_owned(), replicas.url(1).to_owned());
    let never = || std::future::pending::<String>();

    // 1. Started on replica 0, polled on replica 1: its steps, then its result.
    let one = start_task(&r0, 1, "look", tasks_client_meta()).await;
    let writer = gate.reader_of(&fifos[0], never()).await;
    let working = poll_until(&r1, &one, |t| {
        t["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("gate__peek"))
    })
    .await;
    assert_eq!(working["status"], "working", "{working}");
    assert_eq!(working["taskId"], one.as_str(), "{working}");
    release(writer, &fifos[0], "seen");
    let done = poll_until(&r1, &one, |t| t["status"] != "working").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["reply"], "done",
        "{done}"
    );

    // 2. Started on replica 1, cancelled through replica 0.
    let two = start_task(&r1, 2, "look again", tasks_client_meta()).await;
    let writer = gate.reader_of(&fifos[1], never()).await;
    let cancel = task_request(&r0, "tasks/cancel", &two).await;
    assert!(cancel["error"].is_null(), "{cancel}");
    let cancelled = poll_until(&r0, &two, |t| t["status"] != "working").await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    release(writer, &fifos[1], "late");

    // 3. Started on replica 0, which asks for approval: the question shows
    // on replica 1, and the answer given there reaches the run.
    let mut asking = tasks_client_meta();
    asking["io.modelcontextprotocol/clientCapabilities"]["elicitation"] = json!({});
    let write = start_task(&r0, 3, "write it", asking).await;
    let input = poll_until(&r1, &write, |t| t["status"] != "working").await;
    assert_eq!(input["status"], "input_required", "{input}");
    let questions = input["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(questions.len(), 1, "{input}");
    let (key, question) = questions.iter().next().unwrap();
    assert_eq!(question["method"], "elicitation/create", "{input}");
    assert!(question.to_string().contains("gate__poke"), "{input}");
    let allow =
        json!({"inputResponses": {key: {"action": "accept", "content": {"decision": "allow"}}}});
    let update = task_request_with(&r1, "tasks/update", &write, allow).await;
    assert!(update["error"].is_null(), "{update}");
    let written = poll_until(&r1, &write, |t| {
        !matches!(t["status"].as_str(), Some("working" | "input_required"))
    })
    .await;
    assert_eq!(written["status"], "completed", "{written}");
    assert_eq!(
        written["result"]["structuredContent"]["reply"], "written",
        "{written}"
    );
    assert_eq!(count(&gate.calls(), "poke"), 1, "{:?}", gate.calls());

    // 4. Replica 0 dies while its task runs: replica 1 reports it failed
    // once its heartbeat stops (the lease time, 2 s here).
    let three = start_task(&r0, 4, "and again", tasks_client_meta()).await;
    let writer = gate.reader_of(&fifos[2], never()).await;
    replicas.replica(0).kill();
    let failed = poll_until(&r1, &three, |t| t["status"] != "working").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let why = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("stopped"), "{failed}");
    release(writer, &fifos[2], "gone");

    // An unknown task is unknown on every replica.
    let unknown = task_request(&r1, "tasks/get", "no-such-task").await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(mock.requests().len(), 6);
}

on_both_stores!(
    tasks_go_on_across_replicas:
    tasks_go_on_across_replicas_on_sqlite,
    tasks_go_on_across_replicas_on_postgres
);
