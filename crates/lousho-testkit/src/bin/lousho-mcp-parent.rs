//! A process that mounts one stdio MCP server with lousho's client, prints
//! `connected <tool count>` and then waits for ever: the parent that the
//! die-with-parent test kills with SIGKILL.
//!
//! `lousho-mcp-parent <command> [args…]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use lousho::mcp::ConnectOptions;
use lousho::{McpServer, connect_mcp};
use std::io::Write;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let command = args
        .next()
        .expect("usage: lousho-mcp-parent <command> [args…]");
    let server = McpServer::stdio(command).args(args.collect::<Vec<_>>());
    let mcp = connect_mcp([("child", server)], ConnectOptions::default())
        .await
        .expect("the server connects");
    println!("connected {}", mcp.tools().len());
    std::io::stdout().flush().unwrap();
    std::future::pending::<()>().await;
}
