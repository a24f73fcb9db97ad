/// Why a tool call failed. The agent turns it into an error result the model
/// sees (`is_error: true`), with this error's message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The model's arguments did not fit the tool's input schema.
    #[error("invalid arguments for `{tool}`: {message}")]
    InvalidInput {
        /// The tool's name.
        tool: String,
        /// Which field was wrong and how (e.g. "`query`: missing field").
        message: String,
    },
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The call took too long.
    #[error("timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// An agent run as a tool ([`Agent::as_tool`](crate::Agent::as_tool))
    /// failed.
    #[error("the agent `{tool}` failed: {source}")]
    Agent {
        /// The agent tool's name.
        tool: String,
        /// Why its run failed: an [`AgentError`](crate::AgentError) (read it
        /// with `source.downcast_ref::<AgentError>()`). Boxed as an error
        /// because tools are a lower layer than agents.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Another error, kept as its source.
    #[error(transparent)]
    Other(#[from] Box<dyn std::error::Error + Send + Sync>),
}

impl ToolError {
    /// A failure with a message for the model.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }
}
