//! Talking back to the MCP client a tool runs for: progress, log messages,
//! elicitation and sampling. The types here do not depend on MCP being
//! compiled in; `serve_mcp` supplies the channel.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::time::Duration;

/// A log message's severity: MCP's (syslog's) eight levels, least severe first.
/// Asking a server for a level means that level and the more severe ones.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LogLevel {
    /// Detailed information for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level's MCP name (`debug` … `emergency`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The user's answer to an elicitation ([`ToolContext::elicit`](super::ToolContext::elicit)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Elicitation {
    /// The user filled in the form: the values, by property name.
    Accepted(Map<String, Value>),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the form without choosing.
    Cancelled,
}

/// Who speaks in a [`SamplingMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SamplingRole {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

/// One text message of a [`SamplingRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: SamplingRole,
    /// What is said.
    pub text: String,
}

/// A request for the client's model (`sampling/createMessage`), text only.
///
/// ```
/// use lousho::tool::SamplingRequest;
/// let request = SamplingRequest::new(100)
///     .system("Answer in one word.")
///     .user("What colour is the sky?");
/// # let _ = request;
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[must_use]
pub struct SamplingRequest {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// A system prompt the client may use.
    pub system_prompt: Option<String>,
    /// The most tokens the reply may have.
    pub max_tokens: u32,
    /// A sampling temperature the client may use.
    pub temperature: Option<f32>,
}

impl SamplingRequest {
    /// An empty request allowing `max_tokens` tokens of reply.
    pub fn new(max_tokens: u32) -> Self {
        Self {
            messages: Vec::new(),
            system_prompt: None,
            max_tokens,
            temperature: None,
        }
    }

    /// Adds a user message.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(SamplingMessage {
            role: SamplingRole::User,
            text: text.into(),
        });
        self
    }

    /// Adds an assistant message.
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.messages.push(SamplingMessage {
            role: SamplingRole::Assistant,
            text: text.into(),
        });
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }
}

/// The client model's reply to a [`SamplingRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingReply {
    /// The model the client used.
    pub model: String,
    /// The reply's text parts, joined (empty when it has none).
    pub text: String,
    /// Why the model stopped (`endTurn`, `maxTokens`, …), if the client said.
    pub stop_reason: Option<String>,
    /// The reply's content as the client sent it.
    pub content: Value,
}

/// Why a tool could not talk to its MCP client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The tool is not running for an MCP client (called by a local agent,
    /// a test, or the CLI).
    #[error(
        "cannot {action}: this tool call did not come from an MCP client (it is not being served with `serve_mcp`); treat this as optional or check `ToolContext::has_client()` first"
    )]
    NotUnderMcp {
        /// What the tool tried.
        action: &'static str,
    },
    /// The client did not declare the capability this needs.
    #[error(
        "cannot {action}: the MCP client did not declare the `{capability}` capability; fall back to a default or fail the call with a message for the user"
    )]
    Unsupported {
        /// What the tool tried.
        action: &'static str,
        /// The client capability needed (`elicitation`, `sampling`).
        capability: &'static str,
    },
    /// The client did not ask for progress (no `progressToken` on the call).
    #[error(
        "the MCP client did not ask for progress on this call (no progressToken); progress is optional, so carry on"
    )]
    ProgressNotRequested,
    /// The request was not valid (e.g. an elicitation schema MCP does not allow).
    #[error("invalid {what}: {reason}")]
    InvalidRequest {
        /// What was invalid.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The client did not answer in time.
    #[error("the MCP client did not answer within {} s", .0.as_secs_f32())]
    TimedOut(Duration),
    /// The tool call was cancelled while waiting for the client.
    #[error("the tool call was cancelled while waiting for the MCP client")]
    Cancelled,
    /// The client answered with an error or the connection failed.
    #[error("the MCP client could not {action}: {reason}")]
    Failed {
        /// What the tool tried.
        action: &'static str,
        /// What went wrong.
        reason: String,
    },
}

/// Where a tool's messages to its client go; implemented by the MCP server.
#[async_trait::async_trait]
pub(crate) trait ClientChannel: Send + Sync + fmt::Debug {
    /// Whether the client declared the elicitation (form) capability.
    fn can_elicit(&self) -> bool;
    /// Whether the client declared the sampling capability.
    fn can_sample(&self) -> bool;
    /// Sends a progress notification for the call.
    async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), ClientError>;
    /// Sends a log message (filtered by the level the client set).
    async fn log(
        &self,
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    ) -> Result<(), ClientError>;
    /// Asks the user through a form; `schema` is an MCP elicitation schema.
    async fn elicit(
        &self,
        message: String,
        schema: Value,
        timeout: Option<Duration>,
    ) -> Result<Elicitation, ClientError>;
    /// Sends one step of a served run's progress (a message; the counter
    /// is the run's). Nothing when the client asked for no progress.
    async fn step(&self, message: String);
    /// Whether the client's model can call tools in sampling (`sampling.tools`).
    fn can_sample_tools(&self) -> bool;
    /// One `sampling/createMessage`: its params as JSON, its result as JSON
    /// (`model: sampling`).
    async fn create_message(
        &self,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, ClientError>;
    /// Asks the client's model.
    async fn sample(
        &self,
        request: SamplingRequest,
        timeout: Option<Duration>,
    ) -> Result<SamplingReply, ClientError>;
}
