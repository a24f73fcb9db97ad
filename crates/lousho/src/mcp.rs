//! MCP in both directions: use MCP servers in an agent ([`client`]) and serve
//! an agent over MCP ([`server`]).

#[cfg(feature = "mcp-client")]
pub mod client;
#[cfg(feature = "mcp-server")]
pub mod server;

#[cfg(feature = "mcp-client")]
pub use client::oauth;
#[cfg(feature = "mcp-client")]
pub use client::{
    ConnectOptions, LoadOptions, McpClient, McpError, McpServers, OnError, ServerIdentity,
    ServerStatus, ToolFingerprint, ToolNaming, load_mcp_tools,
};
#[cfg(feature = "mcp-server")]
pub use server::{Auth, HttpOptions, McpServerHandle, ServeTransport};

/// The rmcp crate (the MCP protocol implementation lousho builds on), for
/// [`load_mcp_tools`] with a client you connected yourself. This is the only
/// place rmcp types reach lousho's public API; rmcp's major version may move
/// faster than lousho's.
pub use rmcp;
