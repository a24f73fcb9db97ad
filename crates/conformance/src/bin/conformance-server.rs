//! The server the official MCP conformance suite judges
//! (`conformance server --url http://127.0.0.1:PORT/mcp`): the suite's
//! fixture tools (`test_simple_text`, `test_tool_with_progress`,
//! `test_elicitation`, …) built only with lousho's public API —
//! `define_tool` / `DefinedTool::from_json` and `serve_mcp` — talking back
//! through `ToolContext` (progress, log messages, elicitation, sampling).
//! Serves stateful Streamable HTTP (sessions, so the suite's client can
//! answer elicitation and sampling) on `127.0.0.1:$PORT` (0 = a free port),
//! prints `listening on <url>` once bound and stops on SIGINT or SIGTERM.

use lousho::mcp::HttpOptions;
use lousho::tool::define_tool_with_context;
use lousho::tool::{
    Content, DefinedTool, Elicitation, LogLevel, SamplingRequest, ToolContext, ToolOutput,
};
use lousho::{Agent, define_tool};
use lousho::{ServeOptions, serve_mcp};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/// A tiny WAV file (44-byte header, no samples).
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

#[derive(Deserialize, lousho::JsonSchema)]
#[schemars(crate = "lousho::schemars")]
struct NoInput {}

#[derive(Deserialize, lousho::JsonSchema)]
#[schemars(crate = "lousho::schemars")]
struct Prompt {
    /// The prompt for the client's model.
    prompt: String,
}

#[derive(Deserialize, lousho::JsonSchema)]
#[schemars(crate = "lousho::schemars")]
struct Message {
    /// What to ask the user.
    message: String,
}

fn text(t: &str) -> Content {
    Content::Text { text: t.to_owned() }
}

fn resource() -> Content {
    Content::Resource {
        uri: "test://embedded-resource".to_owned(),
        mime_type: Some("text/plain".to_owned()),
        text: Some("This is an embedded resource content.".to_owned()),
        blob: None,
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> ToolOutput {
    ToolOutput::error(format!("{what} failed: {e}"))
}

fn elicited(answer: Elicitation) -> ToolOutput {
    match answer {
        Elicitation::Accepted(content) => ToolOutput::text(format!(
            "User response: action=accept, content={}",
            Value::Object(content)
        )),
        Elicitation::Declined => ToolOutput::text("User response: action=decline"),
        _ => ToolOutput::text("User response: action=cancel"),
    }
}

fn tools() -> Vec<DefinedTool> {
    vec![
        define_tool(
            "test_simple_text",
            "Returns a simple text response",
            |_: NoInput| async { "This is a simple text response for testing." },
        ),
        define_tool(
            "test_image_content",
            "Returns an image",
            |_: NoInput| async { ToolOutput::from_content(vec![Content::image(PNG, "image/png")]) },
        ),
        define_tool("test_audio_content", "Returns audio", |_: NoInput| async {
            ToolOutput::from_content(vec![Content::Audio {
                data: WAV.to_owned(),
                mime_type: "audio/wav".to_owned(),
            }])
        }),
        define_tool(
            "test_embedded_resource",
            "Returns an embedded resource",
            |_: NoInput| async { ToolOutput::from_content(vec![resource()]) },
        ),
        define_tool(
            "test_multiple_content_types",
            "Returns text, an image and a resource",
            |_: NoInput| async {
                ToolOutput::from_content(vec![
                    text("Multiple content types test:"),
                    Content::image(PNG, "image/png"),
                    resource(),
                ])
            },
        ),
        define_tool_with_context(
            "test_tool_with_logging",
            "Sends log messages while it runs",
            |_: NoInput, ctx: ToolContext| async move {
                for (i, m) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .into_iter()
                .enumerate()
                {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    if let Err(e) = ctx.log(LogLevel::Info, m).await {
                        return failed("logging", e);
                    }
                }
                ToolOutput::text("Tool with logging executed successfully")
            },
        ),
        define_tool("test_error_handling", "Always fails", |_: NoInput| async {
            ToolOutput::error("This tool intentionally returns an error for testing")
        }),
        define_tool_with_context(
            "test_tool_with_progress",
            "Reports progress while it runs",
            |_: NoInput, ctx: ToolContext| async move {
                for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    // Progress is optional: a call without a token just runs.
                    let _ = ctx
                        .report_progress(p, Some(100.0), Some(&format!("Completed step {i}")))
                        .await;
                }
                ToolOutput::text("Progress tool completed")
            },
        ),
        define_tool_with_context(
            "test_sampling",
            "Asks the client's model",
            |input: Prompt, ctx: ToolContext| async move {
                match ctx
                    .sample(SamplingRequest::new(100).user(input.prompt))
                    .await
                {
                    Ok(reply) => ToolOutput::text(format!("LLM response: {}", reply.text)),
                    Err(e) => failed("sampling", e),
                }
            },
        ),
        define_tool_with_context(
            "test_elicitation",
            "Asks the user for a username and email",
            |input: Message, ctx: ToolContext| async move {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "username": { "type": "string", "description": "User's response" },
                        "email": { "type": "string", "description": "User's email address" }
                    },
                    "required": ["username", "email"]
                });
                match ctx.elicit(input.message, schema).await {
                    Ok(answer) => elicited(answer),
                    Err(e) => failed("elicitation", e),
                }
            },
        ),
        define_tool_with_context(
            "test_elicitation_sep1034_defaults",
            "Asks the user, with defaults for every field",
            |_: NoInput, ctx: ToolContext| async move {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "name": { "type": "string", "description": "User name", "default": "John Doe" },
                        "age": { "type": "integer", "description": "User age", "default": 30 },
                        "score": { "type": "number", "description": "User score", "default": 95.5 },
                        "status": {
                            "type": "string", "description": "User status",
                            "enum": ["active", "inactive", "pending"], "default": "active"
                        },
                        "verified": { "type": "boolean", "description": "Verified", "default": true }
                    }
                });
                match ctx
                    .elicit(
                        "Please review and update the form fields with defaults",
                        schema,
                    )
                    .await
                {
                    Ok(answer) => elicited(answer),
                    Err(e) => failed("elicitation", e),
                }
            },
        ),
        define_tool_with_context(
            "test_elicitation_sep1330_enums",
            "Asks the user to pick from enums of every kind",
            |_: NoInput, ctx: ToolContext| async move {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "untitledSingle": {
                            "type": "string", "description": "Pick one",
                            "enum": ["option1", "option2", "option3"]
                        },
                        "titledSingle": {
                            "type": "string", "description": "Pick one (titled)",
                            "oneOf": [
                                { "const": "value1", "title": "First Option" },
                                { "const": "value2", "title": "Second Option" },
                                { "const": "value3", "title": "Third Option" }
                            ]
                        },
                        "legacyEnum": {
                            "type": "string", "description": "Pick one (legacy)",
                            "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]
                        },
                        "untitledMulti": {
                            "type": "array", "description": "Pick several",
                            "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
                        },
                        "titledMulti": {
                            "type": "array", "description": "Pick several (titled)",
                            "items": { "anyOf": [
                                { "const": "value1", "title": "First Choice" },
                                { "const": "value2", "title": "Second Choice" },
                                { "const": "value3", "title": "Third Choice" }
                            ] }
                        }
                    }
                });
                match ctx
                    .elicit("Please select options from the enum fields", schema)
                    .await
                {
                    Ok(answer) => elicited(answer),
                    Err(e) => failed("elicitation", e),
                }
            },
        ),
        DefinedTool::from_json(
            "json_schema_2020_12_tool",
            "Takes input described with JSON Schema 2020-12 ($defs, additionalProperties)",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "address": {
                        "type": "object",
                        "properties": {
                            "street": { "type": "string" },
                            "city": { "type": "string" }
                        }
                    }
                },
                "properties": {
                    "name": { "type": "string" },
                    "address": { "$ref": "#/$defs/address" }
                },
                "additionalProperties": false
            }),
            |input: Value, _ctx: ToolContext| async move { format!("Received: {input}") },
        ),
    ]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("LOUSHO_LOG"))
        .init();
    let port: u16 = std::env::var("PORT")
        .ok()
        .map(|p| p.parse())
        .transpose()?
        .unwrap_or(0);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        // serve_mcp serves an agent; this one (the offline test model) is
        // only listed and callable next to the fixture tools.
        let agent = Agent::builder()
            .model("test")
            .name("lousho-conformance")
            .description("The conformance fixture's agent (echoes)")
            .build()?;
        let server = serve_mcp(
            ServeOptions::new(agent)
                .tools(tools())
                .http(HttpOptions::new().port(port).stateful(true)),
        )
        .await?;
        println!("listening on {}", server.url().unwrap_or_default());
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r?,
            _ = term.recv() => {}
        }
        server.close().await?;
        Ok(())
    })
}
