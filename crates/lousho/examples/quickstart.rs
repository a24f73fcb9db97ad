//! Quickstart: an agent with one typed tool, run offline with the `test` model.
//!
//! Run: `cargo run --example quickstart`
//!
//! The `test` model ([`lousho::model::testing::TestModel`]) calls every tool once with
//! arguments generated from its schema, then answers with what the tools
//! returned — so this runs with no network and no API key. Swap in
//! `"openai/gpt-4o-mini"` (and set `OPENAI_API_KEY`) for a real model.

use futures::StreamExt;
use lousho::{Agent, AgentEvent, define_tool};
use serde::Deserialize;
use std::io::Write;

#[lousho::tool_input]
#[derive(Deserialize)]
struct LookupOrder {
    /// The order id, e.g. "A-1001".
    id: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let lookup_order =
        define_tool(
            "lookup_order",
            "Look up an order",
            |input: LookupOrder| async move {
                serde_json::json!({ "id": input.id, "status": "shipped" })
            },
        )
        .read_only();

    let agent = Agent::builder()
        .model("test")
        .prompt("You answer questions about orders.")
        .tool(lookup_order)
        .build()?;

    // Stream the run: tool activity as it happens, then the answer.
    let mut events = agent.send("Where is my order?").stream();
    while let Some(event) = events.next().await {
        match event? {
            AgentEvent::ToolCallStarted(call) => println!("→ {} {}", call.name, call.arguments),
            AgentEvent::ToolCallFinished { call, output } => {
                println!("← {} {}", call.name, output.to_model_text())
            }
            AgentEvent::TextDelta(text) => {
                print!("{text}");
                std::io::stdout().flush()?;
            }
            AgentEvent::Done(reply) => {
                println!("\n({} turns, {} tokens)", reply.turns, reply.usage.total())
            }
            _ => {}
        }
    }
    Ok(())
}
