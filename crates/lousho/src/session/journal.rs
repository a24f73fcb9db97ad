//! The step journal: a stored session's run, committed step by step, so a
//! run that stops without finishing (its process killed, its machine lost, a
//! failure) can be resumed from its last committed step.
//!
//! A run of a stored session starts a journal entry (its id, its session,
//! the session version it started from and its new input), then commits
//! each finished model turn, each tool result and each compaction summary
//! as its own transaction.
//! When the run completes, its messages are appended to the session and its
//! journal removed in one transaction. A run that stopped without that is
//! [`JournalStatus::Interrupted`], and
//! [`Session::resume_interrupted`](crate::Session::resume_interrupted) goes
//! on from its last committed step (committed turns are not asked of the
//! model again).

use super::StoreError;
use crate::model::run_record::RequestUsage;
use crate::model::{Message, Summary, ToolCall};
use crate::tool::ToolOutput;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::SystemTime;

/// One committed step of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum JournalStep {
    /// A model turn finished: the assistant's message (its text and tool
    /// calls) and what the request used.
    Turn {
        /// The assistant's message.
        message: Message,
        /// The request's usage.
        usage: RequestUsage,
    },
    /// A tool call of the last turn finished (or was denied).
    ToolResult {
        /// The call.
        call: ToolCall,
        /// Its result.
        output: ToolOutput,
    },
    /// Context compaction summarised older messages before a model turn
    /// ([`Compaction`](crate::agent::Compaction)): the summary joins the
    /// conversation here (as a
    /// [`Message::summary`](crate::model::Message::summary)), so a resumed
    /// run does not ask for it again. Journals written before lousho kept
    /// summaries have none; they replay as they did.
    Summary {
        /// The summary.
        summary: Summary,
        /// The summary request's usage.
        usage: RequestUsage,
    },
}

/// How a journaled run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum JournalStatus {
    /// A live run holds the session's lease and goes on.
    Running,
    /// The run stopped without finishing (its process was killed, or it
    /// failed): resume it, or delete it.
    Interrupted,
}

impl JournalStatus {
    /// `"running"` or `"interrupted"`.
    pub fn as_str(self) -> &'static str {
        match self {
            JournalStatus::Running => "running",
            JournalStatus::Interrupted => "interrupted",
        }
    }
}

/// What a run's journal starts with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JournalStart {
    /// The run's id.
    pub run: String,
    /// The session it is a turn of.
    pub session: String,
    /// The lease holder running it (changes when it is resumed).
    pub holder: String,
    /// The session version the run started from.
    pub base_version: u64,
    /// The messages the run adds before its first turn (the new input).
    pub input: Vec<Message>,
    /// The application's notes (the CLI keeps the spec file's path here).
    pub context: Value,
}

impl JournalStart {
    /// A journal start without notes (`context` null).
    pub fn new(
        run: impl Into<String>,
        session: impl Into<String>,
        holder: impl Into<String>,
        base_version: u64,
        input: Vec<Message>,
    ) -> Self {
        Self {
            run: run.into(),
            session: session.into(),
            holder: holder.into(),
            base_version,
            input,
            context: Value::Null,
        }
    }
}

/// A run's journal as stored.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JournaledRun {
    /// The run's id.
    pub id: String,
    /// The session.
    pub session: String,
    /// Whether it still runs.
    pub status: JournalStatus,
    /// The session version the run started from.
    pub base_version: u64,
    /// The run's new input.
    pub input: Vec<Message>,
    /// Its committed steps, in order.
    pub steps: Vec<JournalStep>,
    /// The application's notes.
    pub context: Value,
    /// When its last step was committed (or it started).
    pub updated_at: SystemTime,
}

/// A journaled run, without its steps.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunSummary {
    /// The run's id.
    pub id: String,
    /// The session.
    pub session: String,
    /// Whether it still runs.
    pub status: JournalStatus,
    /// How many steps it committed.
    pub steps: u64,
    /// When its last step was committed (or it started).
    pub updated_at: SystemTime,
}

/// A step as stored (JSON text).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn encode_step(step: &JournalStep) -> Result<String, StoreError> {
    serde_json::to_string(step).map_err(|source| StoreError::Corrupt {
        what: "journal step (writing)".into(),
        source,
    })
}

/// A stored step read back.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn decode_step(run: &str, seq: i64, text: &str) -> Result<JournalStep, StoreError> {
    serde_json::from_str(text).map_err(|source| StoreError::Corrupt {
        what: format!("step {seq} of run {run:?}"),
        source,
    })
}

/// A run's input as stored (a JSON array of messages).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn encode_input(input: &[Message]) -> String {
    // Messages are plain data: they always serialise.
    serde_json::to_string(input).unwrap_or_else(|_| "[]".into())
}

/// A stored run input read back.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn decode_input(run: &str, text: &str) -> Result<Vec<Message>, StoreError> {
    serde_json::from_str(text).map_err(|source| StoreError::Corrupt {
        what: format!("input of run {run:?}"),
        source,
    })
}
