//! Permission rules (deny > ask > allow, globs) and the `can_use_tool` callback.

use lousho::agent::RunStatus;
use lousho::model::ToolResult;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::policy::PermissionResult;
use lousho::{Agent, Permissions};
use lousho_testkit::tools::counting_echo;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A model that calls `tool` once, then answers.
fn one_call(tool: &str, input: Value) -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::tool_call(tool, input),
        ScriptedTurn::text("done"),
    ])
}

/// The tool results the model got in its last request.
fn results_sent_back(model: &ScriptedModel) -> Vec<ToolResult> {
    let request = model.last_request().unwrap();
    request
        .messages
        .last()
        .unwrap()
        .tool_results_iter()
        .cloned()
        .collect()
}

#[tokio::test]
async fn deny_beats_allow_for_the_same_tool_in_either_order() {
    for permissions in [
        Permissions::new().allow("shell").deny("shell"),
        Permissions::new().deny("shell").allow("shell"),
        Permissions::new().allow("sh*").deny("shell"),
    ] {
        let calls = Arc::new(AtomicUsize::new(0));
        let model = one_call("shell", json!({"text": "ls"}));
        let agent = Agent::builder()
            .model(model.clone())
            .tool(counting_echo("shell", calls.clone()))
            .permissions(permissions.clone())
            .build()
            .unwrap();
        let reply = agent.send("list").await.unwrap();
        assert_eq!(reply.status, RunStatus::Completed);
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "{permissions:?}: denied tools never run"
        );
        let results = results_sent_back(&model);
        assert!(results[0].output.is_error);
        assert!(
            results[0]
                .output
                .to_model_text()
                .contains("permission rule"),
            "{:?}",
            results[0].output
        );
    }
}

#[tokio::test]
async fn ask_beats_allow_and_overrides_a_never_policy() {
    let calls = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder()
        .model(one_call("docs__edit", json!({})))
        // `define_tool`-style tools default to Never; the rule still asks.
        .tool(counting_echo("docs__edit", calls.clone()))
        .permissions(Permissions::new().allow("docs__*").ask("docs__edit"))
        .build()
        .unwrap();
    let reply = agent.send("edit").await.unwrap();
    assert_eq!(reply.status, RunStatus::Interrupted);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn globs_match_full_tool_names() {
    let searched = Arc::new(AtomicUsize::new(0));
    let executed = Arc::new(AtomicUsize::new(0));
    let other = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("docs__search", json!({}))
            .and_tool_call("mcp__postgres__exec", json!({}))
            .and_tool_call("files__read", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        // Every tool asks on its own; rules decide instead where they match.
        .tool(counting_echo("docs__search", searched.clone()).needs_approval(true))
        .tool(counting_echo("mcp__postgres__exec", executed.clone()))
        .tool(counting_echo("files__read", other.clone()))
        .permissions(
            Permissions::new()
                .allow("docs__*")
                .deny("mcp__postgres__*")
                .deny("*__write"),
        )
        .build()
        .unwrap();
    assert_eq!(
        agent.tool_decision("docs__search").decision,
        lousho::policy::Decision::Run
    );
    assert_eq!(
        agent.tool_decision("mcp__postgres__exec").decision,
        lousho::policy::Decision::Deny
    );
    assert_eq!(
        agent.tool_decision("files__read").decision,
        lousho::policy::Decision::Run
    );
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(
        searched.load(Ordering::SeqCst),
        1,
        "docs__* allowed it without asking"
    );
    assert_eq!(
        executed.load(Ordering::SeqCst),
        0,
        "mcp__postgres__* denied it"
    );
    assert_eq!(
        other.load(Ordering::SeqCst),
        1,
        "no rule, Never policy: runs"
    );
    let results = results_sent_back(&model);
    assert_eq!(results.len(), 3);
    assert!(!results[0].output.is_error);
    assert!(results[1].output.is_error);
    assert!(
        results[1]
            .output
            .to_model_text()
            .contains("mcp__postgres__*")
    );
}

#[tokio::test]
async fn an_invalid_glob_fails_the_build() {
    let err = Agent::builder()
        .model("test")
        .permissions(Permissions::new().deny("docs__[oops"))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("docs__[oops"), "{err}");
}

#[tokio::test]
async fn callback_sees_the_input_and_its_denial_reaches_the_model() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let seen2 = seen.clone();
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("shell", json!({"text": "rm -rf /"}))
            .and_tool_call("shell", json!({"text": "ls"})),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .tool(counting_echo("shell", calls.clone()))
        .can_use_tool(move |name, input| {
            seen2.lock().unwrap().push((name, input.clone()));
            async move {
                if input["text"].as_str().unwrap_or_default().contains("rm ") {
                    PermissionResult::deny("rm is not allowed here")
                } else {
                    PermissionResult::Allow
                }
            }
        })
        .build()
        .unwrap();
    let reply = agent.send("clean up").await.unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            ("shell".to_owned(), json!({"text": "rm -rf /"})),
            ("shell".to_owned(), json!({"text": "ls"}))
        ]
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1, "only `ls` ran");
    let results = results_sent_back(&model);
    assert!(results[0].output.is_error);
    assert!(
        results[0]
            .output
            .to_model_text()
            .contains("rm is not allowed here")
    );
    assert!(!results[1].output.is_error);
}

#[tokio::test]
async fn rules_run_before_the_callback_and_the_callback_before_the_policy() {
    let calls = Arc::new(AtomicUsize::new(0));
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let asked2 = asked.clone();
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("ruled", json!({}))
            .and_tool_call("approved_by_callback", json!({}))
            .and_tool_call("left_to_policy", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let agent = Agent::builder()
        .model(model)
        .tool(counting_echo("ruled", calls.clone()))
        // Always-ask tools: the callback's Allow wins over the policy…
        .tool(counting_echo("approved_by_callback", calls.clone()).needs_approval(true))
        // …and UsePolicy leaves the decision to it.
        .tool(counting_echo("left_to_policy", calls.clone()).needs_approval(true))
        .permissions(
            Permissions::new()
                .deny("ruled")
                .can_use_tool(move |name, _| {
                    asked2.lock().unwrap().push(name.clone());
                    async move {
                        if name == "approved_by_callback" {
                            PermissionResult::Allow
                        } else {
                            PermissionResult::UsePolicy
                        }
                    }
                }),
        )
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(
        *asked.lock().unwrap(),
        vec![
            "approved_by_callback".to_owned(),
            "left_to_policy".to_owned()
        ],
        "a call a rule decided never reaches the callback"
    );
    assert_eq!(reply.status, RunStatus::Interrupted);
    let pending: Vec<_> = reply.pending.iter().map(|r| r.tool_name.as_str()).collect();
    assert_eq!(pending, ["left_to_policy"]);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "only the callback-approved call ran"
    );
}

#[tokio::test]
async fn a_tool_a_rule_denies_is_not_offered_to_the_model_and_a_call_by_name_is_still_denied() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = one_call("shell", json!({"text": "ls"}));
    let agent = Agent::builder()
        .model(model.clone())
        .tool(counting_echo("shell", calls.clone()))
        .tool(counting_echo("echo", calls.clone()))
        .tool(counting_echo("ask_me", calls.clone()))
        .permissions(Permissions::new().deny("sh*").allow("echo").ask("ask_me"))
        .build()
        .unwrap();
    let reply = agent.send("list").await.unwrap();
    assert_eq!(reply.status, RunStatus::Completed);
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let mut offered: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        offered.sort_unstable();
        // Denied: left out. Allowed and asked: offered.
        assert_eq!(offered, ["ask_me", "echo"], "{offered:?}");
    }
    // A model that names it anyway gets the rule's denial; it never runs.
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let results = results_sent_back(&model);
    assert!(results[0].output.is_error);
    assert!(
        results[0]
            .output
            .to_model_text()
            .contains("denied by a permission rule (`sh*`)"),
        "{}",
        results[0].output.to_model_text()
    );
    // What `lousho tools` shows still lists it, as denied.
    assert_eq!(
        agent.tool_decision("shell").decision,
        lousho::policy::Decision::Deny
    );
}
