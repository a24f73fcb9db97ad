//! What a run records of its model requests and tool calls: kept in its
//! [`Reply`](crate::Reply) and in a paused run's [`RunState`](crate::RunState),
//! reported by served lousho agents. Public through [`crate::agent`].

use super::{ToolCall, Usage};
use crate::sync::MutexExt;
use crate::tool::ToolOutput;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

/// One tool call made during a run, with its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// What the model asked for.
    pub call: ToolCall,
    /// What the tool returned (errors included, with `is_error`).
    pub output: ToolOutput,
}

/// The tokens one model request used (one turn of a run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestUsage {
    /// The model asked (`"vendor/model"`, as the agent names it).
    pub model: String,
    /// Tokens this request used.
    pub usage: Usage,
    /// What they cost in US dollars, when the agent's price table has the
    /// model ([`PriceTable`](crate::model::PriceTable)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The estimated tokens of the tool definitions this request loaded
    /// into the model's context (deferred tools left out; see
    /// [`crate::tool::search`]; one token per 4 bytes of JSON).
    #[serde(default)]
    pub tool_definition_tokens: u64,
}

/// Where a run collects the token usage of the agents its tools run (in
/// process, or served lousho agents over MCP).
#[derive(Clone, Default)]
pub(crate) struct UsageSink(Arc<Mutex<Vec<RequestUsage>>>);

impl UsageSink {
    /// Adds a child run's requests.
    pub(crate) fn add(&self, requests: impl IntoIterator<Item = RequestUsage>) {
        self.0.lock_unpoisoned().extend(requests);
    }

    /// Takes what was added since the last call.
    pub(crate) fn take(&self) -> Vec<RequestUsage> {
        std::mem::take(&mut *self.0.lock_unpoisoned())
    }
}
