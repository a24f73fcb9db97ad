//! A mounted server's sampling requests (issue 31): answered by the agent's
//! own model once the approval handler (or a permission rule for
//! `sampling:<server>`) says yes, within the entry's limits; refused when
//! the entry does not allow sampling. Against a server on the official
//! Python SDK that asks mid-call (`sampling/createMessage`).

use super::mcp_server_logs::features_script;
use super::peers::python;
use lousho::mcp::SamplingSettings;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::policy::{ApprovalDecision, ApprovalRequest, Permissions};
use lousho::{Agent, Approval, McpServer};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn server(sampling: Option<SamplingSettings>) -> Option<McpServer> {
    let python = python()?;
    let entry = McpServer::stdio(python.display().to_string())
        .args([features_script()])
        .approval(Approval::Never);
    Some(match sampling {
        Some(s) => entry.sampling(s),
        None => entry,
    })
}

/// The model asks for `py__sample`, answers the server's question, then ends.
fn model() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::tool_call("py__sample", json!({"prompt": "say hi"})),
        ScriptedTurn::text("hi from the agent's model"),
        ScriptedTurn::text("done"),
    ])
}

/// The model asks for `py__sample`, then ends (the server gets no answer
/// from it).
fn unanswered() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::tool_call("py__sample", json!({"prompt": "say hi"})),
        ScriptedTurn::text("done"),
    ])
}

/// The text of the tool result in the model's last request.
fn tool_result(model: &ScriptedModel) -> String {
    let last = model.last_request().unwrap();
    serde_json::to_string(&last.messages.last().unwrap()).unwrap()
}

#[tokio::test]
async fn the_agents_model_answers_after_an_approval_within_the_limits() {
    let Some(entry) = server(Some(SamplingSettings::allowed().max_tokens(32))) else {
        return;
    };
    let model = model();
    let asked: Arc<Mutex<Vec<ApprovalRequest>>> = Arc::default();
    let seen = asked.clone();
    let agent = Agent::builder()
        .model(model.clone())
        .mcp_server("py", entry)
        .approval_handler(move |request: ApprovalRequest| {
            seen.lock().unwrap().push(request);
            async { ApprovalDecision::Approve }
        })
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.text, "done");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].tool_name, "sampling:py");
    assert_eq!(asked[0].origin.as_deref(), Some("py"));
    assert_eq!(asked[0].input["messages"][0]["text"], "say hi");
    // The server's request, as the model saw it: its system prompt, its
    // message, the entry's token cap.
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].system.as_deref(), Some("Answer in one line."));
    assert_eq!(requests[1].messages.len(), 1);
    assert_eq!(requests[1].messages[0].text(), "say hi");
    assert_eq!(requests[1].settings.max_tokens, Some(32));
    let result = tool_result(&model);
    assert!(
        result.contains("model scripted said: hi from the agent's model"),
        "{result}"
    );
    agent.close().await;
}

#[tokio::test]
async fn a_rule_allows_without_asking_and_a_denial_reaches_the_server() {
    let Some(entry) = server(Some(SamplingSettings::allowed())) else {
        return;
    };
    // A rule allows: nobody is asked.
    let model = model();
    let agent = Agent::builder()
        .model(model.clone())
        .mcp_server("py", entry.clone())
        .permissions(Permissions::new().allow("sampling:*"))
        .approval_handler(|_| async { panic!("a rule allows it") })
        .build()
        .unwrap();
    agent.send("go").await.unwrap();
    assert!(tool_result(&model).contains("said: hi from the agent's model"));
    agent.close().await;

    // The operator says no: the model is not asked, the tool fails.
    let model = unanswered();
    let agent = Agent::builder()
        .model(model.clone())
        .mcp_server("py", entry)
        .approval_handler(|_| async { ApprovalDecision::deny("not today") })
        .build()
        .unwrap();
    agent.send("go").await.unwrap();
    let result = tool_result(&model);
    assert!(result.contains("not today"), "{result}");
    agent.close().await;
}

#[tokio::test]
async fn without_opt_in_the_server_may_not_ask() {
    let Some(entry) = server(None) else { return };
    let model = unanswered();
    let agent = Agent::builder()
        .model(model.clone())
        .mcp_server("py", entry)
        .approval_handler(|_| async { panic!("nothing to approve") })
        .build()
        .unwrap();
    agent.send("go").await.unwrap();
    assert_eq!(model.requests().len(), 2, "the model answered no sampling");
    let result = tool_result(&model);
    assert!(!result.contains("said:"), "{result}");
    agent.close().await;
}
