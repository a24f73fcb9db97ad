use super::config::ConfigError;
use super::naming::NameCollision;
use std::time::Duration;

/// Why an MCP server could not be used. Every variant names the server;
/// stdio errors carry the tail of the server's stderr when it is captured.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The stdio command could not be started.
    #[error(
        "MCP server `{server}`: could not start `{command}`: {message}; check that it is installed and on PATH"
    )]
    Spawn {
        /// The server's name.
        server: String,
        /// The command that failed.
        command: String,
        /// The OS error.
        message: String,
    },
    /// The HTTP endpoint answered with an error status or could not be reached.
    #[error("MCP server `{server}` at {url}: {message}")]
    Http {
        /// The server's name.
        server: String,
        /// The URL (without credentials).
        url: String,
        /// What happened (status, connection error).
        message: String,
        /// The HTTP status, when there was one.
        status: Option<u16>,
    },
    /// The server started but the MCP handshake failed (it exited, wrote
    /// something that is not MCP, or refused the protocol).
    #[error(
        "MCP server `{server}`: handshake failed: {message}{}",
        stderr_note(stderr)
    )]
    Handshake {
        /// The server's name.
        server: String,
        /// What went wrong.
        message: String,
        /// The tail of the server's stderr (when captured).
        stderr: Option<String>,
    },
    /// Connecting (start + handshake + listing tools) took too long.
    #[error(
        "MCP server `{server}`: did not finish starting within {timeout:?}; raise `startupTimeoutMs` if it downloads packages on first run{}",
        stderr_note(stderr)
    )]
    StartupTimeout {
        /// The server's name.
        server: String,
        /// The limit.
        timeout: Duration,
        /// The tail of the server's stderr (when captured).
        stderr: Option<String>,
    },
    /// Listing the server's tools failed.
    #[error("MCP server `{server}`: could not list tools: {message}")]
    ListTools {
        /// The server's name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// Two tools ended up with one name.
    #[error(transparent)]
    NameCollision(#[from] NameCollision),
    /// The entry asks for OAuth, which this build cannot do yet.
    #[error(
        "MCP server `{server}`: OAuth sign-in (`oauth`) is not supported yet; pass a token in `headers` (`Authorization: Bearer …`) instead"
    )]
    OAuthNotSupported {
        /// The server's name.
        server: String,
    },
    /// The server was disconnected and reconnecting is off (`lazy: false`).
    #[error(
        "MCP server `{server}` is disconnected ({reason}) and lazy reconnect is off; connect again with connect_mcp"
    )]
    Disconnected {
        /// The server's name.
        server: String,
        /// Closed, or how the connection dropped.
        reason: String,
    },
    /// No server with that name.
    #[error("no MCP server named `{server}`")]
    UnknownServer {
        /// The name asked for.
        server: String,
    },
    /// The entry is malformed.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

fn stderr_note(stderr: &Option<String>) -> String {
    match stderr {
        Some(tail) => format!("\n--- server stderr (tail) ---\n{tail}"),
        None => String::new(),
    }
}

impl McpError {
    /// The server the error is about, when there is one.
    pub fn server(&self) -> Option<&str> {
        match self {
            McpError::Spawn { server, .. }
            | McpError::Http { server, .. }
            | McpError::Handshake { server, .. }
            | McpError::StartupTimeout { server, .. }
            | McpError::ListTools { server, .. }
            | McpError::OAuthNotSupported { server }
            | McpError::Disconnected { server, .. }
            | McpError::UnknownServer { server } => Some(server),
            McpError::NameCollision(c) => Some(&c.second_server),
            McpError::Config(_) => None,
        }
    }
}
