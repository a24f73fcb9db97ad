use super::Reply;
use crate::model::{ToolCall, Usage};
use crate::tool::ToolOutput;

/// What happens during a run, in order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A piece of the model's text.
    TextDelta(String),
    /// A tool call is about to run.
    ToolCallStarted(ToolCall),
    /// A tool call finished (errors included, with `is_error`).
    ToolCallFinished {
        /// The call.
        call: ToolCall,
        /// Its result.
        output: ToolOutput,
    },
    /// A model turn (and its tool calls) finished.
    TurnFinished {
        /// The turn's number, from 1.
        turn: usize,
        /// Tokens the turn used.
        usage: Usage,
    },
    /// The run is over; the last event.
    Done(Box<Reply>),
}
