//! The Messages API request body.

use crate::model::{
    Message, ModelRequest, Part, PromptCache, ReasoningEffort, Role, Thinking, ToolDefinition,
};
use crate::tool::ToolOutput;
use serde_json::{Map, Value, json};

/// The server tool of Anthropic's native tool search (BM25 over name,
/// description, argument names and descriptions; natural-language queries).
pub(super) const TOOL_SEARCH_TYPE: &str = "tool_search_tool_bm25_20251119";
/// Its name (fixed by the API).
pub(super) const TOOL_SEARCH_NAME: &str = "tool_search_tool_bm25";

/// A prompt-cache breakpoint: the prefix up to and including the block
/// that carries it is cached for 5 minutes (refreshed on every read).
fn breakpoint() -> Value {
    json!({ "type": "ephemeral" })
}

/// Whether `request` marks cache breakpoints.
pub(super) fn caches(request: &ModelRequest) -> bool {
    request.settings.prompt_cache == PromptCache::Auto
}

/// The `tools` array: each definition with its normalised schema, the
/// deferred ones marked `defer_loading` after the native search tool; with
/// `cache`, the last loaded tool carries a cache breakpoint (the tools come
/// first in the cached prefix; deferred ones are not part of it).
pub(super) fn tool_list(tools: &[ToolDefinition], schemas: Vec<Value>, cache: bool) -> Value {
    let mut list: Vec<Value> = Vec::with_capacity(tools.len() + 1);
    if tools.iter().any(|d| d.defer_loading) {
        // Native tool search: the API searches the deferred tools.
        list.push(json!({ "type": TOOL_SEARCH_TYPE, "name": TOOL_SEARCH_NAME }));
    }
    list.extend(tools.iter().zip(schemas).map(|(tool, schema)| {
        let mut entry =
            json!({ "name": tool.name, "description": tool.description, "input_schema": schema });
        if tool.defer_loading {
            entry["defer_loading"] = json!(true);
        }
        entry
    }));
    if cache
        && let Some(last) = list
            .iter_mut()
            .rev()
            .find(|t| t.get("defer_loading").is_none() && t.get("type").is_none())
    {
        last["cache_control"] = breakpoint();
    }
    Value::Array(list)
}

/// The JSON body for `request`, with `"tools": null` where the
/// [`tool_list`] goes when it has tools. With caching on (see [`caches`]),
/// the system prompt and the conversation carry cache breakpoints (see
/// [`mark_conversation`]).
pub(super) fn request_body(model: &str, request: &ModelRequest, default_max_tokens: u32) -> Value {
    let cache = caches(request);
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    // The thinking budget counts toward `max_tokens`: without a limit of
    // its own, the answer keeps the default room beside it.
    let max_tokens = match (request.settings.max_tokens, request.settings.thinking) {
        (Some(max), _) => max,
        (None, Thinking::Budget(budget)) => default_max_tokens.saturating_add(budget),
        (None, _) => default_max_tokens,
    };
    body.insert("max_tokens".into(), json!(max_tokens));
    match request.settings.thinking {
        Thinking::Budget(budget) => {
            body.insert(
                "thinking".into(),
                json!({ "type": "enabled", "budget_tokens": budget }),
            );
        }
        Thinking::Effort(effort) => {
            let effort = match effort {
                ReasoningEffort::Minimal | ReasoningEffort::Low => "low",
                other => other.as_str(),
            };
            body.insert("thinking".into(), json!({ "type": "adaptive" }));
            body.insert("output_config".into(), json!({ "effort": effort }));
        }
        _ => {}
    }
    if let Some(output) = &request.settings.output {
        let config = body
            .entry("output_config")
            .or_insert_with(|| Value::Object(Map::new()));
        config["format"] = json!({ "type": "json_schema", "schema": output.strict() });
    }
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        let system = if cache {
            json!([{ "type": "text", "text": system, "cache_control": breakpoint() }])
        } else {
            json!(system)
        };
        body.insert("system".into(), system);
    }
    let mut messages = messages(&request.messages);
    if cache {
        mark_conversation(&mut messages);
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Null);
    }
    if let Some(t) = request.settings.temperature {
        body.insert(
            "temperature".into(),
            json!(crate::model::openai::rounded(t)),
        );
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

/// Messages as `user`/`assistant` turns: tool results go in a user turn,
/// consecutive turns of one role are merged, empty turns are left out (the
/// API rejects both).
fn messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let role = match message.role {
            Role::Assistant => "assistant",
            Role::User | Role::Tool => "user",
        };
        let mut blocks: Vec<Value> = message.parts.iter().filter_map(block).collect();
        if blocks.is_empty() {
            continue;
        }
        if role == "assistant" {
            // A response's thinking comes before its text and tool calls,
            // and must go back there (the agent keeps text first).
            blocks.sort_by_key(|b| !is_thinking(b));
        }
        match out.last_mut() {
            Some((last, content)) if *last == role => {
                // tool_result blocks must come first in a user turn.
                let (mut results, rest): (Vec<Value>, Vec<Value>) =
                    blocks.into_iter().partition(|b| b["type"] == "tool_result");
                if results.is_empty() {
                    content.extend(rest);
                } else {
                    let earlier: Vec<Value> = std::mem::take(content);
                    let (mut first, others): (Vec<Value>, Vec<Value>) = earlier
                        .into_iter()
                        .partition(|b| b["type"] == "tool_result");
                    first.append(&mut results);
                    first.extend(others);
                    first.extend(rest);
                    *content = first;
                }
            }
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// Two breakpoints on the conversation (with the tools' and the system
/// prompt's, the API's limit of four): on the last block of the last turn,
/// so this request writes the whole conversation to the cache, and on the
/// last block of the user turn before it, where the previous request of a
/// tool loop or chat put its last breakpoint, so this one reads that prefix
/// however many blocks the turn added (the API looks back only 20 blocks
/// from a breakpoint for an earlier cached prefix). Thinking blocks cannot
/// carry a breakpoint: the last other block of a turn does.
fn mark_conversation(messages: &mut [Value]) {
    let Some((last, earlier)) = messages.split_last_mut() else {
        return;
    };
    mark_last_block(last);
    if let Some(previous) = earlier.iter_mut().rev().find(|m| m["role"] == "user") {
        mark_last_block(previous);
    }
}

/// A `thinking` or `redacted_thinking` block.
fn is_thinking(block: &Value) -> bool {
    matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

fn mark_last_block(message: &mut Value) {
    let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    let markable = blocks.iter_mut().rev().find(|b| {
        matches!(
            b.get("type").and_then(Value::as_str),
            Some("text" | "image" | "tool_use" | "tool_result")
        )
    });
    if let Some(Value::Object(block)) = markable {
        block.insert("cache_control".into(), breakpoint());
    }
}

fn block(part: &Part) -> Option<Value> {
    match part {
        Part::Text { text } if text.is_empty() => None,
        Part::Text { text } => Some(json!({ "type": "text", "text": text })),
        Part::Image { data, mime_type } => Some(image(data, mime_type)),
        Part::ToolCall(call) => {
            let input = match &call.arguments {
                Value::Object(_) => call.arguments.clone(),
                // The API needs an object; keep what the model sent, visibly.
                other => json!({ "arguments": other }),
            };
            Some(json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input }))
        }
        Part::ToolResult(result) => {
            let mut b = Map::new();
            b.insert("type".into(), json!("tool_result"));
            b.insert("tool_use_id".into(), json!(result.call_id));
            let content = tool_result_content(&result.output);
            if !content.is_empty() {
                b.insert("content".into(), Value::Array(content));
            }
            if result.output.is_error {
                b.insert("is_error".into(), json!(true));
            }
            Some(Value::Object(b))
        }
        Part::Provider(p) if p.provider == PROVIDER => Some(p.block.clone()),
        _ => None,
    }
}

/// The provider name of Anthropic's own blocks.
pub(super) const PROVIDER: &str = "anthropic";

fn image(data: &str, mime_type: &str) -> Value {
    json!({ "type": "image", "source": { "type": "base64", "media_type": mime_type, "data": data } })
}

/// Text and images (also embedded `image/*` resources) go as blocks
/// (Anthropic accepts images in tool results);
/// other content is described as text.
fn tool_result_content(output: &ToolOutput) -> Vec<Value> {
    let mut blocks: Vec<Value> = output
        .content
        .iter()
        .filter_map(|c| match c.as_image() {
            Some((data, mime_type)) => Some(image(data, mime_type)),
            None => {
                let text = c.to_model_text();
                (!text.is_empty()).then(|| json!({ "type": "text", "text": text }))
            }
        })
        .collect();
    if blocks.is_empty()
        && let Some(s) = &output.structured
    {
        blocks.push(json!({ "type": "text", "text": s.to_string() }));
    }
    blocks
}
