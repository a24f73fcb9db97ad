//! Input-required rounds across replicas (issue 31: "the run's state is
//! kept between rounds … in the session store so another replica can take
//! the retry"): two `lousho mcp --http` replicas on one session store
//! (SQLite, PostgreSQL). A stateless 2026-07-28 client's call that asks
//! for approval on one replica is retried, with the answer, on the other;
//! a call that asks twice has both retries taken by the replica that does
//! not hold it; a retry of a question answered already is refused.
//!
//! The client is raw JSON-RPC (`lousho_testkit::replicas::post`) with the
//! elicitation capability; the agent's tool is `poke` (a write with no
//! hints: it needs approval) of a server on the official Python SDK
//! (`interop/python/gated_server.py`).

use super::common::{Gate, count, on_both_stores};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use lousho_testkit::replicas::post;
use serde_json::{Value, json};

/// `_meta` of a stateless 2026-07-28 client that answers elicitation.
fn asking_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "rounds-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    })
}

/// A `tools/call` of the agent tool on `url`, a retry when `state` (the
/// previous round's `requestState`) is given, with the approval allowed:
/// the call's result.
async fn call(url: &str, message: &str, state: Option<&str>) -> Value {
    let mut params = json!({"name": "chat", "arguments": {"message": message},
        "_meta": asking_meta()});
    if let Some(state) = state {
        params["requestState"] = json!(state);
        params["inputResponses"] =
            json!({"q": {"action": "accept", "content": {"decision": "allow"}}});
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let answer = post(url, None, &body).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let result = answer.body["result"].clone();
    assert!(result.is_object(), "{}", answer.body);
    result
}

/// The `requestState` of a round that asks to approve `gate__poke`.
fn asks_approval(round: &Value) -> String {
    assert_eq!(round["resultType"], "input_required", "{round}");
    let question = &round["inputRequests"]["q"];
    assert_eq!(question["method"], "elicitation/create", "{round}");
    assert!(question.to_string().contains("gate__poke"), "{round}");
    round["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("a requestState: {round}"))
        .to_owned()
}

async fn a_rounds_retry_may_reach_either_replica(store: String) {
    let Some(gate) = Gate::new() else {
        return;
    };
    let note = gate.file("note", "poked");
    let poke = || MockReply::new().tool_call("w", "gate__poke", json!({"path": note}));
    let mock = MockProvider::openai()
        .reply(poke())
        .reply(MockReply::text_reply("written"))
        .reply(poke())
        .reply(poke())
        .reply(MockReply::text_reply("twice"))
        .start()
        .await;
    let replicas = gate.replicas(&mock, store, "  sessions: true\n  approvals: elicit\n");
    let (r0, r1) = (replicas.url(0), replicas.url(1));

    // Asked on replica 0, answered on replica 1.
    let state = asks_approval(&call(r0, "write it", None).await);
    let done = call(r1, "write it", Some(&state)).await;
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(done["structuredContent"]["reply"], "written", "{done}");
    assert_eq!(count(&gate.calls(), "poke"), 1, "{:?}", gate.calls());

    // The same answer again, on either replica: that question is gone.
    for url in [r0, r1] {
        let again = call(url, "write it", Some(&state)).await;
        assert_eq!(again["isError"], true, "{again}");
        assert!(again.to_string().contains("no longer pending"), "{again}");
    }

    // A call on replica 1 that asks twice: both retries go to replica 0.
    let first = asks_approval(&call(r1, "write twice", None).await);
    let second = asks_approval(&call(r0, "write twice", Some(&first)).await);
    assert_ne!(first, second);
    let done = call(r0, "write twice", Some(&second)).await;
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(done["structuredContent"]["reply"], "twice", "{done}");
    assert_eq!(count(&gate.calls(), "poke"), 3, "{:?}", gate.calls());
    assert_eq!(mock.requests().len(), 5);
}

on_both_stores!(
    a_rounds_retry_may_reach_either_replica:
    a_rounds_retry_may_reach_either_replica_on_sqlite,
    a_rounds_retry_may_reach_either_replica_on_postgres
);
