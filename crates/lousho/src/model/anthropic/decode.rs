//! The Messages API event stream to [`ModelEvent`]s: `message_start`,
//! `content_block_start/delta/stop` (`text_delta`, `input_json_delta`,
//! `thinking_delta`, `signature_delta`),
//! `message_delta` (stop reason, usage), `message_stop`, `ping`, `error`.

use super::error::in_stream;
use crate::model::provider::http::{StreamDecoder, truncate};
use crate::model::provider::sse::SseEvent;
use crate::model::{FinishReason, ModelError, ModelEvent, ProviderBlock, ToolCall, Usage};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};

/// One stream event, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        #[serde(default)]
        message: MessageStart,
    },
    ContentBlockStart {
        index: u64,
        content_block: Value,
    },
    ContentBlockDelta {
        index: u64,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error {
        #[serde(default)]
        error: Value,
    },
    /// `ping`, and event types added after this version.
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct MessageStart {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Extended thinking, its text and signature streaming as deltas.
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    /// A server tool's call (native tool search), kept for later requests.
    ServerToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Server tool results and block types this version does not know.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        #[serde(default)]
        text: String,
    },
    InputJsonDelta {
        #[serde(default)]
        partial_json: String,
    },
    ThinkingDelta {
        #[serde(default)]
        thinking: String,
    },
    SignatureDelta {
        #[serde(default)]
        signature: String,
    },
    /// Citation deltas and delta types this version does not know.
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Token counts; `message_delta`'s `output_tokens` is cumulative.
#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

#[derive(Clone)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        input: Value,
        json: String,
    },
    /// A server tool's call, its input streaming as JSON.
    ServerToolUse {
        id: String,
        name: String,
        input: Value,
        json: String,
    },
    /// Thinking: its text and signature, kept to go back as sent.
    Thinking {
        thinking: String,
        signature: String,
    },
    /// A server tool's result or redacted thinking, whole (kept as sent).
    Keep(Value),
    /// Block types this version does not know.
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

    fn read_usage(&mut self, usage: &WireUsage) {
        if let Some(read) = usage.cache_read_input_tokens {
            self.usage.cache_read_tokens = self.usage.cache_read_tokens.max(read);
        }
        if let Some(write) = usage.cache_creation_input_tokens {
            self.usage.cache_write_tokens = self.usage.cache_write_tokens.max(write);
        }
        // Input = uncached + cache writes + cache reads.
        let input = [
            usage.input_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
        ]
        .into_iter()
        .flatten()
        .reduce(|a, b| a + b);
        if let Some(input) = input {
            self.usage.input_tokens = self.usage.input_tokens.max(input);
        }
        if let Some(output) = usage.output_tokens {
            self.usage.output_tokens = self.usage.output_tokens.max(output);
        }
    }
}

/// A kept block as it goes back to the API.
fn provider_block(block: Block) -> ProviderBlock {
    let block = match block {
        Block::ServerToolUse {
            id,
            name,
            input,
            json,
        } => {
            let input = if json.trim().is_empty() {
                input
            } else {
                serde_json::from_str(&json).unwrap_or(Value::Object(Default::default()))
            };
            serde_json::json!({ "type": "server_tool_use", "id": id, "name": name, "input": input })
        }
        Block::Thinking {
            thinking,
            signature,
        } => {
            serde_json::json!({ "type": "thinking", "thinking": thinking, "signature": signature })
        }
        Block::Keep(value) => value,
        Block::Text | Block::ToolUse { .. } | Block::Other => Value::Null,
    };
    ProviderBlock {
        provider: super::body::PROVIDER.to_owned(),
        block,
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
        let parsed: StreamEvent = serde_json::from_str(&event.data).map_err(|e| {
            self.invalid(format!(
                "cannot parse a stream event ({e}): {}",
                truncate(&event.data, 200)
            ))
        })?;
        match parsed {
            StreamEvent::MessageStart { message } => {
                if let Some(usage) = &message.usage {
                    self.read_usage(usage);
                }
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let keep = content_block
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t.ends_with("_tool_result") || t == "redacted_thinking");
                let parsed = if keep {
                    ContentBlock::Other
                } else {
                    serde_json::from_value(content_block.clone()).map_err(|e| {
                        self.invalid(format!("cannot parse content block {index}: {e}"))
                    })?
                };
                let block = match parsed {
                    _ if keep => Block::Keep(content_block),
                    ContentBlock::ServerToolUse { id, name, input } => Block::ServerToolUse {
                        id,
                        name,
                        input,
                        json: String::new(),
                    },
                    ContentBlock::Text { text } => {
                        if !text.is_empty() {
                            out.push_back(ModelEvent::TextDelta(text));
                        }
                        Block::Text
                    }
                    ContentBlock::ToolUse { id, name, input } => Block::ToolUse {
                        id,
                        name,
                        input,
                        json: String::new(),
                    },
                    ContentBlock::Thinking {
                        thinking,
                        signature,
                    } => {
                        if !thinking.is_empty() {
                            out.push_back(ModelEvent::ThinkingDelta(thinking.clone()));
                        }
                        Block::Thinking {
                            thinking,
                            signature,
                        }
                    }
                    ContentBlock::Other => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                match (self.blocks.get_mut(&index), delta) {
                    (Some(Block::Text), BlockDelta::TextDelta { text }) if !text.is_empty() => {
                        out.push_back(ModelEvent::TextDelta(text));
                    }
                    (
                        Some(Block::ToolUse { json, .. } | Block::ServerToolUse { json, .. }),
                        BlockDelta::InputJsonDelta { partial_json },
                    ) => {
                        json.push_str(&partial_json);
                    }
                    (
                        Some(Block::Thinking { thinking, .. }),
                        BlockDelta::ThinkingDelta { thinking: piece },
                    ) if !piece.is_empty() => {
                        thinking.push_str(&piece);
                        out.push_back(ModelEvent::ThinkingDelta(piece));
                    }
                    (
                        Some(Block::Thinking { signature, .. }),
                        BlockDelta::SignatureDelta { signature: piece },
                    ) => {
                        signature.push_str(&piece);
                    }
                    (None, _) => {
                        return Err(self.invalid(format!(
                            "a delta for content block {index}, which never started"
                        )));
                    }
                    _ => {} // citation deltas
                }
            }
            StreamEvent::ContentBlockStop { index } => {
                if let Some(Block::Keep(_) | Block::ServerToolUse { .. } | Block::Thinking { .. }) =
                    self.blocks.get(&index)
                {
                    if let Some(block) = self.blocks.remove(&index) {
                        out.push_back(ModelEvent::Provider(provider_block(block)));
                    }
                    return Ok(false);
                }
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
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.finish = Some(stop_reason(&reason));
                }
                if let Some(usage) = &usage {
                    self.read_usage(usage);
                }
            }
            StreamEvent::MessageStop => {
                out.push_back(ModelEvent::Usage(self.usage));
                out.push_back(ModelEvent::Finished(
                    self.finish.take().unwrap_or(FinishReason::Stop),
                ));
                return Ok(true);
            }
            StreamEvent::Error { error } => return Err(in_stream(&self.provider, &error)),
            StreamEvent::Other => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(lines: &[&str]) -> Result<Vec<ModelEvent>, ModelError> {
        let mut decoder = Decoder::new("anthropic".into());
        let mut out = VecDeque::new();
        for data in lines {
            let event = SseEvent {
                event: None,
                data: (*data).to_owned(),
            };
            if decoder.event(event, &mut out)? {
                break;
            }
        }
        Ok(out.into_iter().collect())
    }

    #[test]
    fn typed_events_skip_what_this_version_does_not_know() {
        let events = decode(&[
            r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":3,"cache_read_input_tokens":4}}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t1","name":"look","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"q\":"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"1}"}}"#,
            r#"{"type":"content_block_stop","index":2}"#,
            r#"{"type":"some_future_event","x":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"message_stop"}"#,
        ])
        .unwrap();
        assert!(matches!(&events[0], ModelEvent::ThinkingDelta(t) if t == "hm"));
        assert!(
            matches!(&events[1], ModelEvent::Provider(b) if b.block == serde_json::json!({"type": "thinking", "thinking": "hm", "signature": "EqQB"}))
        );
        let events = &events[2..];
        assert!(matches!(&events[0], ModelEvent::TextDelta(t) if t == "Hi"));
        assert!(
            matches!(&events[1], ModelEvent::ToolCall(c) if c.name == "look" && c.arguments == serde_json::json!({"q": 1}))
        );
        assert!(
            matches!(&events[2], ModelEvent::Usage(u) if u.input_tokens == 7 && u.output_tokens == 9 && u.cache_read_tokens == 4)
        );
        assert!(matches!(
            &events[3],
            ModelEvent::Finished(FinishReason::ToolCalls)
        ));
        assert_eq!(events.len(), 4);

        let err =
            decode(&[r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}"#])
                .unwrap_err();
        assert!(err.to_string().contains("index"), "{err}");
    }
}
