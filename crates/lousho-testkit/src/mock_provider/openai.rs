//! The OpenAI Chat Completions wire format: `chat.completion.chunk` events,
//! `[DONE]`, and `{"error": …}` bodies.

use super::reply::{Body, Canned, MockReply, Step};
use serde_json::{Value, json};

pub(crate) const PATH: &str = "/v1/chat/completions";
/// OpenRouter-style keep-alive comment.
pub(crate) const KEEP_ALIVE: &str = ": OPENROUTER PROCESSING\n\n";

fn frame(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// An error body as OpenAI sends it.
pub(crate) fn error_body(kind: &str, message: &str) -> String {
    json!({ "error": { "message": message, "type": kind, "param": null, "code": kind } })
        .to_string()
}

/// One of OpenAI's own errors: (status, body, headers).
pub(crate) fn canned(canned: Canned) -> (u16, String, Vec<(String, String)>) {
    match canned {
        Canned::RateLimited { retry_after_secs } => (
            429,
            json!({ "error": {
                "message": format!("Rate limit reached for gpt-4o-mini in organization org-mock on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in {retry_after_secs}s. Visit https://platform.openai.com/account/rate-limits to learn more."),
                "type": "requests", "param": null, "code": "rate_limit_exceeded" } })
            .to_string(),
            vec![
                ("x-ratelimit-limit-requests".into(), "3".into()),
                ("x-ratelimit-remaining-requests".into(), "0".into()),
                ("x-ratelimit-reset-requests".into(), format!("{retry_after_secs}s")),
                ("x-ratelimit-limit-tokens".into(), "200000".into()),
                ("x-ratelimit-remaining-tokens".into(), "199000".into()),
                ("x-ratelimit-reset-tokens".into(), "300ms".into()),
            ],
        ),
        Canned::Overloaded => (
            503,
            json!({ "error": { "message": "The server is overloaded or not ready yet.",
                "type": "server_error", "param": null, "code": null } })
            .to_string(),
            Vec::new(),
        ),
        Canned::ContextTooLong => (
            400,
            json!({ "error": {
                "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 210000 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded" } })
            .to_string(),
            Vec::new(),
        ),
    }
}

/// 401 unless the bearer token is `key`; the message echoes the token given
/// (worse than OpenAI, which masks it) so tests prove the client scrubs it.
pub(crate) fn check_auth(authorization: Option<&str>, key: &str) -> Option<(u16, String)> {
    let given = authorization
        .and_then(|a| a.strip_prefix("Bearer "))
        .unwrap_or_default();
    if given == key {
        return None;
    }
    let message = if given.is_empty() {
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).".to_owned()
    } else {
        format!(
            "Incorrect API key provided: {given}. You can find your API key at https://platform.openai.com/account/api-keys."
        )
    };
    Some((401, json!({ "error": { "message": message, "type": "invalid_request_error", "param": null, "code": "invalid_api_key" } }).to_string()))
}

/// The event stream for `reply`.
pub(crate) fn frames(reply: &MockReply, request: &Value, serial: usize) -> Vec<String> {
    let Body::Stream(steps) = &reply.body else {
        return Vec::new();
    };
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model");
    let include_usage = request.pointer("/stream_options/include_usage") == Some(&json!(true));
    let id = format!("chatcmpl-mock{serial}");
    let chunk = |choices: Value| {
        let mut c = json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000u64,
            "model": model, "system_fingerprint": "fp_mock", "choices": choices,
        });
        if include_usage {
            c["usage"] = Value::Null;
        }
        c
    };
    let delta = |delta: Value, finish: Value| {
        chunk(json!([{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }]))
    };
    let mut out = vec![frame(&delta(
        json!({ "role": "assistant", "content": "", "refusal": null }),
        Value::Null,
    ))];
    let mut call_index = 0;
    for step in steps {
        match step {
            Step::Text(pieces) => {
                for p in pieces {
                    out.push(frame(&delta(json!({ "content": p }), Value::Null)));
                }
            }
            Step::ToolCall {
                id,
                name,
                fragments,
            } => {
                out.push(frame(&delta(
                    json!({ "tool_calls": [{ "index": call_index, "id": id, "type": "function",
                        "function": { "name": name, "arguments": "" } }] }),
                    Value::Null,
                )));
                for f in fragments {
                    out.push(frame(&delta(
                        json!({ "tool_calls": [{ "index": call_index, "function": { "arguments": f } }] }),
                        Value::Null,
                    )));
                }
                call_index += 1;
            }
            Step::Thinking(pieces) => {
                for p in pieces {
                    out.push(frame(&delta(
                        json!({ "reasoning_content": p }),
                        Value::Null,
                    )));
                }
            }
            // Anthropic only.
            Step::ToolSearch { .. } | Step::RedactedThinking(_) => {}
            Step::StreamError { kind, message } => {
                out.push(frame(
                    &json!({ "error": { "message": message, "type": kind, "code": kind } }),
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
            "tool_calls".into()
        } else {
            "stop".into()
        }
    });
    out.push(frame(&delta(json!({}), json!(finish))));
    if include_usage {
        let (input, output) = reply.usage.unwrap_or((0, 0));
        let (read, _) = reply.cache;
        let mut last = chunk(json!([]));
        last["usage"] = json!({
            "prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output,
            "prompt_tokens_details": { "cached_tokens": read, "audio_tokens": 0 },
            "completion_tokens_details": { "reasoning_tokens": reply.reasoning, "audio_tokens": 0,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0 },
        });
        out.push(frame(&last));
    }
    out.push("data: [DONE]\n\n".to_owned());
    out
}
