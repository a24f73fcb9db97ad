//! MCP in both directions: use MCP servers in an agent ([`client`]) and serve
//! an agent over MCP ([`server`]).

#[cfg(feature = "mcp-client")]
pub mod client;
#[cfg(feature = "mcp-server")]
pub mod server;

#[cfg(feature = "oauth")]
pub use client::oauth;
// Every public item of `client` and `server`, flat: `lousho::mcp::X` is the
// one path (`McpServer`, `connect_mcp`, `serve_mcp` and `ServeOptions` are at
// the crate root).
#[cfg(feature = "mcp-client")]
pub use client::{
    ConfigError, ConnectOptions, ElicitationHandler, ElicitationRequest, ElicitationResponse,
    HttpTransport, IdpSettings, LOG_TARGET, LoadOptions, McpClient, McpConfigFile, McpError,
    McpServers, McpTool, McpTransport, NameCollision, OAuthGrant, OAuthSettings, OnError,
    ServerIdentity, ServerStatus, SigningAlgorithm, StderrMode, StdioTransport, ToolFilter,
    ToolFingerprint, ToolNames, ToolNaming, fill_defaults, load_mcp_tools, parse_mcp_servers,
    servers_from_value,
};
#[cfg(feature = "mcp-server")]
pub use server::{
    Auth, BearerToken, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_HTTP_PATH,
    DEFAULT_HTTP_PORT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_LINE_BYTES,
    HttpOptions, McpServerHandle, ServeError, ServeTransport,
};

/// The rmcp crate (the MCP protocol implementation lousho builds on), for
/// [`load_mcp_tools`] with a client you connected yourself. This is the only
/// place rmcp types reach lousho's public API; rmcp's major version may move
/// faster than lousho's.
pub use rmcp;
