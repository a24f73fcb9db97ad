use super::RunStateError;
use crate::model::ModelError;
use crate::policy::PermissionError;
use crate::tool::{DuplicateToolError, ToolSourceError};

/// Why an agent could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No model was given.
    #[error(
        "no model: call .model(\"openai/gpt-4o-mini\") (or \"test\" for the offline test model)"
    )]
    MissingModel,
    /// The model string could not be resolved.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A tool's name breaks the providers' rule.
    #[error("tool name `{0}` is invalid: use 1-64 characters of a-z, A-Z, 0-9, `_` and `-`")]
    InvalidToolName(String),
    /// A tool's input schema is not an object schema.
    #[error("tool `{0}`: the input schema's root must be an object (`\"type\": \"object\"`)")]
    InvalidInputSchema(String),
    /// Two tools share a name.
    #[error(transparent)]
    DuplicateTool(#[from] DuplicateToolError),
    /// A numeric setting is out of range.
    #[error("{0}")]
    InvalidSetting(String),
    /// A permission rule's pattern is invalid.
    #[error(transparent)]
    Permission(#[from] PermissionError),
    /// A skills folder could not be read.
    #[cfg(feature = "builtin")]
    #[error(transparent)]
    Skills(#[from] crate::skills::SkillLoadError),
}

/// Why a run failed. What the model should see (a failing tool, an unknown
/// tool) is not an error: it comes back as an error result in the run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A model of a model list ([`AgentBuilder::models`](crate::AgentBuilder::models))
    /// failed with an error that does not fail over (authentication, a bad
    /// request, an invalid response: see [`ModelError::fails_over`]), so
    /// the next model was not asked.
    #[error(
        "{model}: {source} — not failed over to {next}: only rate limits, overloads, conversations too long for the model and errors that outlast the retries fail over; fix this one"
    )]
    NotFailedOver {
        /// The model that failed.
        model: String,
        /// The model that was not asked.
        next: String,
        /// Its error.
        source: ModelError,
    },
    /// Every model of a model list failed (each error failed over to the
    /// next model, but the last one).
    #[error(
        "every model of the list failed: {}", failures.iter().map(|(m, e)| format!("{m}: {e}")).collect::<Vec<_>>().join("; ")
    )]
    ModelsFailed {
        /// Each model tried, in order, with its error.
        failures: Vec<(String, ModelError)>,
    },
    /// The model kept calling tools past `max_turns`.
    #[error(
        "the run took more than {max_turns} model turns; raise max_turns or check the tools' results"
    )]
    MaxTurnsExceeded {
        /// The limit.
        max_turns: usize,
    },
    /// The run was cancelled.
    #[error("the run was cancelled")]
    Cancelled,
    /// The run did not finish within its
    /// [`timeout`](crate::agent::RunRequest::timeout).
    #[error(
        "the run did not finish within its timeout of {timeout:?}; raise the timeout or ask for less"
    )]
    TimedOut {
        /// The timeout that passed.
        timeout: std::time::Duration,
    },
    /// A tool source (an MCP server) could not get ready.
    #[error(transparent)]
    ToolSource(#[from] ToolSourceError),
    /// Two tools share a name (e.g. an MCP server's tool and one of yours).
    #[error(transparent)]
    DuplicateTool(#[from] DuplicateToolError),
    /// A paused run's state could not be resumed.
    #[error(transparent)]
    RunState(#[from] RunStateError),
    /// A stored session could not take the run's messages (another writer
    /// appended first, or the store failed).
    #[error(transparent)]
    Session(#[from] crate::session::StoreError),
    /// [`Session::resume_interrupted`](crate::Session::resume_interrupted)
    /// named a run that is not an interrupted run of the session (it
    /// completed, another process resumed it, or it belongs to another
    /// session).
    #[error(
        "session {session:?} has no interrupted run {run}; it may have finished or been resumed meanwhile: see the session's runs (lousho sessions show {session})"
    )]
    NoInterruptedRun {
        /// The run asked for.
        run: String,
        /// The session.
        session: String,
    },
    /// Agents calling agents ([`Agent::as_tool`](crate::Agent::as_tool))
    /// went deeper than the limit: an agent probably calls itself, directly
    /// or through others.
    #[error(
        "agents calling agents went deeper than {limit} levels; break the cycle of agents calling each other, or raise the limit with AgentTool::max_depth"
    )]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// A hook ([`crate::agent::hooks`]) refused the model request, failed or
    /// panicked.
    #[error(transparent)]
    Hook(#[from] super::hooks::HookError),
    /// The final answer did not match the run's output schema.
    #[error(transparent)]
    Output(#[from] super::OutputError),
    /// A bug: the run stopped unexpectedly.
    #[error("internal error: {0}")]
    Internal(String),
}

impl AgentError {
    /// The failure's kind on the run's span (`error.type`).
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            AgentError::Model(_)
            | AgentError::NotFailedOver { .. }
            | AgentError::ModelsFailed { .. } => "model_error",
            AgentError::MaxTurnsExceeded { .. } => "max_turns_exceeded",
            AgentError::Cancelled => "cancelled",
            AgentError::TimedOut { .. } => "timeout",
            AgentError::ToolSource(_) => "tool_source_error",
            AgentError::DuplicateTool(_) => "duplicate_tool",
            AgentError::RunState(_) => "run_state_error",
            AgentError::Hook(_) => "hook_error",
            AgentError::Output(_) => "output_error",
            _ => "_OTHER",
        }
    }
}
