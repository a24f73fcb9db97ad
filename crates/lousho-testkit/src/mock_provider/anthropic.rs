//! The Anthropic Messages wire format: named SSE events (`message_start`,
//! `content_block_*`, `message_delta`, `message_stop`, `ping`, `error`) and
//! `{"type": "error", "error": …}` bodies.

use super::reply::{Body, Canned, MockReply, Step};
use serde_json::{Value, json};
use std::collections::HashMap;

pub(crate) const PATH: &str = "/v1/messages";
pub(crate) const KEEP_ALIVE: &str = "event: ping\ndata: {\"type\": \"ping\"}\n\n";

fn frame(value: &Value) -> String {
    let name = value
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    format!("event: {name}\ndata: {value}\n\n")
}

/// An error body as Anthropic sends it.
pub(crate) fn error_body(kind: &str, message: &str) -> String {
    json!({ "type": "error", "error": { "type": kind, "message": message }, "request_id": "req_mock" }).to_string()
}

/// One of Anthropic's own errors: (status, body, headers).
pub(crate) fn canned(canned: Canned) -> (u16, String, Vec<(String, String)>) {
    match canned {
        Canned::RateLimited { retry_after_secs } => {
            let reset =
                std::time::SystemTime::now() + std::time::Duration::from_secs(retry_after_secs);
            (
                429,
                error_body(
                    "rate_limit_error",
                    "This request would exceed the rate limit for your organization (mock) of 3 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
                ),
                vec![
                    ("retry-after".into(), retry_after_secs.to_string()),
                    ("anthropic-ratelimit-requests-limit".into(), "3".into()),
                    ("anthropic-ratelimit-requests-remaining".into(), "0".into()),
                    ("anthropic-ratelimit-requests-reset".into(), rfc3339(reset)),
                    ("anthropic-ratelimit-tokens-limit".into(), "40000".into()),
                    (
                        "anthropic-ratelimit-tokens-remaining".into(),
                        "39000".into(),
                    ),
                    ("anthropic-ratelimit-tokens-reset".into(), rfc3339(reset)),
                ],
            )
        }
        Canned::Overloaded => (
            529,
            error_body("overloaded_error", "Overloaded"),
            Vec::new(),
        ),
        Canned::ContextTooLong => (
            400,
            error_body(
                "invalid_request_error",
                "prompt is too long: 210000 tokens > 200000 maximum",
            ),
            Vec::new(),
        ),
    }
}

/// `time` as RFC 3339 in UTC, to the second (`2026-12-04T02:00:00Z`).
fn rfc3339(time: std::time::SystemTime) -> String {
    let secs = time
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// 401 unless `x-api-key` is `key`; 400 without `anthropic-version`.
pub(crate) fn check_auth(
    api_key: Option<&str>,
    version: Option<&str>,
    key: &str,
) -> Option<(u16, String)> {
    if api_key != Some(key) {
        let message = if api_key.is_none() {
            "x-api-key header is required"
        } else {
            "invalid x-api-key"
        };
        return Some((401, error_body("authentication_error", message)));
    }
    if version.is_none() {
        return Some((
            400,
            error_body(
                "invalid_request_error",
                "anthropic-version: header is required",
            ),
        ));
    }
    None
}

/// 400 for what the API refuses: see [`check_cache`], [`check_thinking`]
/// and [`check_tool_search`]. `signatures` are the thinking signatures the
/// mock issued, with the text each signs.
pub(crate) fn check_request(
    request: &Value,
    signatures: &HashMap<String, String>,
) -> Option<(u16, String)> {
    check_cache(request)
        .or_else(|| check_thinking(request, signatures))
        .or_else(|| check_tool_search(request))
}

/// 400 for a thinking block whose signature the mock did not issue for
/// exactly its text, and, with thinking on, for a tool loop's last
/// assistant turn that does not start with its thinking (the API's rule:
/// thinking blocks go back, unchanged, before the turn's other blocks).
fn check_thinking(request: &Value, signatures: &HashMap<String, String>) -> Option<(u16, String)> {
    let bad = |message: String| Some((400, error_body("invalid_request_error", &message)));
    let messages = request.get("messages").and_then(Value::as_array)?;
    for (i, message) in messages.iter().enumerate() {
        for (j, block) in list(message.get("content")).enumerate() {
            if block.get("type") != Some(&json!("thinking")) {
                continue;
            }
            let signature = block.get("signature").and_then(Value::as_str);
            let text = block.get("thinking").and_then(Value::as_str);
            match signature {
                None => {
                    return bad(format!(
                        "messages.{i}.content.{j}.thinking.signature: Field required"
                    ));
                }
                Some(sig) if signatures.get(sig).map(String::as_str) != text => {
                    return bad(format!(
                        "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                    ));
                }
                Some(_) => {}
            }
        }
    }
    let enabled = request
        .pointer("/thinking/type")
        .and_then(Value::as_str)
        .is_some_and(|t| t == "enabled" || t == "adaptive");
    let last_assistant = messages
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m.get("role") == Some(&json!("assistant")));
    if let Some((i, assistant)) = last_assistant
        && enabled
        && list(assistant.get("content")).any(|b| b.get("type") == Some(&json!("tool_use")))
    {
        let first = list(assistant.get("content"))
            .next()
            .and_then(|b| b.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if first != "thinking" && first != "redacted_thinking" {
            return bad(format!(
                "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block"
            ));
        }
    }
    None
}

/// Every block of the request that can carry `cache_control`: the tools,
/// the system blocks and the messages' content blocks.
fn blocks(request: &Value) -> impl Iterator<Item = &Value> {
    let messages = list(request.get("messages")).flat_map(|m| list(m.get("content")));
    list(request.get("tools"))
        .chain(list(request.get("system")))
        .chain(messages)
}

/// The items of an array (none for anything else).
fn list(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value.and_then(Value::as_array).into_iter().flatten()
}

/// 400 for more than 4 cache breakpoints, a breakpoint on a thinking block,
/// or a `cache_control` that is not `{"type": "ephemeral"}` (with an
/// optional `ttl` of `5m` or `1h`).
fn check_cache(request: &Value) -> Option<(u16, String)> {
    let bad = |message: String| Some((400, error_body("invalid_request_error", &message)));
    let marked: Vec<&Value> = blocks(request)
        .filter(|b| b.get("cache_control").is_some())
        .collect();
    if marked.len() > 4 {
        return bad(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {}.",
            marked.len()
        ));
    }
    for block in marked {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        if kind == "thinking" || kind == "redacted_thinking" {
            return bad(format!("{kind} blocks cannot be marked with cache_control"));
        }
        let control = &block["cache_control"];
        let ttl_ok = control.get("ttl").is_none_or(|t| t == "5m" || t == "1h");
        if control.get("type") != Some(&json!("ephemeral")) || !ttl_ok {
            return bad(format!("cache_control: invalid value {control}"));
        }
    }
    None
}

/// 400 for what the API refuses about tool search: every tool deferred, a
/// `tool_reference` (in an earlier turn's search result) to a tool the
/// request does not define, or `defer_loading` without a tool search tool.
fn check_tool_search(request: &Value) -> Option<(u16, String)> {
    let tools = request.get("tools").and_then(Value::as_array)?;
    let bad = |message: String| Some((400, error_body("invalid_request_error", &message)));
    let deferred = |t: &Value| t.get("defer_loading") == Some(&json!(true));
    if !tools.is_empty() && tools.iter().all(deferred) {
        return bad(
            "All tools have defer_loading set. At least one tool must be non-deferred.".into(),
        );
    }
    let searches = tools.iter().any(|t| {
        t.get("type")
            .and_then(Value::as_str)
            .is_some_and(|k| k.starts_with("tool_search_tool_"))
    });
    if !searches && tools.iter().any(deferred) {
        return bad("defer_loading requires a tool search tool in `tools`".into());
    }
    let defined: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let messages = request.get("messages").and_then(Value::as_array)?;
    for block in messages
        .iter()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|b| b.get("type") == Some(&json!("tool_search_tool_result")))
    {
        let refs = block
            .pointer("/content/tool_references")
            .and_then(Value::as_array);
        for name in refs
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("tool_name").and_then(Value::as_str))
        {
            if !defined.contains(&name) {
                return bad(format!(
                    "Tool reference '{name}' has no corresponding tool definition"
                ));
            }
        }
    }
    None
}

/// The event stream for `reply`; the thinking signatures it issues are
/// added to `signatures`.
pub(crate) fn frames(
    reply: &MockReply,
    request: &Value,
    serial: usize,
    signatures: &mut HashMap<String, String>,
) -> Vec<String> {
    let Body::Stream(steps) = &reply.body else {
        return Vec::new();
    };
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model");
    let (input, output) = reply.usage.unwrap_or((0, 0));
    let (read, write) = reply.cache;
    // `input_tokens` is what the cache did not serve.
    let uncached = input.saturating_sub(read + write);
    let mut out = vec![frame(&json!({
        "type": "message_start",
        "message": {
            "id": format!("msg_mock{serial}"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": { "input_tokens": uncached, "cache_creation_input_tokens": write,
                "cache_read_input_tokens": read, "output_tokens": 1,
                "service_tier": "standard" },
        },
    }))];
    let mut next = 0usize;
    for step in steps {
        // A tool search takes two blocks (the call and its result).
        let index = next;
        next += if matches!(step, Step::ToolSearch { .. }) {
            2
        } else {
            1
        };
        match step {
            Step::Text(pieces) => {
                out.push(frame(
                    &json!({ "type": "content_block_start", "index": index,
                    "content_block": { "type": "text", "text": "" } }),
                ));
                if index == 0 {
                    out.push(frame(&json!({ "type": "ping" })));
                }
                for p in pieces {
                    out.push(frame(
                        &json!({ "type": "content_block_delta", "index": index,
                        "delta": { "type": "text_delta", "text": p } }),
                    ));
                }
                out.push(frame(
                    &json!({ "type": "content_block_stop", "index": index }),
                ));
            }
            Step::ToolCall {
                id,
                name,
                fragments,
            } => {
                out.push(frame(
                    &json!({ "type": "content_block_start", "index": index,
                    "content_block": { "type": "tool_use", "id": id, "name": name, "input": {} } }),
                ));
                out.push(frame(
                    &json!({ "type": "content_block_delta", "index": index,
                    "delta": { "type": "input_json_delta", "partial_json": "" } }),
                ));
                for f in fragments {
                    out.push(frame(
                        &json!({ "type": "content_block_delta", "index": index,
                        "delta": { "type": "input_json_delta", "partial_json": f } }),
                    ));
                }
                out.push(frame(
                    &json!({ "type": "content_block_stop", "index": index }),
                ));
            }
            Step::ToolSearch { id, query, found } => {
                out.push(frame(
                    &json!({ "type": "content_block_start", "index": index,
                    "content_block": { "type": "server_tool_use", "id": id,
                        "name": "tool_search_tool_bm25", "input": {} } }),
                ));
                out.push(frame(
                    &json!({ "type": "content_block_delta", "index": index,
                    "delta": { "type": "input_json_delta",
                        "partial_json": json!({ "query": query }).to_string() } }),
                ));
                out.push(frame(
                    &json!({ "type": "content_block_stop", "index": index }),
                ));
                // The result is its own block, whole in its start event.
                let refs: Vec<Value> = found
                    .iter()
                    .map(|name| json!({ "type": "tool_reference", "tool_name": name }))
                    .collect();
                out.push(frame(
                    &json!({ "type": "content_block_start", "index": index + 1,
                    "content_block": { "type": "tool_search_tool_result", "tool_use_id": id,
                        "content": { "type": "tool_search_tool_search_result",
                            "tool_references": refs } } }),
                ));
                out.push(frame(
                    &json!({ "type": "content_block_stop", "index": index + 1 }),
                ));
            }
            Step::Thinking(pieces) => {
                out.push(frame(
                    &json!({ "type": "content_block_start", "index": index,
                    "content_block": { "type": "thinking", "thinking": "", "signature": "" } }),
                ));
                for p in pieces {
                    out.push(frame(
                        &json!({ "type": "content_block_delta", "index": index,
                        "delta": { "type": "thinking_delta", "thinking": p } }),
                    ));
                }
                let signature = format!("EqMock{serial}x{index}Sig==");
                signatures.insert(signature.clone(), pieces.concat());
                out.push(frame(
                    &json!({ "type": "content_block_delta", "index": index,
                    "delta": { "type": "signature_delta", "signature": signature } }),
                ));
                out.push(frame(
                    &json!({ "type": "content_block_stop", "index": index }),
                ));
            }
            Step::RedactedThinking(data) => {
                out.push(frame(
                    &json!({ "type": "content_block_start", "index": index,
                    "content_block": { "type": "redacted_thinking", "data": data } }),
                ));
                out.push(frame(
                    &json!({ "type": "content_block_stop", "index": index }),
                ));
            }
            Step::StreamError { kind, message } => {
                out.push(frame(
                    &json!({ "type": "error", "error": { "type": kind, "message": message } }),
                ));
                return out;
            }
        }
    }
    if reply.hold {
        return out; // the stream stays open, unfinished
    }
    let finish = reply.finish.clone().unwrap_or_else(|| {
        if reply.has_tool_calls() {
            "tool_use".into()
        } else {
            "end_turn".into()
        }
    });
    // The final usage is cumulative and repeats the input counts.
    out.push(frame(&json!({ "type": "message_delta",
        "delta": { "stop_reason": finish, "stop_sequence": null },
        "usage": { "input_tokens": uncached, "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read, "output_tokens": output } })));
    out.push(frame(&json!({ "type": "message_stop" })));
    out
}
