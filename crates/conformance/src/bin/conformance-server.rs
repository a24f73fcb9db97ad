//! The server the official MCP conformance suite judges
//! (`conformance server --url http://127.0.0.1:PORT/mcp`): the suite's
//! fixture tools (`test_simple_text`, `test_tool_with_progress`,
//! `test_elicitation`, …), resources (`test://static-text`, the template
//! `test://template/{id}/data`, …) and prompts (`test_simple_prompt`, …)
//! built only with lousho's public API — `define_tool` /
//! `DefinedTool::from_json`, `define_resource` / `define_resource_template`,
//! `define_prompt` and `serve_mcp` — talking back through `ToolContext`
//! (progress, log messages, elicitation, sampling).
//! Serves stateful Streamable HTTP (sessions, so the suite's client can
//! answer elicitation and sampling) on `127.0.0.1:$PORT` (0 = a free port),
//! prints `listening on <url>` once bound and stops on SIGINT or SIGTERM.

use lousho::mcp::{
    CompletionRequest, HttpOptions, PromptMessage, PromptRole, ResourceContent, define_prompt,
    define_resource, define_resource_template,
};
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
/// The same PNG, raw (the binary resource).
const PNG_BYTES: &[u8] = &[
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0,
    0, 0, 31, 21, 196, 137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 218, 99, 100, 248, 207, 80, 15, 0, 3,
    134, 1, 128, 90, 52, 125, 107, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];
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

#[derive(Deserialize)]
struct TemplateId {
    id: String,
}

#[derive(Deserialize, lousho::JsonSchema)]
#[schemars(crate = "lousho::schemars")]
struct TwoArgs {
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
}

#[derive(Deserialize, lousho::JsonSchema)]
#[schemars(crate = "lousho::schemars")]
struct EmbedArgs {
    /// URI of the resource to embed
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

/// The suite's resources and prompts, beside the tools.
fn offers(options: ServeOptions) -> ServeOptions {
    let png = PNG.to_owned();
    options
        .resource(
            define_resource("test://static-text", "static-text", |_ctx| async {
                "This is the content of the static text resource."
            })
            .mime_type("text/plain")
            .description("A static text resource for testing"),
        )
        .resource(
            define_resource("test://static-binary", "static-binary", |_ctx| async {
                ResourceContent::bytes(PNG_BYTES)
            })
            .mime_type("image/png")
            .description("A static binary resource (a PNG) for testing"),
        )
        .resource(
            define_resource("test://watched-resource", "watched-resource", |_ctx| async {
                "Watched resource content"
            })
            .mime_type("text/plain")
            .description("A resource to subscribe to; it changes every 3 seconds"),
        )
        .resource_template(
            define_resource_template(
                "test://template/{id}/data",
                "template",
                |t: TemplateId, _ctx| async move {
                    json!({ "id": t.id, "templateTest": true, "data": format!("Data for ID: {}", t.id) })
                        .to_string()
                },
            )
            .mime_type("application/json")
            .description("A resource template with an id")
            .complete(|r: CompletionRequest| async move {
                ["123", "456", "789"]
                    .into_iter()
                    .filter(|v| v.starts_with(&r.value))
                    .map(str::to_owned)
                    .collect()
            }),
        )
        .prompt(define_prompt(
            "test_simple_prompt",
            "A simple prompt without arguments",
            |_: NoInput| async { "This is a simple prompt for testing." },
        ))
        .prompt(
            define_prompt(
                "test_prompt_with_arguments",
                "A prompt with two required arguments",
                |a: TwoArgs| async move {
                    format!("Prompt with arguments: arg1='{}', arg2='{}'", a.arg1, a.arg2)
                },
            )
            .complete(|r: CompletionRequest| async move {
                ["test", "testValue1", "testValue2", "other"]
                    .into_iter()
                    .filter(|v| v.starts_with(&r.value))
                    .map(str::to_owned)
                    .collect()
            }),
        )
        .prompt(define_prompt(
            "test_prompt_with_embedded_resource",
            "A prompt embedding the resource it is given",
            |a: EmbedArgs| async move {
                vec![
                    PromptMessage::new(
                        PromptRole::User,
                        Content::Resource {
                            uri: a.resource_uri,
                            mime_type: Some("text/plain".to_owned()),
                            text: Some("Embedded resource content for testing.".to_owned()),
                            blob: None,
                        },
                    ),
                    PromptMessage::user("Please process the embedded resource above."),
                ]
            },
        ))
        .prompt(define_prompt(
            "test_prompt_with_image",
            "A prompt with an image",
            move |_: NoInput| {
                let png = png.clone();
                async move {
                    vec![
                        PromptMessage::new(PromptRole::User, Content::image(png, "image/png")),
                        PromptMessage::user("Please analyze the image above."),
                    ]
                }
            },
        ))
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
        let server = serve_mcp(offers(
            ServeOptions::new(agent)
                .tools(tools())
                .http(HttpOptions::new().port(port).stateful(true)),
        ))
        .await?;
        println!("listening on {}", server.url().unwrap_or_default());
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        // As the reference fixture: the watched resource changes every 3 s.
        let catalog = server.catalog().clone();
        let mut every = tokio::time::interval(Duration::from_secs(3));
        every.tick().await;
        loop {
            tokio::select! {
                r = tokio::signal::ctrl_c() => { r?; break; }
                _ = term.recv() => break,
                _ = every.tick() => catalog.resource_updated("test://watched-resource").await,
            }
        }
        server.close().await?;
        Ok(())
    })
}
