//! MCP in both directions: use MCP servers in an agent ([`client`]) and serve
//! an agent over MCP ([`server`]).

pub mod client;
pub mod server;
