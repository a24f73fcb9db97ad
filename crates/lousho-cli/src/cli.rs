//! The command line (clap).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Exit codes:
  0  success
  1  the run, the model or the tool failed (a denied or failed tool call included)
  2  bad command line or spec file
  3  an MCP server could not connect

Logs go to stderr; set LOUSHO_LOG (e.g. LOUSHO_LOG=debug) or pass -v for more.
Spec files: docs/cli.md and schemas/agent-spec.schema.json.";

/// Run AI agents from spec files, and serve them over MCP.
#[derive(Debug, Parser)]
#[command(name = "lousho", version, after_help = AFTER_HELP)]
pub struct Cli {
    /// More logs on stderr (-v: debug for lousho, -vv: everything).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a spec's agent over MCP (stdio by default).
    #[command(after_help = "\
Examples:
  lousho mcp agent.yaml
  lousho mcp agent.yaml --http --port 3920 --host 127.0.0.1
  TOKEN=s3cret lousho mcp agent.yaml --http --token-env TOKEN

From Claude Code's .mcp.json:
  {\"mcpServers\": {\"support-bot\": {\"command\": \"lousho\", \"args\": [\"mcp\", \"agent.yaml\"]}}}

Over stdio only the MCP protocol is written to stdout; logs go to stderr.")]
    Mcp(McpArgs),
    /// Run a spec's agent: answer MESSAGE, or chat without one.
    #[command(after_help = "\
Examples:
  lousho run examples/agents/quickstart.yaml \"What files are in this folder?\"
  lousho run agent.yaml --model openai/gpt-4o-mini \"Summarise README.md\"
  lousho run agent.yaml                      # multi-turn prompt (Ctrl-D to quit)

The answer streams to stdout; tool activity and MCP progress go to stderr.
Tool calls that need approval are asked on the terminal (y/n/a = always for
this tool). When stdin is not a terminal they are denied; allow them with a
permission rule in the spec: permissions: {rules: [{tool: NAME, decision: allow}]}.")]
    Run(RunArgs),
    /// List the tools the agent would see, with approval decisions and MCP server status.
    #[command(after_help = "\
Examples:
  lousho tools agent.yaml
  lousho tools agent.yaml --json | jq '.tools[] | select(.decision == \"ask\")'

--json prints one object (a stable format for scripts):
  {\"tools\": [{\"name\", \"server\" (null for built-in tools), \"decision\": \"run\"|\"ask\"|\"deny\",
              \"reason\", \"annotations\"}],
   \"servers\": {\"<name>\": {\"status\": \"connected\"|\"failed\"|\"needs-auth\"|\"idle\", \"error\"}}}")]
    Tools(ToolsArgs),
    /// Call one tool through the agent's permission and approval checks; print its result.
    #[command(after_help = "\
Examples:
  lousho call agent.yaml current_date
  lousho call agent.yaml read_file '{\"path\": \"README.md\"}'
  lousho call agent.yaml files__list_dir '{\"path\": \".\"}'

The result's text goes to stdout. Exit code 1 when the tool returned an error
or the call was denied.")]
    Call(CallArgs),
}

/// `lousho mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The agent spec file (YAML).
    pub spec: PathBuf,
    /// Serve Streamable HTTP instead of stdio.
    #[arg(long)]
    pub http: bool,
    /// HTTP port.
    #[arg(long, default_value_t = 3920, requires = "http")]
    pub port: u16,
    /// HTTP host to bind (a non-loopback host without auth logs a warning).
    #[arg(long, default_value = "127.0.0.1", requires = "http")]
    pub host: String,
    /// HTTP path of the endpoint.
    #[arg(long, default_value = "/mcp", requires = "http")]
    pub path: String,
    /// Require `Authorization: Bearer <token>` with the token read from this
    /// environment variable (overrides the spec's serve.auth).
    #[arg(long, value_name = "VAR", requires = "http")]
    pub token_env: Option<String>,
    /// Use this model instead of the spec's.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
}

/// `lousho run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The agent spec file (YAML).
    pub spec: PathBuf,
    /// The message; without one, a multi-turn prompt opens.
    pub message: Option<String>,
    /// Use this model instead of the spec's (e.g. openai/gpt-4o-mini, test).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
}

/// `lousho tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The agent spec file (YAML).
    pub spec: PathBuf,
    /// Print one JSON object (stable format).
    #[arg(long)]
    pub json: bool,
}

/// `lousho call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The agent spec file (YAML).
    pub spec: PathBuf,
    /// The tool's full name (`read_file`, `docs__search`).
    pub tool: String,
    /// The tool's input, a JSON object (default `{}`).
    pub input: Option<String>,
}
