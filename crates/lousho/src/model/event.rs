use super::ToolCall;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Token counts. The cache and reasoning counts are parts of the input and
/// output counts, reported apart where the provider says them (zero where it
/// does not), so a price table can bill each at its own rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read (prompt), cached ones included.
    pub input_tokens: u64,
    /// Tokens written (completion), reasoning included.
    pub output_tokens: u64,
    /// Of `input_tokens`, those read from the provider's prompt cache
    /// (Anthropic `cache_read_input_tokens`, OpenAI
    /// `prompt_tokens_details.cached_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Of `input_tokens`, those written to the provider's prompt cache
    /// (Anthropic `cache_creation_input_tokens`; OpenAI does not charge for
    /// writes and reports none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Of `output_tokens`, those spent reasoning before the answer (OpenAI
    /// `completion_tokens_details.reasoning_tokens`; Anthropic bills
    /// thinking as output tokens without counting it apart).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Input and output tokens, without cache or reasoning detail.
    pub const fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            reasoning_tokens: 0,
        }
    }

    /// Input plus output.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Self) {
        self.input_tokens += rhs.input_tokens;
        self.output_tokens += rhs.output_tokens;
        self.cache_read_tokens += rhs.cache_read_tokens;
        self.cache_write_tokens += rhs.cache_write_tokens;
        self.reasoning_tokens += rhs.reasoning_tokens;
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// A final answer.
    Stop,
    /// It wants tool results.
    ToolCalls,
    /// It hit the token limit.
    Length,
    /// A content filter stopped it.
    ContentFilter,
    /// Something else the provider said.
    Other(String),
}

/// One event of a model's stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// A piece of text.
    TextDelta(String),
    /// A piece of the model's thinking (Anthropic `thinking_delta`,
    /// compatible servers' `reasoning_content`): shown, never part of the
    /// answer. What goes back to the provider comes as a
    /// [`Provider`](ModelEvent::Provider) block.
    ThinkingDelta(String),
    /// A complete tool call (providers reassemble fragmented arguments).
    ToolCall(ToolCall),
    /// Token usage (may come more than once; the agent adds them up).
    Usage(Usage),
    /// The end of the turn.
    Finished(FinishReason),
    /// A provider's own block to keep in the conversation (a server-side
    /// tool search and its result).
    Provider(super::ProviderBlock),
    /// The provider's client-side limiter ([`RateLimits`](super::RateLimits))
    /// holds the request back for about this long; sent once, before the
    /// request, and not output (a retry or a failover may still follow).
    Throttled(std::time::Duration),
}
