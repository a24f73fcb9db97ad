//! Serves a support agent over MCP on stdio, the way Claude Code and Cursor
//! launch MCP servers: the agent is one tool (`support-bot`, taking
//! `{ "message": string }`) and `search_docs` is also exposed directly.
//!
//! Run it from an MCP client's config (see `docs/serving.md`), or by hand:
//!
//! ```sh
//! cargo run --example serve_stdio            # waits for an MCP client on stdin
//! LOUSHO_MODEL=openai/gpt-4o-mini cargo run --example serve_stdio
//! ```
//!
//! Without `LOUSHO_MODEL` it uses the offline `test` model. Logs go to stderr:
//! stdout carries only the MCP protocol.

use lousho::{Agent, define_tool};
use lousho::{ServeOptions, serve_mcp};
use serde::Deserialize;

#[lousho::tool_input]
#[derive(Deserialize)]
struct Search {
    /// What to look for.
    query: String,
}

// A current_thread runtime gives the stdio server its best latency.
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();

    let search_docs = define_tool(
        "search_docs",
        "Search the docs",
        |input: Search| async move { format!("results for {}", input.query) },
    )
    .read_only();

    let model = std::env::var("LOUSHO_MODEL").unwrap_or_else(|_| "test".to_owned());
    let support_agent = Agent::builder()
        .model(model)
        .prompt("You answer support questions.")
        .tool(search_docs.clone())
        .build()?;

    let server = serve_mcp(
        ServeOptions::new(support_agent) // exposed as ONE tool taking { message: string }
            .name("support-bot") // server name; the tool name is a sanitised version
            .description("Ask the support agent a question")
            .tool(search_docs), // optional: also expose this tool directly
    )
    .await?;
    server.wait().await?; // until the client closes stdin
    Ok(())
}
