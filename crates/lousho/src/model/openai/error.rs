//! OpenAI-style error bodies (`{"error": {"message", "type", "code"}}`, also
//! used by OpenRouter, Ollama, vLLM and llama.cpp) to [`ModelError`].

use crate::model::ModelError;
use crate::model::provider::http::{error_for_status, truncate};
use serde_json::Value;
use std::time::Duration;

/// The message, code and type of an error object.
struct ErrorInfo {
    message: String,
    code: Option<String>,
    kind: Option<String>,
    numeric_code: Option<u16>,
}

fn info(error: &Value, fallback: &str) -> ErrorInfo {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let message = text(error.get("message"))
        .or_else(|| error.as_str().map(str::to_owned))
        .unwrap_or_else(|| truncate(fallback.trim(), 500).to_owned());
    let code = error.get("code");
    ErrorInfo {
        message,
        code: text(code),
        kind: text(error.get("type")),
        numeric_code: code
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok()),
    }
}

fn is_context_length(info: &ErrorInfo) -> bool {
    let m = info.message.to_ascii_lowercase();
    let code = info.code.as_deref().unwrap_or_default();
    let kind = info.kind.as_deref().unwrap_or_default();
    code == "context_length_exceeded"
        || kind == "exceed_context_size_error"
        || m.contains("maximum context length")
        || m.contains("context length exceeded")
        || m.contains("context_length_exceeded")
        || m.contains("context window")
}

fn is_quota(info: &ErrorInfo) -> bool {
    info.code.as_deref() == Some("insufficient_quota")
        || info.kind.as_deref() == Some("insufficient_quota")
}

fn classify_info(
    provider: &str,
    status: u16,
    info: ErrorInfo,
    retry_after: Option<Duration>,
) -> ModelError {
    if is_quota(&info) {
        return ModelError::QuotaExceeded {
            provider: provider.to_owned(),
            message: info.message,
        };
    }
    if (status == 400 || status == 413) && is_context_length(&info) {
        return ModelError::ContextLengthExceeded {
            provider: provider.to_owned(),
            message: info.message,
        };
    }
    error_for_status(provider, status, info.message, retry_after)
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
    let mut info = info(&error, body);
    if info.message.is_empty() {
        info.message = format!("HTTP {status} with an empty body");
    }
    classify_info(provider, status, info, retry_after)
}

/// An `{"error": …}` object inside the event stream (OpenRouter and others
/// report failures that happen after the 200 this way).
pub(super) fn in_stream(provider: &str, error: &Value) -> ModelError {
    let info = info(error, &error.to_string());
    let status = info.numeric_code.unwrap_or(match info.kind.as_deref() {
        Some("rate_limit_exceeded" | "rate_limit_error") => 429,
        Some("invalid_request_error") => 400,
        Some("authentication_error") => 401,
        _ => 500,
    });
    classify_info(provider, status, info, None)
}
