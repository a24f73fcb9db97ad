//! The Chat Completions request body.

use crate::model::{Message, ModelRequest, Part, Role, Thinking, ToolDefinition};
use crate::tool::{Content, ToolOutput};
use serde_json::{Map, Value, json};

/// Which field carries the output limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MaxTokensField {
    /// `max_completion_tokens` (OpenAI; `max_tokens` is rejected by reasoning models).
    MaxCompletionTokens,
    /// `max_tokens` (OpenRouter, Ollama and other compatible servers).
    MaxTokens,
}

/// Body options fixed at build time.
#[derive(Debug, Clone, Copy)]
pub(super) struct BodyOptions {
    pub max_tokens_field: MaxTokensField,
    pub include_usage: bool,
}

/// The `tools` array: each definition with its normalised schema (OpenAI
/// caches prompts without marks).
pub(super) fn tool_list(tools: &[ToolDefinition], schemas: Vec<Value>, _cache: bool) -> Value {
    tools
        .iter()
        .zip(schemas)
        .map(|(tool, parameters)| {
            json!({
                "type": "function",
                "function": { "name": tool.name, "description": tool.description, "parameters": parameters },
            })
        })
        .collect()
}

/// The JSON body for `request`, with `"tools": null` where the
/// [`tool_list`] goes when it has tools.
pub(super) fn request_body(model: &str, request: &ModelRequest, options: BodyOptions) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({ "role": "system", "content": system }));
    }
    for message in &request.messages {
        push_message(&mut messages, message);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Null);
    }
    if let Some(max) = request.settings.max_tokens {
        let field = match options.max_tokens_field {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        };
        body.insert(field.into(), json!(max));
    }
    if let Some(t) = request.settings.temperature {
        body.insert("temperature".into(), json!(rounded(t)));
    }
    if let Thinking::Effort(effort) = request.settings.thinking {
        body.insert("reasoning_effort".into(), json!(effort.as_str()));
    }
    if let Some(output) = &request.settings.output {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": output.name, "strict": true, "schema": output.strict(),
            }}),
        );
    }
    body.insert("stream".into(), json!(true));
    if options.include_usage {
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
    Value::Object(body)
}

fn push_message(out: &mut Vec<Value>, message: &Message) {
    match message.role {
        Role::User => out.push(json!({ "role": "user", "content": user_content(&message.parts) })),
        Role::Assistant => {
            let text = message.text();
            let calls: Vec<Value> = message
                .tool_calls()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": { "name": c.name, "arguments": arguments_text(&c.arguments) },
                    })
                })
                .collect();
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            m.insert(
                "content".into(),
                if text.is_empty() && !calls.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                },
            );
            if !calls.is_empty() {
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(m));
        }
        Role::Tool => {
            let mut images = Vec::new();
            for part in &message.parts {
                match part {
                    Part::ToolResult(r) => {
                        out.push(json!({
                            "role": "tool",
                            "tool_call_id": r.call_id,
                            "content": tool_text(&r.output),
                        }));
                        images.extend(result_images(&r.call_id, &r.output));
                    }
                    // Text beside tool results (rare) goes as a user message.
                    Part::Text { text } => out.push(json!({ "role": "user", "content": text })),
                    _ => {}
                }
            }
            // Tool messages take text only: the results' images follow in
            // one user message, each after a line naming its call.
            if !images.is_empty() {
                out.push(json!({ "role": "user", "content": images }));
            }
        }
    }
}

/// A plain string when the message is text only, else content parts.
fn user_content(parts: &[Part]) -> Value {
    let text_only = parts.iter().all(|p| matches!(p, Part::Text { .. }));
    if text_only {
        let mut text = String::new();
        for p in parts {
            if let Part::Text { text: t } = p {
                text.push_str(t);
            }
        }
        return json!(text);
    }
    let items = parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(json!({ "type": "text", "text": text })),
            Part::Image { data, mime_type } => Some(json!({
                "type": "image_url",
                "image_url": { "url": format!("data:{mime_type};base64,{data}") },
            })),
            Part::ToolResult(r) => Some(json!({ "type": "text", "text": tool_text(&r.output) })),
            _ => None,
        })
        .collect();
    Value::Array(items)
}

/// Chat Completions tool messages carry text only: images and audio are
/// described (`[image image/png, N bytes base64]`; an image then follows in a
/// user message, see [`result_images`]), and a failed call says so.
fn tool_text(output: &ToolOutput) -> String {
    let mut text = output.to_model_text();
    if output.content.iter().any(|c| c.as_image().is_some()) {
        text.push_str("\n(the images of this result follow in the next user message)");
    }
    if output.is_error {
        format!("Error: {text}")
    } else {
        text
    }
}

/// The image parts of a tool result (images, and embedded image
/// resources), each after a text part naming the call, for the user message
/// that follows the tool messages.
fn result_images(call_id: &str, output: &ToolOutput) -> Vec<Value> {
    let mut items = Vec::new();
    for (data, mime_type) in output.content.iter().filter_map(Content::as_image) {
        items.push(json!({ "type": "text", "text": format!("An image from the result of tool call {call_id}:") }));
        items.push(json!({
            "type": "image_url",
            "image_url": { "url": format!("data:{mime_type};base64,{data}") },
        }));
    }
    items
}

/// Arguments as the model sent them: JSON text, or the raw text when it was
/// not JSON (kept as a string by the decoder).
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// An `f32` setting as the decimal the user wrote (`0.1`, not
/// `0.10000000149011612`).
pub(crate) fn rounded(value: f32) -> f64 {
    (f64::from(value) * 1e6).round() / 1e6
}
