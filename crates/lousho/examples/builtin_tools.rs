//! Hands the built-in file, todo and clock tools to an agent and shows what
//! the model gets back from them.
//!
//! Runs offline: a `ScriptedModel` plays the model's part, calling `grep`,
//! `read_file`, `todo_write` and `current_date` over this crate's own sources.
//!
//! Run: `cargo run -p lousho --example builtin_tools`

use lousho::Agent;
use lousho::builtin::{clock_tools, fs_tools, todo_tools};
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("grep", json!({"pattern": "pub fn fs_tools", "path": "src"}))
            .and_tool_call("read_file", json!({"path": "Cargo.toml", "limit": 5}))
            .and_tool_call(
                "todo_write",
                json!({"items": [{"content": "read the built-in tools", "status": "in_progress"}]}),
            )
            .and_tool_call("current_date", json!({"timezone": "UTC"})),
        ScriptedTurn::text("Done looking around."),
    ]);
    let agent = Agent::builder()
        .model(model)
        .tools((
            fs_tools(env!("CARGO_MANIFEST_DIR"))?,
            todo_tools(),
            clock_tools(),
        ))
        .build()?;

    let reply = agent.send("Where is fs_tools defined?").await?;
    for record in &reply.tool_calls {
        println!("── {} {}", record.call.name, record.call.arguments);
        println!("{}", record.output.to_model_text());
    }
    println!("── final answer: {}", reply.text);
    Ok(())
}
