//! Anthropic error bodies (`{"type": "error", "error": {"type", "message"}}`)
//! and `error` stream events to [`ModelError`].

use crate::model::ModelError;
use crate::model::provider::http::{error_for_status, truncate};
use serde_json::Value;
use std::time::Duration;

fn is_context_length(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("prompt is too long") || m.contains("context window") || m.contains("context length")
}

fn from_parts(
    provider: &str,
    status: u16,
    kind: &str,
    message: String,
    retry_after: Option<Duration>,
) -> ModelError {
    if (status == 400 || status == 413) && is_context_length(&message) {
        return ModelError::ContextLengthExceeded {
            provider: provider.to_owned(),
            message,
        };
    }
    let message = if kind.is_empty() {
        message
    } else {
        format!("{kind}: {message}")
    };
    if kind == "overloaded_error" {
        // 529, or an `error` event after the 200: typed by its kind.
        return ModelError::Overloaded {
            provider: provider.to_owned(),
            status,
            message,
        };
    }
    error_for_status(provider, status, message, retry_after)
}

fn parts(error: &Value, fallback: &str) -> (String, String) {
    let kind = error
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| truncate(fallback.trim(), 500).to_owned());
    (kind, message)
}

/// A non-2xx response.
pub(super) fn classify(
    provider: &str,
    status: u16,
    body: &str,
    retry_after: Option<Duration>,
) -> ModelError {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed
        .as_ref()
        .and_then(|v| v.get("error"))
        .cloned()
        .unwrap_or(Value::Null);
    let (kind, mut message) = parts(&error, body);
    if message.is_empty() {
        message = format!("HTTP {status} with an empty body");
    }
    from_parts(provider, status, &kind, message, retry_after)
}

/// An `error` event in the stream (e.g. `overloaded_error` after the 200).
pub(super) fn in_stream(provider: &str, error: &Value) -> ModelError {
    let (kind, message) = parts(error, &error.to_string());
    let status = match kind.as_str() {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    };
    from_parts(provider, status, &kind, message, None)
}
