use super::budget::{BudgetLimit, BudgetScope};
use super::{RequestUsage, RunState, ToolCallRecord};
use crate::model::{Message, Usage};
use crate::policy::ApprovalRequest;
use serde::{Deserialize, Serialize};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStatus {
    /// The model gave its final answer.
    Completed,
    /// The run paused: some tool calls wait for a human's approval and there
    /// is no approval handler. [`Reply::pending`] lists them; resume with
    /// [`Agent::resume`](crate::Agent::resume) and the reply's [`Reply::state`].
    Interrupted,
    /// The run reached a limit of its [`Budget`](crate::agent::Budget) (or
    /// its session's): the reply holds what was spent (`usage`,
    /// `cost_usd`, `turns`, `tool_calls`) and the partial answer (the last
    /// turn's text; the calls it asked for did not run).
    BudgetExceeded {
        /// Which limit.
        limit: BudgetLimit,
        /// Whose budget.
        scope: BudgetScope,
    },
}

impl RunStatus {
    /// `completed`, `interrupted` or `budget_exceeded` (as serialized; also the run span's
    /// `lousho.run.status`).
    pub fn as_str(&self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::BudgetExceeded { .. } => "budget_exceeded",
        }
    }
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reply {
    /// The final answer's text (for an interrupted run, the paused turn's text).
    pub text: String,
    /// Every message of the conversation, the input included.
    pub messages: Vec<Message>,
    /// The tool calls made, in order, with their results.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Tokens used by every model turn of the run (the sum of
    /// [`requests`](Reply::requests)).
    pub usage: Usage,
    /// Each model request of the run, in order (a resumed run's include
    /// those before it paused).
    #[serde(default)]
    pub requests: Vec<RequestUsage>,
    /// The estimated cost of the run in US dollars: the sum of the
    /// requests' costs, when every request has one (see
    /// [`PriceTable`](crate::model::PriceTable)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The final answer as JSON, checked against the run's output schema
    /// (when it has one: [`RunRequest::output`](crate::agent::RunRequest::output),
    /// [`AgentBuilder::output_schema`](crate::AgentBuilder::output_schema)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
    /// How many model turns the run took.
    pub turns: usize,
    /// The model that gave the run's latest turn (`vendor/model`): with a
    /// model list ([`AgentBuilder::models`](crate::AgentBuilder::models)),
    /// the one that answered. Each request's model is in
    /// [`requests`](Reply::requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How the run ended.
    pub status: RunStatus,
    /// The calls waiting for approval (when [`RunStatus::Interrupted`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<ApprovalRequest>,
    /// What [`Agent::resume`](crate::Agent::resume) needs to continue the run
    /// (when [`RunStatus::Interrupted`]); serialise it to store it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<RunState>,
}

impl Reply {
    /// Whether the run stopped at a budget's limit.
    pub fn is_budget_exceeded(&self) -> bool {
        matches!(self.status, RunStatus::BudgetExceeded { .. })
    }

    /// Whether the run paused for approval.
    pub fn is_interrupted(&self) -> bool {
        self.status == RunStatus::Interrupted
    }
}
