//! Sampling: a mounted server asks the client's model for a completion
//! (`sampling/createMessage`, or a sampling request in a 2026-07-28
//! input-required round).
//!
//! Off by default, per server: the client declares `sampling` only to a
//! server whose entry allows it ([`SamplingSettings`], `sampling: {allow:
//! true}` in a spec) and only when a [`SamplingHandler`] answers (an agent
//! sets one that asks its own model after an approval). Each request is
//! capped at the entry's `maxTokens`, and a connection answers at most
//! `maxRequests` of them. Text and images only: a request with tools is
//! refused.

// Sampling is deprecated by SEP-2577 but spoken by servers still.
#![allow(deprecated)]

use crate::model::{Message, Part, Role as ModelRole};
use async_trait::async_trait;
use rmcp::ErrorData;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, Role, SamplingMessage,
    SamplingMessageContentBlock,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// [`SamplingSettings::max_tokens`]' default.
pub const DEFAULT_SAMPLING_MAX_TOKENS: u32 = 1024;
/// [`SamplingSettings::max_requests`]' default.
pub const DEFAULT_SAMPLING_MAX_REQUESTS: u32 = 20;

/// Whether a server may ask the client's model (`sampling` in its entry),
/// and how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct SamplingSettings {
    /// Whether the server may ask at all (default false: the client does not
    /// declare `sampling` to it).
    #[serde(default)]
    pub allow: bool,
    /// The most tokens one answer may have (a request asking for more gets
    /// this many; default 1024).
    #[serde(default = "default_max_tokens")]
    #[schemars(range(min = 1))]
    pub max_tokens: u32,
    /// The most requests one connection answers (default 20); later ones
    /// are refused until the server reconnects.
    #[serde(default = "default_max_requests")]
    #[schemars(range(min = 1))]
    pub max_requests: u32,
}

fn default_max_tokens() -> u32 {
    DEFAULT_SAMPLING_MAX_TOKENS
}

fn default_max_requests() -> u32 {
    DEFAULT_SAMPLING_MAX_REQUESTS
}

impl Default for SamplingSettings {
    fn default() -> Self {
        Self {
            allow: false,
            max_tokens: DEFAULT_SAMPLING_MAX_TOKENS,
            max_requests: DEFAULT_SAMPLING_MAX_REQUESTS,
        }
    }
}

impl SamplingSettings {
    /// Allowed, with the default limits.
    pub fn allowed() -> Self {
        Self {
            allow: true,
            ..Self::default()
        }
    }

    /// Sets the most tokens of one answer (at least 1).
    #[must_use]
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens.max(1);
        self
    }

    /// Sets the most requests one connection answers (at least 1).
    #[must_use]
    pub fn max_requests(mut self, requests: u32) -> Self {
        self.max_requests = requests.max(1);
        self
    }
}

/// One sampling request from a server, with its limits applied.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The name of the server that asks (its key in `mcpServers`).
    pub server: String,
    /// The conversation (user and assistant messages, text and images).
    pub messages: Vec<Message>,
    /// The server's system prompt.
    pub system_prompt: Option<String>,
    /// The most tokens of the answer (the server's wish, capped by the
    /// entry's `maxTokens`).
    pub max_tokens: u32,
    /// The sampling temperature the server asks for.
    pub temperature: Option<f32>,
    /// Sequences that end the answer.
    pub stop_sequences: Vec<String>,
}

/// Why the answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SamplingStop {
    /// The model finished.
    EndTurn,
    /// The token limit cut it.
    MaxTokens,
    /// A stop sequence ended it.
    StopSequence,
}

/// The model's answer to a [`SamplingRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingResponse {
    /// The answer's text.
    pub text: String,
    /// The model that answered (`vendor/model`).
    pub model: String,
    /// Why it ended.
    pub stop: SamplingStop,
}

impl SamplingResponse {
    /// An answer of `model`.
    pub fn new(text: impl Into<String>, model: impl Into<String>, stop: SamplingStop) -> Self {
        Self {
            text: text.into(),
            model: model.into(),
            stop,
        }
    }
}

/// Why a sampling request got no answer (the server gets it as an error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SamplingError {
    /// The operator (or a permission rule) said no.
    #[error("the user denied the sampling request{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Denied {
        /// Why, when given.
        reason: Option<String>,
    },
    /// The model failed.
    #[error("the client's model failed: {0}")]
    Model(String),
}

/// Answers servers' sampling requests (an agent's model after an approval,
/// a test double).
#[async_trait]
pub trait SamplingHandler: Send + Sync + 'static {
    /// Answers `request`, or says why not.
    async fn sample(&self, request: SamplingRequest) -> Result<SamplingResponse, SamplingError>;
}

/// What one connection answers: its entry's settings, the handler, and how
/// many requests it answered.
#[derive(Clone)]
pub(crate) struct SamplingLink {
    settings: SamplingSettings,
    handler: Arc<dyn SamplingHandler>,
    used: Arc<AtomicU32>,
}

impl SamplingLink {
    /// The link of an entry whose settings allow sampling, when there is a
    /// handler.
    pub(crate) fn new(
        settings: Option<SamplingSettings>,
        handler: Option<Arc<dyn SamplingHandler>>,
    ) -> Option<Self> {
        let settings = settings.filter(|s| s.allow)?;
        Some(Self {
            settings,
            handler: handler?,
            used: Arc::new(AtomicU32::new(0)),
        })
    }

    /// Answers one request of `server` (the connection's limits applied).
    pub(crate) async fn answer(
        &self,
        server: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        if params.tools.as_ref().is_some_and(|t| !t.is_empty()) {
            return Err(ErrorData::invalid_params(
                "this client does not offer tools in sampling",
                None,
            ));
        }
        let used = self.used.fetch_add(1, Ordering::SeqCst);
        if used >= self.settings.max_requests {
            return Err(ErrorData::invalid_request(
                format!(
                    "this server may make at most {} sampling requests per connection",
                    self.settings.max_requests
                ),
                None,
            ));
        }
        let request = request_of(server, params, self.settings.max_tokens)?;
        let response = self
            .handler
            .sample(request)
            .await
            .map_err(|e| ErrorData::invalid_request(e.to_string(), None))?;
        let stop = match response.stop {
            SamplingStop::EndTurn => CreateMessageResult::STOP_REASON_END_TURN,
            SamplingStop::MaxTokens => CreateMessageResult::STOP_REASON_END_MAX_TOKEN,
            SamplingStop::StopSequence => CreateMessageResult::STOP_REASON_END_SEQUENCE,
        };
        Ok(CreateMessageResult::new(
            SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::text(response.text),
            ),
            response.model,
        )
        .with_stop_reason(stop))
    }
}

/// The request as lousho's messages; audio and tool blocks are refused.
fn request_of(
    server: &str,
    params: CreateMessageRequestParams,
    cap: u32,
) -> Result<SamplingRequest, ErrorData> {
    let mut messages = Vec::with_capacity(params.messages.len());
    for message in params.messages {
        let role = match message.role {
            Role::User => ModelRole::User,
            Role::Assistant => ModelRole::Assistant,
        };
        let mut parts = Vec::new();
        for block in message.content.into_vec() {
            parts.push(match block {
                SamplingMessageContentBlock::Text(t) => Part::Text { text: t.text },
                SamplingMessageContentBlock::Image(i) => Part::Image {
                    data: i.data,
                    mime_type: i.mime_type,
                },
                _ => {
                    return Err(ErrorData::invalid_params(
                        "this client samples text and images only",
                        None,
                    ));
                }
            });
        }
        messages.push(Message { role, parts });
    }
    Ok(SamplingRequest {
        server: server.to_owned(),
        messages,
        system_prompt: params.system_prompt,
        max_tokens: params.max_tokens.clamp(1, cap),
        temperature: params.temperature,
        stop_sequences: params.stop_sequences.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    #[async_trait]
    impl SamplingHandler for Echo {
        async fn sample(&self, r: SamplingRequest) -> Result<SamplingResponse, SamplingError> {
            Ok(SamplingResponse::new(
                format!("{} {}", r.max_tokens, r.messages[0].text()),
                "test/echo",
                SamplingStop::EndTurn,
            ))
        }
    }

    fn params(max_tokens: u32) -> CreateMessageRequestParams {
        CreateMessageRequestParams::new(
            vec![SamplingMessage::new(
                Role::User,
                SamplingMessageContentBlock::text("hi"),
            )],
            max_tokens,
        )
    }

    #[tokio::test]
    async fn requests_are_capped_counted_and_refused_without_opt_in() {
        let handler: Arc<dyn SamplingHandler> = Arc::new(Echo);
        assert!(SamplingLink::new(None, Some(handler.clone())).is_none());
        assert!(
            SamplingLink::new(Some(SamplingSettings::default()), Some(handler.clone())).is_none()
        );
        assert!(SamplingLink::new(Some(SamplingSettings::allowed()), None).is_none());
        let link = SamplingLink::new(
            Some(SamplingSettings::allowed().max_tokens(10).max_requests(2)),
            Some(handler),
        )
        .unwrap();
        let answer = link.answer("s", params(500)).await.unwrap();
        let json = serde_json::to_value(&answer).unwrap();
        assert_eq!(json["content"]["text"], "10 hi", "{json}");
        assert_eq!(json["model"], "test/echo");
        assert_eq!(json["stopReason"], "endTurn");
        assert!(link.answer("s", params(5)).await.is_ok());
        let third = link.answer("s", params(5)).await.unwrap_err();
        assert!(third.message.contains("at most 2"), "{third:?}");
    }
}
