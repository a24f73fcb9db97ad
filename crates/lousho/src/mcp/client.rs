//! Use MCP servers: connect stdio and Streamable HTTP servers and mount their
//! tools as `<server>__<tool>`.
//!
//! Three ways in:
//! - [`AgentBuilder::mcp_server`](crate::AgentBuilder::mcp_server): the agent
//!   connects on `ready()` or its first run and closes on `close()`;
//! - [`connect_mcp`]: connect up front, check [`status`](McpClient::status),
//!   share [`tools`](McpClient::tools) between agents;
//! - [`load_mcp_tools`]: tools from an rmcp client you connected yourself.

mod call;
pub(crate) mod config;
mod connect;
mod connection;
mod elicitation;
mod error;
mod fingerprint;
mod handler;
mod http;
mod identity;
mod live;
mod load;
pub mod naming;
#[cfg(feature = "oauth")]
pub mod oauth;
#[cfg(not(feature = "oauth"))]
mod oauth_off;
#[cfg(not(feature = "oauth"))]
use oauth_off as oauth;
mod pinning;
mod process;
mod result;
mod stderr;
mod stdout_watch;
mod tool;
mod warnings;

pub use config::{
    ConfigError, HttpTransport, IdpSettings, McpConfigFile, McpServers, McpTransport, OAuthGrant,
    OAuthSettings, SigningAlgorithm, StderrMode, StdioTransport, ToolFilter, parse_mcp_servers,
    servers_from_value,
};
pub use connect::{ConnectOptions, McpClient, OnError, connect_mcp};
pub use connection::ServerStatus;
pub use elicitation::{ElicitationHandler, ElicitationRequest, ElicitationResponse, fill_defaults};
pub use error::McpError;
pub use fingerprint::ToolFingerprint;
pub use identity::ServerIdentity;
pub use load::{LoadOptions, load_mcp_tools};
pub use naming::{NameCollision, ToolNames, ToolNaming};
pub use tool::McpTool;
pub use warnings::LOG_TARGET;
