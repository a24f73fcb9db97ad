//! The Messages API event stream to [`ModelEvent`]s: `message_start`,
//! `content_block_start/delta/stop` (`text_delta`, `input_json_delta`),
//! `message_delta` (stop reason, usage), `message_stop`, `ping`, `error`.

use super::error::in_stream;
use crate::model::provider::http::{StreamDecoder, truncate};
use crate::model::provider::sse::SseEvent;
use crate::model::{FinishReason, ModelError, ModelEvent, ToolCall, Usage};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        input: Value,
        json: String,
    },
    /// Thinking, server tools and block types this version does not know.
    Other,
}

/// One response's decoding state.
#[derive(Clone)]
pub(super) struct Decoder {
    provider: String,
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    finish: Option<FinishReason>,
}

impl Decoder {
    pub(super) fn new(provider: String) -> Self {
        Self {
            provider,
            blocks: BTreeMap::new(),
            usage: Usage::default(),
            finish: None,
        }
    }

    fn invalid(&self, message: String) -> ModelError {
        ModelError::InvalidResponse {
            provider: self.provider.clone(),
            message,
        }
    }

    fn index(&self, data: &Value) -> Result<u64, ModelError> {
        data.get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| self.invalid("a content block event has no index".into()))
    }

    fn read_usage(&mut self, usage: &Value) {
        let n = |k: &str| usage.get(k).and_then(Value::as_u64);
        // Input = uncached + cache writes + cache reads.
        let input = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .filter_map(|k| n(k))
        .reduce(|a, b| a + b);
        if let Some(input) = input {
            self.usage.input_tokens = self.usage.input_tokens.max(input);
        }
        // message_delta's output_tokens is cumulative.
        if let Some(output) = n("output_tokens") {
            self.usage.output_tokens = self.usage.output_tokens.max(output);
        }
    }
}

fn stop_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

impl StreamDecoder for Decoder {
    fn event(
        &mut self,
        event: SseEvent,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            self.invalid(format!(
                "cannot parse a stream event ({e}): {}",
                truncate(&event.data, 200)
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or_default()
            .to_owned();
        match kind.as_str() {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.read_usage(usage);
                }
            }
            "content_block_start" => {
                let index = self.index(&data)?;
                let block = data.get("content_block").cloned().unwrap_or(Value::Null);
                let b = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push_back(ModelEvent::TextDelta(t.to_owned()));
                        }
                        Block::Text
                    }
                    Some("tool_use") => Block::ToolUse {
                        id: block
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        name: block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        input: block.get("input").cloned().unwrap_or(Value::Null),
                        json: String::new(),
                    },
                    _ => Block::Other,
                };
                self.blocks.insert(index, b);
            }
            "content_block_delta" => {
                let index = self.index(&data)?;
                let delta = data.get("delta").cloned().unwrap_or(Value::Null);
                match (
                    self.blocks.get_mut(&index),
                    delta.get("type").and_then(Value::as_str),
                ) {
                    (Some(Block::Text), Some("text_delta")) => {
                        if let Some(t) = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push_back(ModelEvent::TextDelta(t.to_owned()));
                        }
                    }
                    (Some(Block::ToolUse { json, .. }), Some("input_json_delta")) => {
                        json.push_str(
                            delta
                                .get("partial_json")
                                .and_then(Value::as_str)
                                .unwrap_or_default(),
                        );
                    }
                    (None, _) => {
                        return Err(self.invalid(format!(
                            "a delta for content block {index}, which never started"
                        )));
                    }
                    _ => {} // thinking, signature and citation deltas
                }
            }
            "content_block_stop" => {
                let index = self.index(&data)?;
                if let Some(Block::ToolUse {
                    id,
                    name,
                    input,
                    json,
                }) = self.blocks.remove(&index)
                {
                    if name.is_empty() {
                        return Err(self.invalid(format!("tool_use block {index} has no name")));
                    }
                    let arguments = if json.trim().is_empty() {
                        if input.is_object() {
                            input
                        } else {
                            Value::Object(Default::default())
                        }
                    } else {
                        serde_json::from_str(&json).unwrap_or_else(|e| {
                            tracing::warn!(tool = %name, error = %e, "the model sent tool input that is not JSON");
                            Value::String(json)
                        })
                    };
                    out.push_back(ModelEvent::ToolCall(ToolCall {
                        id,
                        name,
                        arguments,
                    }));
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish = Some(stop_reason(reason));
                }
                if let Some(usage) = data.get("usage") {
                    self.read_usage(usage);
                }
            }
            "message_stop" => {
                out.push_back(ModelEvent::Usage(self.usage));
                out.push_back(ModelEvent::Finished(
                    self.finish.take().unwrap_or(FinishReason::Stop),
                ));
                return Ok(true);
            }
            "error" => return Err(in_stream(&self.provider, &data)),
            _ => {} // ping, and event types added after this version
        }
        Ok(false)
    }

    fn finish(&mut self, _out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        Err(ModelError::Network {
            provider: self.provider.clone(),
            source: "the connection closed before `message_stop`".into(),
        })
    }
}
