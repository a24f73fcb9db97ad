//! `lousho`: run agents from spec files and serve them over MCP.

use clap::Parser;

/// Build, run and serve AI agents with first-class MCP support.
#[derive(Debug, Parser)]
#[command(name = "lousho", version, about, long_about = None)]
struct Cli {}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
