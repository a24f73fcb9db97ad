//! The Chat Completions event stream to [`ModelEvent`]s: text deltas as they
//! come, tool calls reassembled from fragments (keyed by `index`, several per
//! turn), usage from the final chunk, the finish reason, `[DONE]`.

use super::error::in_stream;
use crate::model::provider::http::{StreamDecoder, truncate};
use crate::model::provider::sse::SseEvent;
use crate::model::{FinishReason, ModelError, ModelEvent, ToolCall, Usage};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChunkUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    /// Reasoning text, as DeepSeek, vLLM and others stream it.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// Reasoning text, as OpenRouter and Ollama stream it.
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

/// What part of the prompt the cache served (`cached_tokens`) and, on
/// OpenRouter, wrote (`cache_write_tokens`).
#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl ChunkUsage {
    fn usage(&self) -> Usage {
        let prompt = self.prompt_tokens_details.as_ref();
        Usage {
            cache_read_tokens: prompt.and_then(|d| d.cached_tokens).unwrap_or(0),
            cache_write_tokens: prompt.and_then(|d| d.cache_write_tokens).unwrap_or(0),
            reasoning_tokens: self
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            ..Usage::new(self.prompt_tokens, self.completion_tokens)
        }
    }
}

#[derive(Default, Clone)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// One response's decoding state.
#[derive(Clone)]
pub(super) struct Decoder {
    provider: String,
    calls: BTreeMap<usize, PartialCall>,
    finish: Option<FinishReason>,
}

impl Decoder {
    pub(super) fn new(provider: String) -> Self {
        Self {
            provider,
            calls: BTreeMap::new(),
            finish: None,
        }
    }

    fn invalid(&self, message: String) -> ModelError {
        ModelError::InvalidResponse {
            provider: self.provider.clone(),
            message,
        }
    }

    fn flush_calls(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        for (index, call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() {
                return Err(self.invalid(format!("tool call {index} has no function name")));
            }
            let arguments = parse_arguments(&call.name, &call.arguments);
            out.push_back(ModelEvent::ToolCall(ToolCall {
                id: call.id.unwrap_or_else(|| format!("call_{index}")),
                name: call.name,
                arguments,
            }));
        }
        Ok(())
    }

    fn finished(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        self.flush_calls(out)?;
        out.push_back(ModelEvent::Finished(
            self.finish.take().unwrap_or(FinishReason::Stop),
        ));
        Ok(())
    }
}

/// The arguments as JSON; `""` is `{}`. Text that is not JSON is passed on as
/// a string, so the tool reports the bad input to the model.
fn parse_arguments(tool: &str, raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(raw).unwrap_or_else(|e| {
        tracing::warn!(tool, error = %e, "the model sent tool arguments that are not JSON");
        Value::String(raw.to_owned())
    })
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

impl StreamDecoder for Decoder {
    fn event(
        &mut self,
        event: SseEvent,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finished(out)?;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            self.invalid(format!(
                "cannot parse a stream chunk ({e}): {}",
                truncate(data, 200)
            ))
        })?;
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            return Err(in_stream(&self.provider, &error));
        }
        for choice in chunk.choices.into_iter().take(1) {
            if let Some(delta) = choice.delta {
                if let Some(text) = delta
                    .reasoning_content
                    .or(delta.reasoning)
                    .filter(|t| !t.is_empty())
                {
                    out.push_back(ModelEvent::ThinkingDelta(text));
                }
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    out.push_back(ModelEvent::TextDelta(text));
                }
                for (position, d) in delta.tool_calls.into_iter().flatten().enumerate() {
                    let index = d.index.unwrap_or(position);
                    let call = self.calls.entry(index).or_default();
                    if let Some(id) = d.id.filter(|i| !i.is_empty()) {
                        call.id.get_or_insert(id);
                    }
                    if let Some(f) = d.function {
                        if let Some(name) = f.name.filter(|n| !n.is_empty()) {
                            // Some servers repeat the name in every fragment.
                            if call.name.is_empty() {
                                call.name = name;
                            }
                        }
                        match f.arguments {
                            Some(Value::String(fragment)) => call.arguments.push_str(&fragment),
                            // A few servers send the arguments as an object, whole.
                            Some(v @ Value::Object(_)) => call.arguments = v.to_string(),
                            _ => {}
                        }
                    }
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish = Some(finish_reason(&reason));
                self.flush_calls(out)?;
            }
        }
        if let Some(u) = chunk.usage {
            out.push_back(ModelEvent::Usage(u.usage()));
        }
        Ok(false)
    }

    fn finish(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        // Servers that close without `[DONE]` after a finish reason are fine.
        if self.finish.is_some() {
            return self.finished(out);
        }
        Err(ModelError::Network {
            provider: self.provider.clone(),
            source: "the connection closed before the response was complete".into(),
        })
    }
}
