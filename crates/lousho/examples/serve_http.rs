//! Serves a support agent over MCP on Streamable HTTP at
//! `http://127.0.0.1:3920/mcp`, with a bearer token when `MCP_TOKEN` is set.
//!
//! ```sh
//! MCP_TOKEN=change-me cargo run --example serve_http
//! # another terminal:
//! curl -s http://127.0.0.1:3920/mcp -H 'Authorization: Bearer change-me' \
//!   -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"support-bot","arguments":{"message":"hi"}}}'
//! ```
//!
//! Set `LOUSHO_MODEL` (e.g. `openai/gpt-4o-mini`) for a real model; the
//! default is the offline `test` model. Ctrl-C stops it gracefully.

use lousho::mcp::{Auth, HttpOptions};

use lousho::{Agent, define_tool};
use lousho::{ServeOptions, serve_mcp};
use serde::Deserialize;

#[lousho::tool_input]
#[derive(Deserialize)]
struct Search {
    /// What to look for.
    query: String,
}

#[tokio::main]
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

    let mut options = ServeOptions::new(support_agent)
        .name("support-bot")
        .description("Ask the support agent a question")
        .tool(search_docs)
        .http(HttpOptions::new().host("127.0.0.1").port(3920).path("/mcp"));
    if let Ok(token) = std::env::var("MCP_TOKEN") {
        options = options.auth(Auth::bearer(token));
    }
    let server = serve_mcp(options).await?;
    eprintln!("serving on {}", server.url().unwrap_or_default());

    tokio::signal::ctrl_c().await?;
    server.close().await?; // in-flight calls are cancelled, the port is released
    Ok(())
}
