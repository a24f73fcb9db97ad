use super::Tool;
use async_trait::async_trait;
use std::sync::Arc;

/// A source of tools that come and go at run time (MCP servers, for instance).
///
/// The agent calls [`ready`](ToolSource::ready) before each run (it connects
/// what is not connected yet), reads [`tools`](ToolSource::tools) at the start
/// of every turn, and calls [`close`](ToolSource::close) from `Agent::close`.
#[async_trait]
pub trait ToolSource: Send + Sync + 'static {
    /// A short name for errors and logs.
    fn name(&self) -> &str;

    /// Makes the tools available (connects). Called before every run; must be
    /// cheap when already ready.
    async fn ready(&self) -> Result<(), ToolSourceError>;

    /// The tools available now.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;

    /// What the source asks the model to know, added to the system prompt
    /// at the start of each run (after [`ready`](ToolSource::ready)): for
    /// MCP servers, their `instructions`. Default: nothing.
    fn instructions(&self) -> Option<String> {
        None
    }

    /// Releases everything (disconnects, stops processes). Idempotent.
    async fn close(&self);
}

/// A tool source could not get ready.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: {error}")]
pub struct ToolSourceError {
    /// The source's name.
    pub source_name: String,
    /// What went wrong.
    #[source]
    pub error: Box<dyn std::error::Error + Send + Sync>,
}

impl ToolSourceError {
    /// A new error for source `name`.
    pub fn new(
        source_name: impl Into<String>,
        error: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self {
            source_name: source_name.into(),
            error: error.into(),
        }
    }
}
