//! Use MCP servers in an agent — the Rust edition of the product page's
//! "Use MCP servers in an agent", "connectMcp", "Approval for MCP tools" and
//! "Tools from a client you connected yourself" examples.
//!
//! Run it with `cargo run -p lousho --example mcp_client`. It uses the
//! offline `test` model (which calls every tool once) and, as its MCP server,
//! the official filesystem server through `npx` (Node.js needed; the first run
//! downloads the package). Point it at another stdio server with
//! `MCP_COMMAND="node path/to/server.js"`.

use lousho::mcp::rmcp::ServiceExt;
use lousho::mcp::rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use lousho::mcp::{ConnectOptions, LoadOptions, OnError, load_mcp_tools};
use lousho::model::testing::TestModel;
use lousho::{Agent, Approval};
use lousho::{McpServer, connect_mcp};

/// The stdio server to use: `$MCP_COMMAND`, or the filesystem server via npx.
fn files_server() -> McpServer {
    match std::env::var("MCP_COMMAND") {
        Ok(cmd) => {
            let mut parts = cmd.split_whitespace();
            let program = parts.next().unwrap_or("node");
            McpServer::stdio(program).args(parts)
        }
        Err(_) => {
            McpServer::stdio("npx").args(["-y", "@modelcontextprotocol/server-filesystem", "."])
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. Servers on the agent: they connect on `ready()` or the first `send`,
    //    all in parallel; tools appear as `<server>__<tool>` (e.g. files__list_directory).
    //    An HTTP server would be added the same way:
    //    .mcp_server("docs", McpServer::http("https://example.com/mcp").header("Authorization", "Bearer <token>"))
    let agent = Agent::builder()
        .model(TestModel::new().call_tools(["files__list_allowed_directories"]))
        .mcp_server("files", files_server())
        .build()?;
    let reply = agent.send("List the files here.").await?;
    println!("agent: {}", reply.text);
    agent.close().await; // stops the stdio process; a later send reconnects

    // 2. connect_mcp: connect up front, choose how failures are handled,
    //    share the tools between agents.
    let mcp = connect_mcp(
        [
            ("files", files_server()),
            // A server that cannot start is left out (and logged through tracing).
            ("broken", McpServer::stdio("/nonexistent/mcp-server")),
        ],
        ConnectOptions::default().on_error(OnError::Skip),
    )
    .await?;
    println!("status: {:?}", mcp.status()); // {"files": Connected}
    let agent = Agent::builder().model("test").tools(mcp.tools()).build()?;
    println!("tools: {:?}", agent.tools()?);

    // 3. Approval: annotations by default; or always / never / a function of
    //    the bare tool name and its annotations (only in code).
    let ask_unless_search = McpServer::http("https://example.com/mcp").approval(Approval::custom(
        |name, _annotations| !name.starts_with("search"),
    ));
    let trusted = McpServer::stdio("node")
        .arg("./scratch-server.js")
        .approval(Approval::Never);
    let _ = (ask_unless_search, trusted);
    for tool in mcp.tools().iter() {
        println!(
            "{:40} asks for approval: {}",
            tool.spec().name,
            tool.spec().needs_approval()
        );
    }
    mcp.close().await;

    // 4. Tools from a client you connected yourself with rmcp (re-exported as
    //    `lousho::mcp::rmcp`).
    let cmd = tokio::process::Command::new("npx").configure(|c| {
        c.args(["-y", "@modelcontextprotocol/server-filesystem", "."])
            .kill_on_drop(true);
    });
    if let Ok(transport) = TokioChildProcess::new(cmd)
        && let Ok(client) = ().serve(transport).await
    {
        let tools = load_mcp_tools(&client, "my-server", LoadOptions::default()).await?;
        let agent = Agent::builder()
            .model("test")
            .prompt("...")
            .tools(tools)
            .build()?;
        println!("loaded: {:?}", agent.own_tools());
        client.cancel().await?;
    }
    Ok(())
}
