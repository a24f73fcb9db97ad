//! What a run did, as `tracing` spans on the OpenTelemetry GenAI and MCP
//! semantic conventions; with the `otel` feature, their export over OTLP
//! ([`otel`]) and W3C trace context carried across MCP calls in `_meta`.
//!
//! | span | when | carries |
//! | --- | --- | --- |
//! | `invoke_agent {agent}` | one per run | agent name, provider, model, summed token usage, cost, turns, status |
//! | `chat {model}` | one per model request | provider, model, token usage, finish reasons |
//! | `execute_tool {tool}` | one per tool call | tool name, call id, the decision, error |
//! | `tools/call {tool}` (client) | one per MCP tool call | `mcp.method.name`, tool name, request id; injects `traceparent` |
//! | `tools/call {tool}` (server) | one per served MCP call | `mcp.method.name`, tool name, request id, session; child of the caller's span |
//!
//! The spans are always compiled in (target `lousho::telemetry`, level
//! INFO); without a subscriber that enables them, each costs a relaxed
//! atomic load. Prompts, completions, tool arguments and tool results are
//! recorded only when the agent opts in
//! ([`AgentBuilder::record_content`](crate::AgentBuilder::record_content),
//! or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`).
//!
//! `docs/observability.md` lists every attribute and how to see a run in Jaeger.

mod chat;
mod content;
#[cfg(feature = "otel")]
pub mod otel;
pub(crate) mod propagate;
pub(crate) mod span;

pub(crate) use chat::traced_stream;
pub(crate) use content::tool_result as content_tool_result;

/// The target of every lousho span (filter on it: `lousho::telemetry=info`).
pub const TARGET: &str = "lousho::telemetry";

/// The variable that opts every agent into recording content (the name the
/// OpenTelemetry GenAI instrumentations share); `true` or `1` turns it on.
pub const CAPTURE_CONTENT_VAR: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// Whether [`CAPTURE_CONTENT_VAR`] asks for content.
pub(crate) fn capture_content_from_env() -> bool {
    std::env::var(CAPTURE_CONTENT_VAR)
        .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1"))
        .unwrap_or(false)
}
