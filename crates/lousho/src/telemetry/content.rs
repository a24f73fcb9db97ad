//! Content on spans (opt-in): messages, instructions, tool arguments and
//! results in the shapes the GenAI conventions give (`gen_ai.input.messages`:
//! `[{"role", "parts": [{"type": "text", "content"}, {"type": "tool_call", …}]}]`).

use crate::model::{Message, Part, Role, ToolCall};
use crate::tool::ToolOutput;
use serde_json::{Value, json};

/// `gen_ai.input.messages` / `gen_ai.output.messages`.
pub(crate) fn messages(messages: &[Message]) -> String {
    Value::Array(messages.iter().map(message).collect()).to_string()
}

/// `gen_ai.output.messages` for one model turn: its text and tool calls.
pub(crate) fn output(text: &str, calls: &[ToolCall], finish_reason: Option<&str>) -> String {
    let mut parts: Vec<Value> = Vec::with_capacity(calls.len() + 1);
    if !text.is_empty() {
        parts.push(json!({"type": "text", "content": text}));
    }
    parts.extend(calls.iter().map(tool_call));
    json!([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}]).to_string()
}

/// `gen_ai.system_instructions`.
pub(crate) fn system(text: &str) -> String {
    json!([{"type": "text", "content": text}]).to_string()
}

/// `gen_ai.tool.call.result`.
pub(crate) fn tool_result(output: &ToolOutput) -> String {
    output.to_model_text()
}

fn message(m: &Message) -> Value {
    let role = match m.role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let parts: Vec<Value> = m
        .parts
        .iter()
        .map(|p| match p {
            Part::Text { text } => json!({"type": "text", "content": text}),
            Part::Image { mime_type, .. } => {
                json!({"type": "blob", "modality": "image", "mime_type": mime_type})
            }
            Part::ToolCall(c) => tool_call(c),
            Part::ToolResult(r) => json!({
                "type": "tool_call_response",
                "id": r.call_id,
                "result": r.output.to_model_text(),
            }),
            // A provider's server-side block (native tool search).
            Part::Provider(b) => json!({"type": "server_tool", "content": b.block}),
            // Context compaction's summary (requests carry it as text).
            Part::Summary(s) => json!({"type": "text", "content": s.text}),
        })
        .collect();
    json!({"role": role, "parts": parts})
}

fn tool_call(c: &ToolCall) -> Value {
    json!({"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments})
}
