//! `model: sampling`: the calling MCP client's model, through
//! `sampling/createMessage` — with tools when the client supports tool use
//! in sampling (`sampling.tools`, protocol 2025-11-25), text only otherwise.
//!
//! The run passes its MCP client to the model through a task-local
//! ([`with_client`]): a run without one fails with
//! [`ModelError::NoSamplingClient`].

use super::{
    FinishReason, Message, Model, ModelError, ModelEvent, ModelRequest, ModelStream, Part, Role,
    ToolCall,
};
use crate::tool::{ClientChannel, ClientError};
use futures::StreamExt;
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;

/// The model string that selects the client's model.
pub const SAMPLING_MODEL: &str = "sampling";

/// `max_tokens` when the agent sets none (the request requires one).
const DEFAULT_MAX_TOKENS: u32 = 4096;

tokio::task_local! {
    static CLIENT: Option<Arc<dyn ClientChannel>>;
}

/// Runs `fut` (a model turn) with `client` as the one `model: sampling` asks.
pub(crate) async fn with_client<F: Future>(
    client: Option<Arc<dyn ClientChannel>>,
    fut: F,
) -> F::Output {
    CLIENT.scope(client, fut).await
}

/// The calling MCP client's model (`model: sampling`).
#[derive(Debug, Clone, Default)]
pub struct SamplingModel {
    _private: (),
}

impl SamplingModel {
    /// The client's model.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Model for SamplingModel {
    fn name(&self) -> &str {
        SAMPLING_MODEL
    }

    fn stream(&self, request: &ModelRequest) -> ModelStream {
        let client = CLIENT.try_with(Clone::clone).ok().flatten();
        let prepared = prepare(client, request);
        futures::stream::once(async move {
            let (client, params) = prepared?;
            let result = client
                .create_message(params, None)
                .await
                .map_err(|source| ModelError::Sampling {
                    source: Box::new(source),
                })?;
            events(&result)
        })
        .flat_map(|r: Result<Vec<ModelEvent>, ModelError>| match r {
            Ok(events) => futures::stream::iter(events.into_iter().map(Ok)).boxed(),
            Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
        })
        .boxed()
    }
}

/// Checks the client and builds the `sampling/createMessage` params.
fn prepare(
    client: Option<Arc<dyn ClientChannel>>,
    request: &ModelRequest,
) -> Result<(Arc<dyn ClientChannel>, Value), ModelError> {
    let client = client.ok_or(ModelError::NoSamplingClient)?;
    if !client.can_sample() {
        return Err(ModelError::Sampling {
            source: Box::new(ClientError::Unsupported {
                action: "ask the client's model (sampling)",
                capability: "sampling",
            }),
        });
    }
    let with_tools = !request.tools.is_empty();
    if with_tools && !client.can_sample_tools() {
        return Err(ModelError::SamplingToolsUnsupported {
            tools: request.tools.iter().map(|t| t.name.clone()).collect(),
        });
    }
    let mut params = json!({
        "messages": request.messages.iter().filter_map(message).collect::<Vec<_>>(),
        "maxTokens": request.settings.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
    });
    if let Some(system) = &request.system {
        params["systemPrompt"] = Value::String(system.clone());
    }
    if let Some(t) = request.settings.temperature {
        params["temperature"] = json!(t);
    }
    if with_tools {
        params["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": t.input_schema,
                })
            })
            .collect();
        params["toolChoice"] = json!({ "mode": "auto" });
    }
    Ok((client, params))
}

/// One conversation message as a sampling message (tool results go as the
/// user's `tool_result` blocks); `None` when nothing in it can be sent.
fn message(m: &Message) -> Option<Value> {
    let role = match m.role {
        Role::Assistant => "assistant",
        Role::User | Role::Tool => "user",
    };
    let blocks: Vec<Value> = m
        .parts
        .iter()
        .filter_map(|part| {
            Some(match part {
                Part::Text { text } => json!({ "type": "text", "text": text }),
                Part::Image { data, mime_type } => {
                    json!({ "type": "image", "data": data, "mimeType": mime_type })
                }
                Part::ToolCall(call) => json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": match &call.arguments {
                        Value::Object(_) => call.arguments.clone(),
                        _ => json!({}),
                    },
                }),
                Part::ToolResult(result) => json!({
                    "type": "tool_result",
                    "toolUseId": result.call_id,
                    "content": [{ "type": "text", "text": result.output.to_model_text() }],
                    "isError": result.output.is_error,
                }),
                // A provider's own blocks (Anthropic's server-side tool search)
                // mean nothing to the client's model.
                Part::Provider(_) => return None,
                // Requests carry a summary as text (see agent::context).
                Part::Summary(s) => json!({ "type": "text", "text": s.text }),
            })
        })
        .collect();
    match blocks.len() {
        0 => None,
        1 => Some(json!({ "role": role, "content": blocks[0] })),
        _ => Some(json!({ "role": role, "content": blocks })),
    }
}

/// The model events of a `sampling/createMessage` result.
fn events(result: &Value) -> Result<Vec<ModelEvent>, ModelError> {
    let invalid = |message: String| ModelError::InvalidResponse {
        provider: SAMPLING_MODEL.to_owned(),
        message,
    };
    let content = result
        .get("content")
        .ok_or_else(|| invalid("the client's sampling result has no `content`".into()))?;
    let blocks: Vec<&Value> = match content {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::new();
    let mut calls = false;
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                if !text.is_empty() {
                    out.push(ModelEvent::TextDelta(text.to_owned()));
                }
            }
            Some("tool_use") => {
                let field = |k: &str| block.get(k).and_then(Value::as_str).map(str::to_owned);
                let (Some(id), Some(name)) = (field("id"), field("name")) else {
                    return Err(invalid("a `tool_use` block without `id` or `name`".into()));
                };
                calls = true;
                out.push(ModelEvent::ToolCall(ToolCall {
                    id,
                    name,
                    arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
                }));
            }
            other => tracing::debug!(kind = ?other, "ignoring a sampling content block"),
        }
    }
    let reason = match result.get("stopReason").and_then(Value::as_str) {
        _ if calls => FinishReason::ToolCalls,
        Some("maxTokens") => FinishReason::Length,
        Some("endTurn") | Some("stopSequence") | None => FinishReason::Stop,
        Some("toolUse") => FinishReason::ToolCalls,
        Some(other) => FinishReason::Other(other.to_owned()),
    };
    out.push(ModelEvent::Finished(reason));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolOutput;

    #[test]
    fn tool_calls_and_results_become_tool_use_and_tool_result_blocks() {
        let call = ToolCall {
            id: "c1".into(),
            name: "lookup".into(),
            arguments: json!({"id": 7}),
        };
        let assistant = Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(call)],
        };
        assert_eq!(
            message(&assistant).unwrap(),
            json!({"role": "assistant", "content": {"type": "tool_use", "id": "c1", "name": "lookup", "input": {"id": 7}}})
        );
        let results = Message::tool_results(vec![crate::model::ToolResult {
            call_id: "c1".into(),
            name: "lookup".into(),
            output: ToolOutput::text("found"),
        }]);
        assert_eq!(
            message(&results).unwrap(),
            json!({"role": "user", "content": {"type": "tool_result", "toolUseId": "c1", "content": [{"type": "text", "text": "found"}], "isError": false}})
        );
    }

    #[test]
    fn a_result_with_tool_use_gives_tool_calls() {
        let got = events(&json!({
            "role": "assistant", "model": "m", "stopReason": "toolUse",
            "content": [{"type": "text", "text": "let me look"}, {"type": "tool_use", "id": "t", "name": "lookup", "input": {"id": 1}}]
        }))
        .unwrap();
        assert_eq!(got.len(), 3);
        assert!(
            matches!(&got[1], ModelEvent::ToolCall(c) if c.name == "lookup" && c.arguments == json!({"id": 1}))
        );
        assert_eq!(got[2], ModelEvent::Finished(FinishReason::ToolCalls));
        assert!(events(&json!({"model": "m"})).is_err());
    }
}
