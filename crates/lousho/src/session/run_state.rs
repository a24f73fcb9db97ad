//! A paused run's state: everything needed to resume it, as JSON.

use crate::model::run_record::{RequestUsage, ToolCallRecord};
use crate::model::{Message, ToolCall, Usage};
use crate::policy::ApprovalRequest;
use crate::tool::ToolOutput;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The format version written into every [`RunState`].
pub const RUN_STATE_VERSION: u32 = 1;

/// A run paused for approval: the conversation so far, the paused turn's
/// calls (with the results of those that already ran), usage, the turn count
/// and the tools' conversation state.
///
/// It serialises to JSON ([`to_json`](RunState::to_json)), so it can be
/// stored and resumed with [`Agent::resume`](crate::Agent::resume) later, by
/// another `Agent` built from the same configuration, in another process.
/// Calls that already ran are kept with their results and never run again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    version: u32,
    pub(crate) messages: Vec<Message>,
    pub(crate) tool_calls: Vec<ToolCallRecord>,
    pub(crate) turn: PausedTurn,
    pub(crate) usage: Usage,
    /// Each model request so far (absent in states written before lousho
    /// kept them).
    #[serde(default)]
    pub(crate) requests: Vec<RequestUsage>,
    pub(crate) turns: usize,
    pub(crate) conversation_state: Map<String, Value>,
}

/// The turn a run paused in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PausedTurn {
    /// The turn's text (before its tool calls).
    pub(crate) text: String,
    /// Tokens the turn used.
    pub(crate) usage: Usage,
    /// Every call of the turn, in the model's order.
    pub(crate) calls: Vec<PausedCall>,
}

/// One call of the paused turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PausedCall {
    pub(crate) call: ToolCall,
    /// The result, for calls that already ran (or were denied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output: Option<ToolOutput>,
    /// The question, for calls waiting for an answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) approval: Option<ApprovalRequest>,
}

/// A run state could not be read or resumed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunStateError {
    /// The text is not a run state.
    #[error("the run state is not valid JSON for this version of lousho: {0}")]
    Json(#[from] serde_json::Error),
    /// The state was written by an incompatible version.
    #[error(
        "the run state has format version {found}, this lousho reads version {RUN_STATE_VERSION}; resume it with the lousho version that paused it"
    )]
    UnsupportedVersion {
        /// The version in the state.
        found: u32,
    },
    /// No call is waiting for an answer.
    #[error(
        "the run state has no call waiting for approval; only an interrupted run can be resumed"
    )]
    NothingPending,
}

impl RunState {
    pub(crate) fn new(
        messages: Vec<Message>,
        tool_calls: Vec<ToolCallRecord>,
        turn: PausedTurn,
        usage: Usage,
        turns: usize,
        conversation_state: Map<String, Value>,
    ) -> Self {
        Self {
            version: RUN_STATE_VERSION,
            messages,
            tool_calls,
            turn,
            usage,
            requests: Vec::new(),
            turns,
            conversation_state,
        }
    }

    /// The state as a JSON string.
    pub fn to_json(&self) -> Result<String, RunStateError> {
        Ok(serde_json::to_string(self)?)
    }

    /// Reads a state written by [`to_json`](RunState::to_json) (or any serde
    /// JSON serialiser) and checks its version.
    pub fn from_json(json: &str) -> Result<Self, RunStateError> {
        let state: RunState = serde_json::from_str(json)?;
        state.check()?;
        Ok(state)
    }

    /// Checks the version and that something is pending.
    pub(crate) fn check(&self) -> Result<(), RunStateError> {
        if self.version != RUN_STATE_VERSION {
            return Err(RunStateError::UnsupportedVersion {
                found: self.version,
            });
        }
        if !self.turn.calls.iter().any(|c| c.output.is_none()) {
            return Err(RunStateError::NothingPending);
        }
        Ok(())
    }

    /// The calls waiting for an answer, in the model's order.
    pub fn pending(&self) -> impl Iterator<Item = &ApprovalRequest> {
        self.turn
            .calls
            .iter()
            .filter(|c| c.output.is_none())
            .filter_map(|c| c.approval.as_ref())
    }

    /// The conversation so far, up to the paused turn's tool calls.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The calls of the paused turn that already have a result (ran or were
    /// denied), with their results.
    pub fn finished_calls(&self) -> impl Iterator<Item = (&ToolCall, &ToolOutput)> {
        self.turn
            .calls
            .iter()
            .filter_map(|c| c.output.as_ref().map(|o| (&c.call, o)))
    }

    /// Tokens used so far.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Model turns taken so far (the paused turn included).
    pub fn turns(&self) -> usize {
        self.turns
    }

    /// The tools' conversation state when the run paused.
    pub fn conversation_state(&self) -> &Map<String, Value> {
        &self.conversation_state
    }
}
