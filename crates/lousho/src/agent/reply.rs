use crate::model::{Message, ToolCall, Usage};
use crate::tool::ToolOutput;
use serde::{Deserialize, Serialize};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// The model gave its final answer.
    Completed,
}

/// One tool call made during a run, with its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// What the model asked for.
    pub call: ToolCall,
    /// What the tool returned (errors included, with `is_error`).
    pub output: ToolOutput,
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reply {
    /// The final answer's text.
    pub text: String,
    /// Every message of the conversation, the input included.
    pub messages: Vec<Message>,
    /// The tool calls made, in order, with their results.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Tokens used by every model turn of the run.
    pub usage: Usage,
    /// How many model turns the run took.
    pub turns: usize,
    /// How the run ended.
    pub status: RunStatus,
}
