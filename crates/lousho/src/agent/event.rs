use super::Reply;
use crate::model::{ToolCall, Usage};
use crate::policy::ApprovalRequest;
use crate::tool::ToolOutput;

/// What happens during a run, in order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A piece of the model's text.
    TextDelta(String),
    /// A piece of the model's thinking (when its settings ask for
    /// [`Thinking`](crate::model::Thinking) and the provider streams it):
    /// for display, never part of the reply's text.
    ThinkingDelta(String),
    /// A tool call is about to run (after its approval, if it needed one).
    ToolCallStarted(ToolCall),
    /// A tool call needs a human's approval: the approval handler is asked
    /// next, or, without one, the run pauses after this turn's other calls.
    ApprovalRequested(ApprovalRequest),
    /// A tool call finished (errors included, with `is_error`). A denied
    /// call finishes with its error result without having started.
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
