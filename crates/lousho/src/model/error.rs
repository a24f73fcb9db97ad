use std::time::Duration;

/// Why a model turn failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The model string names no known provider.
    #[error(
        "unknown model `{model}`: use `vendor/model` with vendor one of openai, anthropic, openrouter, ollama, test"
    )]
    UnknownModel {
        /// The string given.
        model: String,
    },
    /// The provider's API key is not set.
    #[error(
        "{provider}: no API key — set the {env_var} environment variable or pass a key to the provider builder"
    )]
    MissingApiKey {
        /// The provider.
        provider: String,
        /// The variable to set.
        env_var: String,
    },
    /// 401/403 from the provider.
    #[error("{provider}: authentication failed (HTTP {status}): {message} — check the API key")]
    Authentication {
        /// The provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// 429 from the provider.
    #[error("{provider}: rate limited{}: {message}", retry_after.map(|d| format!(" (retry after {d:?})")).unwrap_or_default())]
    RateLimited {
        /// The provider.
        provider: String,
        /// The `Retry-After` delay, when sent.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// The account is out of credits or over its quota (a 429 that waiting
    /// does not fix, e.g. OpenAI's `insufficient_quota`).
    #[error("{provider}: quota exceeded: {message} — check the account's plan and billing")]
    QuotaExceeded {
        /// The provider.
        provider: String,
        /// The provider's message.
        message: String,
    },
    /// The conversation is longer than the model's context.
    #[error("{provider}: context length exceeded: {message}")]
    ContextLengthExceeded {
        /// The provider.
        provider: String,
        /// The provider's message.
        message: String,
    },
    /// 4xx other than the above.
    #[error("{provider}: bad request (HTTP {status}): {message}")]
    BadRequest {
        /// The provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider is overloaded: Anthropic's `overloaded_error` (HTTP 529,
    /// or an `error` event after the 200), HTTP 503 from any provider.
    /// Retried like a server error; a model list fails over at once.
    #[error(
        "{provider}: overloaded (HTTP {status}): {message} — try again later or add a fallback model"
    )]
    Overloaded {
        /// The provider.
        provider: String,
        /// The HTTP status (529 for Anthropic, else 503).
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// 5xx from the provider.
    #[error("{provider}: server error (HTTP {status}): {message}")]
    Server {
        /// The provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The connection failed or broke.
    #[error("{provider}: network error: {}", crate::error_chain::error_chain(source.as_ref()))]
    Network {
        /// The provider.
        provider: String,
        /// What happened (the HTTP client's error, with its own sources).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The response could not be understood.
    #[error("{provider}: invalid response: {message}")]
    InvalidResponse {
        /// The provider.
        provider: String,
        /// What was wrong.
        message: String,
    },
    /// A tool schema cannot be made acceptable to the provider.
    #[error("{provider}: the input schema of tool `{tool}` cannot be sent: {message}")]
    InvalidToolSchema {
        /// The provider.
        provider: String,
        /// The tool.
        tool: String,
        /// Why.
        message: String,
    },
    /// The provider is configured wrongly (a malformed base URL, a key that
    /// cannot be sent as a header).
    #[error("{provider}: invalid configuration: {message}")]
    InvalidConfig {
        /// The provider.
        provider: String,
        /// What is wrong.
        message: String,
    },
    /// `model: sampling` in a run that has no MCP client to ask.
    #[error(
        "model `sampling` uses the calling MCP client's model, and this run has no MCP client: serve the agent over MCP (`lousho mcp`, `serve_mcp`) or set another model"
    )]
    NoSamplingClient,
    /// `model: sampling`, an agent with tools, and a client whose model
    /// cannot call tools.
    #[error(
        "model `sampling`: the MCP client's model cannot call tools (the client does not declare `sampling.tools`), and this agent has tools ({}); use a client that supports tool use in sampling (protocol 2025-11-25), or serve an agent without tools", tools.join(", ")
    )]
    SamplingToolsUnsupported {
        /// The agent's tools.
        tools: Vec<String>,
    },
    /// `model: sampling`: the client's `sampling/createMessage` failed.
    #[error("model `sampling`: {source}")]
    Sampling {
        /// What the client said, or why it could not be asked.
        #[source]
        source: Box<crate::tool::ClientError>,
    },
    /// The request was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// A [`ScriptedModel`](crate::model::testing::ScriptedModel) ran out of turns, or its script
    /// said to fail.
    #[error("scripted model: {0}")]
    Scripted(String),
    /// A replayed run's request differs from its [cassette](crate::cassette)'s
    /// (or the cassette has no answer for it).
    #[error(transparent)]
    Cassette(Box<crate::cassette::CassetteError>),
}

impl ModelError {
    /// Whether retrying the same request may succeed (429, 5xx, overload,
    /// network).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ModelError::RateLimited { .. }
                | ModelError::Overloaded { .. }
                | ModelError::Server { .. }
                | ModelError::Network { .. }
        )
    }

    /// Whether a model list ([`AgentBuilder::models`](crate::AgentBuilder::models))
    /// moves on to its next model after this error: the errors that
    /// [fail over at once](Self::fails_over_at_once), and the
    /// [retryable](Self::is_retryable) ones once the provider's retry policy
    /// gave up. Not: authentication, bad requests, invalid responses or
    /// configuration, cancellation — another model would fail the same way,
    /// or the caller has to fix something.
    pub fn fails_over(&self) -> bool {
        self.fails_over_at_once() || self.is_retryable()
    }

    /// Whether a model list moves on to its next model at once, without the
    /// retry policy's retries: a rate limit or an exhausted quota (429), an
    /// overloaded provider (Anthropic 529, 503) or a conversation longer
    /// than the model's context.
    pub fn fails_over_at_once(&self) -> bool {
        matches!(
            self,
            ModelError::RateLimited { .. }
                | ModelError::QuotaExceeded { .. }
                | ModelError::Overloaded { .. }
                | ModelError::ContextLengthExceeded { .. }
        )
    }
}
