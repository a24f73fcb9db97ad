//! Approvals, offline: permission rules, a `can_use_tool` callback, a run
//! that pauses for a human, its state stored as JSON, and the run resumed by
//! a new agent (as another process would after a restart).
//!
//! Uses a `ScriptedModel`, so it needs no network and no API key:
//!
//! ```sh
//! cargo run -p lousho --example approvals
//! ```

use lousho::agent::RunStatus;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::policy::{Decisions, PermissionResult};
use lousho::{Agent, Permissions, RunState, ToolAnnotations, define_tool};
use serde::Deserialize;
use serde_json::json;

#[lousho::tool_input]
#[derive(Deserialize)]
struct Path {
    /// A file path.
    path: String,
}

/// The agent's configuration; both "processes" build it the same way.
fn build_agent(model: ScriptedModel) -> Result<Agent, lousho::agent::BuildError> {
    let read = define_tool("files__read", "Reads a file", |p: Path| async move {
        format!("contents of {}", p.path)
    })
    .read_only();
    // Annotated like an MCP tool that deletes: the Annotations policy asks.
    let delete = define_tool("files__delete", "Deletes a file", |p: Path| async move {
        format!("deleted {}", p.path)
    })
    .annotations(
        ToolAnnotations::new()
            .title("Delete a file")
            .destructive(true),
    )
    .approval(lousho::Approval::Annotations);
    let exec = define_tool("db__exec", "Runs SQL", |_: Path| async move { "ran" });

    Agent::builder()
        .model(model)
        .prompt("You tidy up files.")
        .tools((read, delete, exec))
        .permissions(
            Permissions::new()
                .allow("files__read")
                .deny("db__*")
                .can_use_tool(|_name, input| async move {
                    // Never touch anything under /etc, whatever the tool.
                    match input["path"].as_str() {
                        Some(p) if p.starts_with("/etc") => {
                            PermissionResult::deny("/etc is off limits")
                        }
                        _ => PermissionResult::UsePolicy,
                    }
                }),
        )
        // No approval handler: a call that needs approval pauses the run.
        .build()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Process 1: the model reads a file and wants to delete two.
    let model =
        ScriptedModel::new([
            ScriptedTurn::tool_call("files__read", json!({"path": "notes.txt"}))
                .and_tool_call("files__delete", json!({"path": "notes.txt"}))
                .and_tool_call("files__delete", json!({"path": "/etc/hosts"}))
                .and_tool_call("db__exec", json!({"path": "DROP TABLE users"})),
        ]);
    let agent = build_agent(model)?;
    for name in ["files__read", "files__delete", "db__exec"] {
        let d = agent.tool_decision(name);
        println!("{name:>14}: {} ({})", d.decision, d.reason);
    }

    let reply = agent.send("Clean up notes.txt").await?;
    assert_eq!(reply.status, RunStatus::Interrupted);
    for record in &reply.tool_calls {
        println!(
            "already done: {} -> {}",
            record.call.name,
            record.output.to_model_text()
        );
    }
    for pending in &reply.pending {
        println!(
            "needs approval: {} {} ({})",
            pending.title(),
            pending.input,
            pending.reason
        );
    }
    let stored = reply
        .state
        .as_ref()
        .ok_or("an interrupted reply carries its state")?
        .to_json()?;
    let call_id = reply.pending[0].call_id.clone();

    // Process 2, after a restart: same configuration, the model's next turn.
    let agent = build_agent(ScriptedModel::new([ScriptedTurn::text(
        "Deleted notes.txt.",
    )]))?;
    let state = RunState::from_json(&stored)?;
    let reply = agent
        .resume(state, Decisions::new().approve(call_id))
        .await?;
    assert_eq!(reply.status, RunStatus::Completed);
    for record in &reply.tool_calls {
        let mark = if record.output.is_error {
            "error"
        } else {
            "ok"
        };
        println!(
            "{mark:>5}: {} -> {}",
            record.call.name,
            record.output.to_model_text()
        );
    }
    println!("reply: {}", reply.text);
    Ok(())
}
