//! The command line (clap).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Exit codes:
  0    success (also when stdout is closed early, as by `| head`)
  1    the run, the model or the tool failed (a denied or failed tool call included);
       doctor: a check failed
  2    bad command line, spec file or setup (e.g. a missing API key)
  3    an MCP server could not connect
  4    the run paused for approval with no terminal to ask; it was saved, and
       stderr says how to go on: lousho resume <id> --approve <tool> | --deny <tool>
  5    the run stopped at a limit of the spec's budget: (its partial answer printed)
  130  interrupted (SIGINT, Ctrl-C); 143 terminated (SIGTERM)

Logs go to stderr: -v / -vv, else LOUSHO_LOG, else RUST_LOG (e.g. LOUSHO_LOG=debug);
colours only on a terminal and without NO_COLOR.
Traces: --trace, OTEL_EXPORTER_OTLP_ENDPOINT or a spec's telemetry.endpoint (docs/observability.md).
Tool manifests (the catalog): $LOUSHO_CACHE_DIR/manifests, else the user's cache
directory (~/.cache/lousho/manifests); --no-catalog turns them off, `lousho tools
--refresh` rebuilds them.
Spec files: docs/cli.md and schemas/agent-spec.schema.json.";

/// Run AI agents from spec files, and serve them over MCP.
#[derive(Debug, Parser)]
#[command(name = "lousho", version, after_help = AFTER_HELP)]
pub struct Cli {
    /// More logs on stderr (-v: debug for lousho, -vv: everything, with crate names).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Export the spans of runs and MCP calls over OTLP (HTTP/protobuf) to
    /// OTEL_EXPORTER_OTLP_ENDPOINT, else the spec's telemetry.endpoint, else
    /// http://localhost:4318. Either of those turns it on too;
    /// OTEL_SERVICE_NAME names the service (default: lousho). See
    /// docs/observability.md.
    #[arg(long, global = true)]
    pub trace: bool,
    /// The OAuth token file (default: $XDG_STATE_HOME/lousho/tokens.json, else
    /// ~/.local/state/lousho/tokens.json).
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        env = "LOUSHO_TOKENS",
        hide_env_values = true
    )]
    pub tokens: Option<PathBuf>,
    /// Where sessions and paused runs are kept: a SQLite file, or a
    /// postgres:// URL (default: $XDG_DATA_HOME/lousho/sessions.db, else
    /// ~/.local/share/lousho/sessions.db).
    #[arg(
        long,
        global = true,
        value_name = "FILE|URL",
        env = "LOUSHO_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
    /// Do not use or write tool manifests: connect every MCP server when the
    /// agent gets ready, as the library does without a store. By default a
    /// server whose tools are in a fresh manifest (under $LOUSHO_CACHE_DIR,
    /// else the user's cache directory) starts only when one of its tools is
    /// called.
    #[arg(long, global = true)]
    pub no_catalog: bool,
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

Over stdio only the MCP protocol is written to stdout; logs go to stderr.

lousho mcp import FILE [--into SPEC] copies another client's servers into a spec.")]
    Mcp(McpArgs),
    /// Run a spec's agent: answer MESSAGE, or chat without one.
    #[command(after_help = "\
Examples:
  lousho run examples/agents/quickstart.yaml \"What files are in this folder?\"
  lousho run agent.yaml --model openai/gpt-4o-mini \"Summarise README.md\"
  lousho run agent.yaml --session support \"And the second file?\"
  lousho run agent.yaml                      # multi-turn prompt (Ctrl-D to quit)

The answer streams to stdout; tool activity and MCP progress go to stderr.
With --session NAME the conversation is kept in the store (--store) and
continued by the next run with that name; the prompt saves each answer.
Tool calls that need approval are asked on the terminal (y/n/a = always for
this tool). When stdin is not a terminal the run pauses instead: it is saved,
stderr prints `lousho resume <id> --approve <tool>` (or --deny), and the exit
code is 4. To let a tool run unasked, allow it in the spec:
permissions: {rules: [{tool: NAME, decision: allow}]}.

The provider's base URL and sampling settings come from the spec:
  model: openai/gpt-4o-mini
  modelOptions:
    baseUrl: http://127.0.0.1:8080/v1   # else OPENAI_BASE_URL / ANTHROPIC_BASE_URL / OLLAMA_BASE_URL
    temperature: 0.2                    # 0 to 2
    maxOutputTokens: 1024               # per model turn
(--model replaces the model; the base URL then comes from the environment.)")]
    Run(RunArgs),
    /// List the tools the agent would see, with approval decisions and MCP server status.
    #[command(after_help = "\
Examples:
  lousho tools agent.yaml
  lousho tools agent.yaml --json | jq '.tools[] | select(.decision == \"ask\")'
  lousho tools agent.yaml --refresh          # connect every server, rebuild the manifests

--json prints one object (a stable format for scripts):
  {\"tools\": [{\"name\", \"origin\": \"local\"|\"builtin\"|\"mcp\", \"server\" (MCP tools),
              \"source\": \"live\"|\"catalog\" (MCP tools), \"manifestAgeSecs\" (catalog),
              \"decision\": \"run\"|\"ask\"|\"deny\",
              \"reason\", \"annotations\",
              \"fingerprint\" (MCP tools), \"pin\": \"pinned\"|\"new\"|\"changed\"|\"removed\"|null,
              \"drift\": [what changed], \"tokens\" (estimated), \"deferred\",
              \"inputSchema\" (as the tool gives it, in its own key order)}],
   \"servers\": {\"<name>\": {\"status\": \"connected\"|\"cataloged\"|\"failed\"|\"needs-auth\"|\"idle\",
                            \"error\", \"manifestAgeSecs\", \"tokens\"}},
   \"toolSearch\": {\"mode\": \"auto\"|\"on\"|\"off\", \"active\", \"totalTokens\",
                  \"firstRequestTokens\", \"deferred\"}}

Servers with a fresh manifest are not started (status cataloged): their tools
are listed from it. Tokens are estimated (4 bytes of a definition's JSON a
token); deferred tools (in parentheses) are held back by tool search (spec
keys toolSearch, alwaysLoadedTools; a server's defer).")]
    Tools(ToolsArgs),
    /// Call one tool through the agent's permission and approval checks; print its result.
    #[command(after_help = "\
Examples:
  lousho call agent.yaml current_date
  lousho call agent.yaml read_file '{\"path\": \"README.md\"}'
  lousho call agent.yaml files__list_dir '{\"path\": \".\"}'

The result's text goes to stdout. Exit code 1 when the tool returned an error
or the call was denied. Only the server that owns the tool is connected (known
from its manifest, else the server named by the tool's prefix, else the others
are tried); a built-in or local tool connects no server.")]
    Call(CallArgs),
    /// Go on with a run that paused for approval (see `lousho run`).
    #[command(after_help = "\
Examples:
  lousho resume 3f9c2a17d0b4e8c1 --approve delete_file
  lousho resume 3f9c2a17d0b4e8c1 --deny delete_file

The paused run names the spec file it came from; the agent is built from it
again. A pending call of a tool named by neither flag is denied. If the run was
a session's turn, the session is continued. Exit codes as for `lousho run`
(4 if it pauses again).")]
    Resume(ResumeArgs),
    /// List, show or remove stored sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Sign the agent in to an MCP server that has `oauth` (once; the grant is stored).
    #[command(after_help = "\
Examples:
  lousho login agent.yaml docs
  lousho login agent.yaml docs --no-browser      # print the URL only

The spec's entry needs oauth with a loopback redirect URI, e.g.
  mcpServers:
    docs:
      url: https://mcp.example.com/mcp
      oauth: {redirectUri: \"http://127.0.0.1:8765/callback\"}

The authorization URL is printed on stderr (and opened in a browser when one
exists); lousho listens on the redirect URI's port on 127.0.0.1 for the answer
(for up to 5 minutes), exchanges the code and stores the grant in the token
file (created 0600), keyed by the server's URL. Runs after that use and
refresh it; no tokens are ever printed.")]
    Login(LoginArgs),
    /// Forget the stored OAuth grant of an MCP server.
    #[command(after_help = "\
Example:
  lousho logout agent.yaml docs")]
    Logout(LogoutArgs),
    /// Write a commented starter spec, and print the MCP client entries that serve it.
    #[command(after_help = "\
Examples:
  lousho init                      # writes agent.yaml here
  lousho init bots/support.yaml --name support-bot

The spec uses the offline `test` model unless LOUSHO_MODEL is set, so
`lousho run agent.yaml \"hello\"` works at once. An existing file is never
overwritten (exit code 2). The entries for Claude Code (.mcp.json), Cursor
(.cursor/mcp.json) and VS Code (.vscode/mcp.json) are printed on stdout.")]
    Init(InitArgs),
    /// Pin the MCP servers' tool definitions in a lock file next to the spec (or check them).
    #[command(after_help = "\
Examples:
  lousho pin agent.yaml            # writes agent.lock.json next to agent.yaml; commit it
  lousho pin agent.yaml --check    # CI: exit 1 and one line per drifted tool

The lock file holds, per server and tool, the definition's fingerprint
(SHA-256 of its canonical JSON) with its title, description, schemas and
annotations: sorted, pretty JSON that is byte-for-byte the same when nothing
changed. With a lock file, each server's `pin:` defaults to `warn` (drift is a
warning and shows in `lousho tools`); `pin: enforce` holds new or changed
tools back (never offered to the model, calls denied) until `lousho pin`
accepts them. Writing shows what it accepts. Every server must connect.")]
    Pin(PinArgs),
    /// Check a spec (or this machine) for what commonly goes wrong, and say what to do.
    #[command(after_help = "\
Examples:
  lousho doctor                    # this machine: folders, API keys, node/npx/uvx
  lousho doctor agent.yaml         # and the spec: model key, each MCP server started
  lousho doctor agent.yaml --json  # {\"ok\": bool, \"checks\": [{\"check\", \"status\", \"detail\", \"next\"}]}

Checks: the spec loads; its model's API key variable is set (named, never
shown); each stdio server's command is on PATH and an npx/uvx package names
its version; each MCP server starts (how long it took, its tools, about how
many tokens their definitions cost); the cache, session store and token
folders are writable. Each row is ok, warn or FAIL, and the rows that need
something say what next.

Exit code 0 when no check failed (warnings allowed), 1 when one did.")]
    Doctor(DoctorArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "\
Examples:
  lousho completions bash > ~/.local/share/bash-completion/completions/lousho
  lousho completions zsh > \"${fpath[1]}/_lousho\"
  lousho completions fish > ~/.config/fish/completions/lousho.fish")]
    Completions(CompletionsArgs),
}

/// `lousho init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The spec file to write (refused when it exists).
    #[arg(default_value = "agent.yaml")]
    pub spec: PathBuf,
    /// The agent's name (its tool name when served) [default: the file's stem].
    #[arg(long)]
    pub name: Option<String>,
}

/// `lousho pin`.
#[derive(Debug, Args)]
pub struct PinArgs {
    /// The agent spec file (YAML); the lock file is `<name>.lock.json` beside it.
    pub spec: PathBuf,
    /// Write nothing; exit 1 when any tool is new, changed or removed since pinned.
    #[arg(long)]
    pub check: bool,
}

/// `lousho doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The agent spec file to check (without one: only this machine).
    pub spec: Option<PathBuf>,
    /// Check this model instead of the spec's.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// One JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `lousho completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// `lousho mcp`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct McpArgs {
    /// `lousho mcp import`.
    #[command(subcommand)]
    pub command: Option<McpCommand>,
    /// The agent spec file (YAML).
    #[arg(required = true)]
    pub spec: Option<PathBuf>,
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
    /// Also accept requests for this `Host` (a name or host:port), e.g. the
    /// server's public name; repeatable; adds to the spec's serve.allowedHosts.
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    pub allow_hosts: Vec<String>,
    /// The most HTTP connections served at once; past it, 503 with Retry-After
    /// [default: 3/4 of the file-descriptor limit, or serve.maxConnections].
    #[arg(long, value_name = "N", requires = "http")]
    pub max_connections: Option<usize>,
    /// Close a connection whose request headers (or next request) take longer
    /// [default: 10000, or serve.headerTimeoutMs].
    #[arg(long, value_name = "MS", requires = "http")]
    pub header_timeout_ms: Option<u64>,
    /// Answer 408 to a request whose body takes longer [default: 30000, or serve.bodyTimeoutMs].
    #[arg(long, value_name = "MS", requires = "http")]
    pub body_timeout_ms: Option<u64>,
    /// Answer 408 to a request body slower than this many bytes a second
    /// after its first 5 s; 0: no minimum [default: 240, or serve.minBodyRate].
    #[arg(long, value_name = "BYTES", requires = "http")]
    pub min_body_rate: Option<u64>,
    /// The most tool calls in flight; past it a call waits up to 2 s, then
    /// gets 503 with Retry-After [default: 1024, or serve.maxCalls].
    #[arg(long, value_name = "N", requires = "http")]
    pub max_calls: Option<usize>,
    /// The most agent runs in flight, shed likewise [default: 128, or serve.maxAgentRuns].
    #[arg(long, value_name = "N", requires = "http")]
    pub max_agent_runs: Option<usize>,
    /// The share of each call limit one client (IP address) may hold, in
    /// percent; 100 behind a reverse proxy [default: 50, or serve.clientSharePercent].
    #[arg(long, value_name = "PERCENT", requires = "http", value_parser = clap::value_parser!(u8).range(1..=100))]
    pub client_share_percent: Option<u8>,
    /// Use this model instead of the spec's.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
}

/// `lousho mcp …` subcommands.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Copy the MCP servers of another client's config into a spec (or print them).
    #[command(after_help = "\
Reads Claude Code's .mcp.json, Claude Desktop's claude_desktop_config.json,
Cursor's .cursor/mcp.json, VS Code's .vscode/mcp.json (servers, inputs) or
Codex's config.toml ([mcp_servers.*]). Variables stay references: ${env:X}
becomes ${X}, a VS Code ${input:api-key} becomes ${API_KEY}, ${workspaceFolder}
the folder's path.

Examples:
  lousho mcp import ~/.config/Claude/claude_desktop_config.json
  lousho mcp import .vscode/mcp.json --into agent.yaml
  lousho mcp import ~/.codex/config.toml --into agent.yaml

Without --into the entries are printed (YAML, to paste under mcpServers:).
With --into they are added to the spec's mcpServers (created when missing);
a server name the spec already has is refused, and the spec is only written
when it still loads.")]
    Import(ImportArgs),
}

/// `lousho mcp import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The other client's config file.
    pub file: PathBuf,
    /// Add the entries to this spec file instead of printing them.
    #[arg(long, value_name = "SPEC")]
    pub into: Option<PathBuf>,
}

/// `lousho run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The agent spec file (YAML).
    pub spec: PathBuf,
    /// The message; without one (and without --prompt), a multi-turn prompt opens. `@server:uri` attaches that MCP resource.
    pub message: Option<String>,
    /// Start with an MCP prompt, SERVER:NAME then its arguments KEY=VALUE: `--prompt docs:review file=a.rs`. A MESSAGE (before it) follows the prompt's messages.
    #[arg(long, num_args = 1.., value_name = "PROMPT")]
    pub prompt: Option<Vec<String>>,
    /// Use this model instead of the spec's (e.g. openai/gpt-4o-mini, test).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Continue (or start) the stored conversation NAME.
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Run the agent NAME of the spec's `agents:` instead of its top agent.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// What stdout gets: text (the answer) or json (JSON Lines events, schema in docs/cli.md; needs MESSAGE or --prompt).
    #[arg(long, value_enum, default_value_t = Output::Text, value_name = "text|json", hide_possible_values = true)]
    pub output: Output,
    /// Same as --output json.
    #[arg(long, conflicts_with = "output")]
    pub json: bool,
    /// Show the model's thinking as it streams (on stderr; with --json, as `thinking` events). Ask for thinking with the spec's modelOptions.thinkingBudget or reasoningEffort.
    #[arg(long)]
    pub thinking: bool,
    /// Record the run (the model's streamed answers, every MCP exchange) into this cassette file, secrets redacted; written (over an existing one) only when the run finishes cleanly. Needs MESSAGE or --prompt. A summary goes to stderr.
    #[arg(
        long,
        value_name = "FILE",
        group = "cassette",
        conflicts_with = "session"
    )]
    pub record: Option<PathBuf>,
    /// Replay the run recorded in this cassette file: no model request is made and no MCP server is started or dialled; a request that differs from the recorded one fails naming the difference (exit code 6). Without MESSAGE and --prompt, the recorded message is sent.
    #[arg(
        long,
        value_name = "FILE",
        group = "cassette",
        conflicts_with = "session"
    )]
    pub replay: Option<PathBuf>,
    /// With --replay, lenient matching: model requests are answered in recorded order without being compared, and an MCP request whose arguments changed takes the next recorded one of its method.
    #[arg(long, requires = "replay")]
    pub replay_order: bool,
    /// With --record or --replay: a glob of secrets to keep out of the cassette (`sk-*`), matched against each word; repeatable. Give the same patterns to --replay.
    #[arg(long, value_name = "PATTERN", requires = "cassette")]
    pub redact: Vec<String>,
}

/// `lousho run --output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// The answer as text.
    Text,
    /// JSON Lines events.
    Json,
}

/// `lousho resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run's id: a paused run's (printed when it paused) or an
    /// interrupted run's (`lousho sessions show NAME` lists them).
    #[arg(required_unless_present = "session", conflicts_with = "session")]
    pub id: Option<String>,
    /// Resume the interrupted run of this session (a run that stopped
    /// without finishing: its process was killed, or it failed).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Approve the pending calls of this tool (repeatable).
    #[arg(long, value_name = "TOOL")]
    pub approve: Vec<String>,
    /// Deny the pending calls of this tool (repeatable).
    #[arg(long, value_name = "TOOL")]
    pub deny: Vec<String>,
    /// Use this model instead of the spec's.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
}

/// `lousho sessions`.
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// The stored sessions, most recently used first.
    List {
        /// Print JSON (one array of {id, messages, created, updated}).
        #[arg(long)]
        json: bool,
    },
    /// Print a session's conversation.
    Show {
        /// The session's name.
        name: String,
        /// Print the messages as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a session (and its paused runs).
    Rm {
        /// The session's name.
        name: String,
    },
}

/// `lousho tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The agent spec file (YAML).
    pub spec: PathBuf,
    /// Print one JSON object (stable format).
    #[arg(long)]
    pub json: bool,
    /// Connect every server (also those with a fresh manifest) and record
    /// their manifests anew.
    #[arg(long)]
    pub refresh: bool,
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

/// `lousho login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The agent spec file (YAML).
    pub spec: PathBuf,
    /// The name of the MCP server (a key of the spec's `mcpServers`).
    pub server: String,
    /// Do not try to open a browser; only print the URL.
    #[arg(long)]
    pub no_browser: bool,
}

/// `lousho logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The agent spec file (YAML).
    pub spec: PathBuf,
    /// The name of the MCP server (a key of the spec's `mcpServers`).
    pub server: String,
}
