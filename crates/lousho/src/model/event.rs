use super::ToolCall;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read (prompt).
    pub input_tokens: u64,
    /// Tokens written (completion).
    pub output_tokens: u64,
}

impl Usage {
    /// Input plus output.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Self) {
        self.input_tokens += rhs.input_tokens;
        self.output_tokens += rhs.output_tokens;
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
    /// A complete tool call (providers reassemble fragmented arguments).
    ToolCall(ToolCall),
    /// Token usage (may come more than once; the agent adds them up).
    Usage(Usage),
    /// The end of the turn.
    Finished(FinishReason),
    /// A provider's own block to keep in the conversation (a server-side
    /// tool search and its result).
    Provider(super::ProviderBlock),
}
