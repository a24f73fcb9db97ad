//! Runs an agent with one tool on OpenAI's Chat Completions API, streaming
//! the answer to the terminal.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p lousho --example openai
//! # another model, or any OpenAI-compatible server:
//! LOUSHO_MODEL=openrouter/openai/gpt-4o-mini OPENROUTER_API_KEY=... cargo run -p lousho --example openai
//! LOUSHO_MODEL=ollama/llama3.2 cargo run -p lousho --example openai
//! ```
//!
//! Without the key it prints the missing-key error (naming the variable) and
//! exits with status 1.

use futures::StreamExt;
use lousho::{Agent, AgentEvent, define_tool};
use serde::Deserialize;
use std::io::Write;
use std::process::ExitCode;

#[lousho::tool_input]
#[derive(Deserialize)]
struct Weather {
    /// The city to look up.
    city: String,
}

#[tokio::main]
async fn main() -> ExitCode {
    let model = std::env::var("LOUSHO_MODEL").unwrap_or_else(|_| "openai/gpt-4o-mini".into());
    let weather = define_tool(
        "get_weather",
        "Current weather for a city",
        |input: Weather| async move { format!("It is 21 °C and sunny in {}.", input.city) },
    )
    .read_only();
    let agent = match Agent::builder()
        .model(model.as_str())
        .prompt("You answer weather questions. Use the tool.")
        .tool(weather)
        .build()
    {
        Ok(agent) => agent,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stream = agent
        .send("What is the weather in Lisbon and in Oslo?")
        .stream();
    while let Some(event) = stream.next().await {
        match event {
            Ok(AgentEvent::TextDelta(t)) => {
                print!("{t}");
                let _ = std::io::stdout().flush();
            }
            Ok(AgentEvent::ToolCallStarted(call)) => {
                eprintln!("[tool] {} {}", call.name, call.arguments)
            }
            Ok(AgentEvent::Done(reply)) => {
                println!();
                eprintln!(
                    "[{} turns, {} tokens in, {} out]",
                    reply.turns, reply.usage.input_tokens, reply.usage.output_tokens
                );
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("\nerror: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
