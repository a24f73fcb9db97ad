//! Runs an agent with one tool on Anthropic's Messages API, streaming the
//! answer to the terminal.
//!
//! ```sh
//! ANTHROPIC_API_KEY=sk-ant-... cargo run -p lousho --example anthropic
//! LOUSHO_MODEL=claude-sonnet-4-5 ANTHROPIC_API_KEY=... cargo run -p lousho --example anthropic
//! ```
//!
//! Without the key it prints the missing-key error (naming the variable) and
//! exits with status 1.

use futures::StreamExt;
use lousho::model::{Anthropic, RetryPolicy};
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
    let model = std::env::var("LOUSHO_MODEL").unwrap_or_else(|_| "claude-haiku-4-5".into());
    // A provider value instead of a model string: the same as
    // `.model("anthropic/claude-haiku-4-5")`, with explicit settings.
    let provider = match Anthropic::builder(model)
        .max_tokens(1024)
        .retry(RetryPolicy::default().max_retries(2))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let weather = define_tool(
        "get_weather",
        "Current weather for a city",
        |input: Weather| async move { format!("It is 21 °C and sunny in {}.", input.city) },
    )
    .read_only();
    let agent = match Agent::builder()
        .model(provider)
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
