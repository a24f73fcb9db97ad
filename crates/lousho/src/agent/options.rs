use tokio_util::sync::CancellationToken;

/// Options for one run.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
#[must_use]
pub struct SendOptions {
    /// Cancels the run: the model stream stops, running tools see their
    /// context's token fire, and the run returns [`AgentError::Cancelled`](crate::AgentError::Cancelled).
    pub cancel: Option<CancellationToken>,
}

impl SendOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels the run when `token` fires.
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
}
