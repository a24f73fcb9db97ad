//! MCP in both directions: use MCP servers in an agent ([`client`]) and serve
//! an agent over MCP ([`server`]).

pub mod client;
pub mod server;

pub use client::{
    ConnectOptions, LoadOptions, McpClient, McpError, McpServer, McpServers, OnError, ServerStatus,
    ToolNaming, connect_mcp, load_mcp_tools,
};

/// The rmcp crate (the MCP protocol implementation lousho builds on), for
/// [`load_mcp_tools`] with a client you connected yourself. This is the only
/// place rmcp types reach lousho's public API; rmcp's major version may move
/// faster than lousho's.
pub use rmcp;
