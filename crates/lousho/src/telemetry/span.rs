//! The spans, one constructor each, and what is recorded on them when they
//! end. Attribute names are the conventions' (`gen_ai.*`, `mcp.*`,
//! `error.type`); lousho's own are under `lousho.*`. `otel.name`,
//! `otel.kind` and `otel.status_*` are read by `tracing-opentelemetry` as the
//! span's name, kind and status.

use super::TARGET;
use crate::model::{ToolCall, Usage};
use std::fmt::Display;
use tracing::Span;
use tracing::field::Empty;

/// The longest error text put on a span's status.
const STATUS_MESSAGE_MAX: usize = 512;

/// `"vendor/model"` → (provider, model); a bare name is both.
pub(crate) fn split_model(name: &str) -> (&str, &str) {
    name.split_once('/').unwrap_or((name, name))
}

/// `invoke_agent {agent}`: one run.
pub(crate) fn invoke_agent(agent: Option<&str>, model_name: &str) -> Span {
    let (provider, model) = split_model(model_name);
    tracing::info_span!(
        target: TARGET,
        "invoke_agent",
        otel.name = agent.map_or_else(|| "invoke_agent".to_owned(), |a| format!("invoke_agent {a}")),
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = provider,
        gen_ai.agent.name = agent,
        gen_ai.request.model = model,
        gen_ai.response.model = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        lousho.cost.usd = Empty,
        lousho.run.turns = Empty,
        lousho.run.status = Empty,
        error.type = Empty,
    )
}

/// Records a finished (or paused) run on its `invoke_agent` span: its
/// tokens, cost, turns and status (`completed` or `interrupted`).
pub(crate) fn record_run_end(
    span: &Span,
    usage: Usage,
    cost_usd: Option<f64>,
    turns: usize,
    status: &'static str,
) {
    if span.is_disabled() {
        return;
    }
    record_usage(span, usage, cost_usd);
    span.record("lousho.run.turns", i64::try_from(turns).unwrap_or(i64::MAX));
    span.record("lousho.run.status", status);
}

/// `gen_ai.response.model` on a run's or a request's span: the model part
/// of the `vendor/model` that answered (with a model list, maybe not the
/// requested one).
pub(crate) fn record_response_model(span: &Span, model_name: Option<&str>) {
    if let Some(name) = model_name
        && !span.is_disabled()
    {
        span.record("gen_ai.response.model", split_model(name).1);
    }
}

/// Token counts (and the cost, when known) on a run's or a request's span.
pub(crate) fn record_usage(span: &Span, usage: Usage, cost_usd: Option<f64>) {
    // As i64: `tracing-opentelemetry` exports a u64 field as a string.
    let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    span.record("gen_ai.usage.input_tokens", int(usage.input_tokens));
    span.record("gen_ai.usage.output_tokens", int(usage.output_tokens));
    if let Some(cost) = cost_usd {
        span.record("lousho.cost.usd", cost);
    }
}

/// `error.type` and an error status with the (shortened) message.
pub(crate) fn record_error(span: &Span, kind: &str, message: &dyn Display) {
    if span.is_disabled() {
        return;
    }
    let mut text = message.to_string();
    if text.len() > STATUS_MESSAGE_MAX {
        let mut cut = STATUS_MESSAGE_MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    span.record("error.type", kind);
    // Sets the error status with its description.
    span.record("otel.status_description", text.as_str());
}

/// `chat {model}`: one model request.
pub(crate) fn chat(model_name: &str) -> Span {
    let (provider, model) = split_model(model_name);
    tracing::info_span!(
        target: TARGET,
        "chat",
        otel.name = format!("chat {model}"),
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        lousho.cost.usd = Empty,
        error.type = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
    )
}

/// `gen_ai.response.finish_reasons`: a string array when exported through
/// OpenTelemetry, else a comma-separated field.
pub(crate) fn record_finish_reasons(span: &Span, reasons: &[&str]) {
    #[cfg(feature = "otel")]
    {
        use opentelemetry::{Array, StringValue, Value};
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let values: Vec<StringValue> = reasons.iter().map(|r| (*r).to_owned().into()).collect();
        span.set_attribute(
            "gen_ai.response.finish_reasons",
            Value::Array(Array::String(values)),
        );
    }
    #[cfg(not(feature = "otel"))]
    span.record("gen_ai.response.finish_reasons", reasons.join(",").as_str());
}

/// How a tool call was decided (the `lousho.tool.decision` attribute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolDecision {
    /// No one was asked: the rules or the approval policy let it run.
    Allowed,
    /// A human (the approval handler or a resume answer) approved it.
    Approved,
    /// A rule or a human denied it: it did not run.
    Denied,
    /// It waits for a human: the run paused.
    Pending,
}

impl ToolDecision {
    fn as_str(self) -> &'static str {
        match self {
            ToolDecision::Allowed => "allowed",
            ToolDecision::Approved => "approved",
            ToolDecision::Denied => "denied",
            ToolDecision::Pending => "pending",
        }
    }
}

/// `execute_tool {tool}`: one tool call (for a denied or pending call, the
/// span records the decision and ends at once).
pub(crate) fn execute_tool(call: &ToolCall, decision: ToolDecision) -> Span {
    tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = format!("execute_tool {}", call.name),
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = call.name.as_str(),
        gen_ai.tool.call.id = call.id.as_str(),
        gen_ai.tool.type = "function",
        lousho.tool.decision = decision.as_str(),
        error.type = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
    )
}

/// The MCP client span of one `tools/call` (kind CLIENT).
#[cfg(feature = "mcp-client")]
pub(crate) fn mcp_client_call(tool: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "tools/call",
        otel.name = format!("tools/call {tool}"),
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        jsonrpc.request.id = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
    )
}

/// The MCP server span of one `tools/call` (kind SERVER).
#[cfg(feature = "mcp-server")]
pub(crate) fn mcp_server_call(tool: &str, request_id: &str, session: Option<&str>) -> Span {
    tracing::info_span!(
        target: TARGET,
        "tools/call",
        otel.name = format!("tools/call {tool}"),
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        jsonrpc.request.id = request_id,
        mcp.session.id = session,
        enduser.id = Empty,
        error.type = Empty,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_name_splits_into_provider_and_model() {
        assert_eq!(split_model("openai/gpt-4o"), ("openai", "gpt-4o"));
        assert_eq!(
            split_model("openrouter/anthropic/claude-sonnet-4"),
            ("openrouter", "anthropic/claude-sonnet-4")
        );
        assert_eq!(split_model("scripted"), ("scripted", "scripted"));
    }
}
