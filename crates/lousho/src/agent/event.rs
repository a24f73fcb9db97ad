use super::Reply;
use crate::model::{Summary, ToolCall, Usage};
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
    /// A model of the agent's model list failed before any of the turn's
    /// output was sent; the turn is asked of the next model (see
    /// [`AgentBuilder::models`](crate::AgentBuilder::models)).
    ModelFailover {
        /// The model that failed (`vendor/model`).
        from: String,
        /// The model asked next.
        to: String,
        /// Why it failed (the [`ModelError`](crate::model::ModelError)'s message).
        reason: String,
    },
    /// The model's client-side rate limit
    /// ([`RateLimits`](crate::model::RateLimits)) holds its request back
    /// for about `wait` (the run waits; nothing is wrong).
    Throttled {
        /// The model (`vendor/model`).
        model: String,
        /// About how long.
        wait: std::time::Duration,
    },
    /// The conversation was over its context budget and context
    /// [`Compaction`](crate::agent::Compaction) summarised its older
    /// messages: the summary joined the conversation (as a
    /// [`Message::summary`](crate::model::Message::summary), after the
    /// messages so far) and the requests from now on carry it in place of
    /// messages `summary.from..summary.to`. Sent before the model turn it
    /// was made for. (Trimming long tool results, which comes first and
    /// may be enough, sends no event: it changes only what each request
    /// carries, not the conversation.)
    Compacted {
        /// The summary: its text, the range of messages it replaces
        /// (positions in the conversation, the session's history included,
        /// from 0, the end excluded) and the model that wrote it.
        summary: Summary,
        /// Tokens the summary request used (counted in the run's usage,
        /// not a model turn).
        usage: Usage,
    },
    /// A model turn (and its tool calls) finished.
    TurnFinished {
        /// The turn's number, from 1.
        turn: usize,
        /// Tokens the turn used.
        usage: Usage,
    },
    /// Another run of this run's stored session is going on (it holds the
    /// session's lease): this run waits for it to finish, then continues
    /// from its result. Sent once, before the run's first turn.
    SessionBusy {
        /// The session.
        session: String,
        /// The run holding the lease.
        holder: String,
    },
    /// The run is over; the last event.
    Done(Box<Reply>),
}
