use crate::AgentError;
use crate::tool::DuplicateToolError;

/// Why an MCP server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The agent tool's name is not a valid MCP tool name.
    #[error(
        "the agent tool name `{0}` is invalid: use 1-64 characters of a-z, A-Z, 0-9, `_` and `-` (set `tool_name`)"
    )]
    InvalidToolName(String),
    /// Two exposed tools share a name (often the agent tool and a direct tool).
    #[error(transparent)]
    DuplicateTool(#[from] DuplicateToolError),
    /// `Auth::bearer` was given an empty token: nobody could call the server.
    #[error(
        "the bearer token is empty, so no client could call the server: set a non-empty token (check that the variable holding it is set and not empty)"
    )]
    EmptyBearerToken,
    /// The OAuth resource server's settings are unusable.
    #[error(transparent)]
    OAuth(#[from] super::resource_server::OAuthResourceError),
    /// The HTTP path does not start with `/`.
    #[error("the HTTP path `{0}` must start with `/` (e.g. `/mcp`)")]
    InvalidPath(String),
    /// The HTTP address could not be bound.
    #[error("cannot listen on {addr}: {source}; pick another port (0 picks a free one) or host")]
    Bind {
        /// The address asked for.
        addr: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The skills folder could not be read (`ServeOptions::skills`).
    #[cfg(feature = "builtin")]
    #[error(transparent)]
    Skills(#[from] crate::skills::SkillLoadError),
    /// The agent's tools could not be listed (a tool source failed).
    #[error("cannot list the agent's tools: {0}")]
    Agent(#[from] AgentError),
    /// A resource template lousho cannot match.
    #[error(transparent)]
    InvalidUriTemplate(#[from] super::uri_template::UriTemplateError),
    /// Two resources (or resource templates) share a URI.
    #[error("two resources are served at `{0}`; give each its own URI")]
    DuplicateResource(String),
    /// Two prompts share a name.
    #[error("two prompts are named `{0}`; rename one")]
    DuplicatePrompt(String),
    /// Serving failed (stdio or HTTP I/O).
    #[error("the MCP server failed: {0}")]
    Io(#[from] std::io::Error),
    /// The server task stopped unexpectedly (a bug).
    #[error("the MCP server task stopped unexpectedly: {0}")]
    Internal(String),
}
