//! MCP server entries: what to launch or where to connect, and how to treat
//! the server's tools.
//!
//! An entry (de)serialises in the product's shape, which is also Claude's
//! `.mcp.json` shape, so existing configs port without translation:
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."] },
//!     "docs": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer …" } }
//!   }
//! }
//! ```
//!
//! `type` is optional (`command` means stdio, `url` means http). Unknown
//! fields are an error that names the field. Extra keys beyond Claude's shape:
//! `approval` (`annotations` | `always` | `never`), `trust` (`annotations` |
//! `none`), `pin` (`off` | `warn` | `enforce`), `tools` (`{ allow, deny }`),
//! `startupTimeoutMs`, `callTimeoutMs`, `maxServerRequests`, `stderr`
//! (`inherit` | `capture`), `oauth`, `preload`, `tasks`, `instructions`,
//! `logLevel`, `roots` and `sampling`.

use super::sampling::SamplingSettings;
use crate::policy::{PinMode, ServerPins, Trust};
use crate::tool::Approval;
use crate::tool::LogLevel;
use crate::tool::ToolAnnotations;
use crate::tool::name::compile_name_globs;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

mod entry_error;
mod oauth;
mod variables;

pub use variables::expand_variables;

use entry_error::EntryError;

pub use crate::interpolate::VariableError;
pub use oauth::{IdpSettings, OAuthGrant, OAuthSettings, SigningAlgorithm};

/// How long a server gets to start and answer the handshake (first `npx` /
/// `uvx` runs download packages).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one tool call may take; every progress notification restarts it.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How many of its own requests (pings, elicitations) a server may have open
/// with the client at once; see [`McpServer::max_server_requests`].
pub const DEFAULT_MAX_SERVER_REQUESTS: usize = 64;
/// The default size of the stderr ring buffer when capture is on.
pub const DEFAULT_STDERR_CAPTURE_BYTES: usize = 16 * 1024;

/// Server entries keyed by server name (the `mcpServers` map).
pub type McpServers = BTreeMap<String, McpServer>;

/// One MCP server: a stdio command or a Streamable HTTP URL, plus how its
/// tools are exposed.
///
/// ```
/// use lousho::McpServer;
/// use lousho::Approval;
/// let files = McpServer::stdio("npx").args(["-y", "@modelcontextprotocol/server-filesystem", "."]);
/// let docs = McpServer::http("https://example.com/mcp")
///     .header("Authorization", "Bearer <token>")
///     .approval(Approval::custom(|name, _| !name.starts_with("search")));
/// # let _ = (files, docs);
/// ```
#[derive(Clone, Deserialize, Serialize)]
#[serde(try_from = "RawEntry", into = "RawEntry")]
#[non_exhaustive]
#[must_use]
pub struct McpServer {
    /// Where the server is.
    pub transport: McpTransport,
    /// When its tools' calls need approval (default [`Approval::Annotations`]).
    pub approval: Approval,
    /// Whether its tools' annotations count for decisions (default
    /// [`Trust::Annotations`]).
    pub trust: Trust,
    /// What drift from its pins does (default: `warn` when it has pins,
    /// `off` otherwise).
    pub pin: Option<PinMode>,
    /// Its pinned tool definitions (also set for every server by
    /// [`ConnectOptions::pins`](super::ConnectOptions::pins), e.g. from a
    /// lock file).
    pub pins: Option<ServerPins>,
    /// Which of its tools to expose.
    pub tools: ToolFilter,
    /// How long connecting may take (spawn/HTTP + handshake + listing tools).
    pub startup_timeout: Duration,
    /// How long one call may take; progress notifications restart the clock.
    pub call_timeout: Duration,
    /// How many of its own requests the server may have open with the client
    /// at once (see [`McpServer::max_server_requests`]).
    pub max_server_requests: usize,
    /// OAuth sign-in settings (HTTP only; handled by the OAuth support).
    pub oauth: Option<OAuthSettings>,
    /// Connect at `ready()` even when a fresh tool manifest is recorded
    /// (with a [`ManifestStore`](super::ManifestStore); default false).
    pub preload: bool,
    /// Whether its tools are held back while tool search is active
    /// (default `None`: MCP tools are; see
    /// [`ToolSearch`](crate::tool::search::ToolSearch)).
    pub defer: Option<bool>,
    /// Whether it may run calls as tasks (declares the
    /// `io.modelcontextprotocol/tasks` extension; default true): the call
    /// then follows the task to its result.
    pub tasks: bool,
    /// Whether the server's `instructions` go into the agent's system
    /// prompt (default true; bounded, see
    /// [`MAX_INSTRUCTIONS_BYTES`](super::MAX_INSTRUCTIONS_BYTES)).
    pub instructions: bool,
    /// The level of log messages asked of the server (default `None`: none
    /// asked); see [`McpServer::log_level`].
    pub log_level: Option<LogLevel>,
    /// Folders offered to this server alone as roots (`roots/list`), after
    /// the client's (see [`McpServer::roots`]).
    pub roots: Vec<PathBuf>,
    /// Whether the server may ask the client's model, and how much
    /// (default `None`: it may not; see [`SamplingSettings`]).
    pub sampling: Option<SamplingSettings>,
}

/// Where a server is and how to reach it.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpTransport {
    /// A child process spoken to over stdin/stdout.
    Stdio(StdioTransport),
    /// A Streamable HTTP endpoint.
    Http(HttpTransport),
}

/// A stdio server: the command to spawn.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StdioTransport {
    /// The program (looked up on `PATH`).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables **added to** the inherited environment.
    pub env: BTreeMap<String, String>,
    /// The working directory (default: the current one).
    pub cwd: Option<PathBuf>,
    /// What happens to the child's stderr.
    pub stderr: StderrMode,
}

/// A Streamable HTTP server.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpTransport {
    /// The endpoint URL.
    pub url: String,
    /// Static headers sent on every request (values are never logged).
    pub headers: BTreeMap<String, String>,
}

/// What happens to a stdio server's stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StderrMode {
    /// The child writes to our stderr (default: a chatty server can never
    /// fill an unread pipe).
    #[default]
    Inherit,
    /// Kept in a ring buffer of this many bytes; its tail appears in the
    /// server's connect errors and status.
    Capture(usize),
}

/// Which tools of a server to expose, by their original (bare) names.
/// Patterns are globs in the permission rules' dialect: `*` any run of
/// characters, `?` one character, `[abc]`, `{a,b}`. `deny` wins over
/// `allow`; an empty `allow` allows everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    rename = "ToolFilterEntry",
    description = "Which tools of a server to expose, by bare name; `deny` wins over `allow`."
)]
#[non_exhaustive]
pub struct ToolFilter {
    /// Only these tools (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Never these tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// Whether the tool `name` passes the filter.
    pub fn allows(&self, name: &str) -> bool {
        self.matcher()(name)
    }

    /// The filter with its globs compiled once, for a whole listing. A
    /// pattern that is not a valid glob (a spec file's is rejected when read)
    /// fails closed: a bad `deny` hides every tool, a bad `allow` allows none.
    pub(crate) fn matcher(&self) -> impl Fn(&str) -> bool + use<> {
        let deny = compile_name_globs(self.deny.iter().map(String::as_str));
        let allow = (!self.allow.is_empty())
            .then(|| compile_name_globs(self.allow.iter().map(String::as_str)));
        move |name| {
            if deny.as_ref().map_or(true, |d| d.is_match(name)) {
                return false;
            }
            allow
                .as_ref()
                .is_none_or(|a| a.as_ref().is_ok_and(|a| a.is_match(name)))
        }
    }

    /// The first pattern that is not a valid glob, with what is wrong and
    /// where (`tools.allow[0]`).
    fn check(&self) -> Result<(), EntryError> {
        for (list, patterns) in [("allow", &self.allow), ("deny", &self.deny)] {
            for (index, p) in patterns.iter().enumerate() {
                if let Err(e) = compile_name_globs([p.as_str()]) {
                    return Err(EntryError::BadGlob {
                        list,
                        index,
                        pattern: e.pattern,
                        reason: e.message,
                    });
                }
            }
        }
        Ok(())
    }

    /// True when the filter lets everything through.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }
}

impl McpServer {
    fn with_transport(transport: McpTransport) -> Self {
        Self {
            transport,
            approval: Approval::Annotations,
            trust: Trust::Annotations,
            pin: None,
            pins: None,
            tools: ToolFilter::default(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_server_requests: DEFAULT_MAX_SERVER_REQUESTS,
            oauth: None,
            preload: false,
            defer: None,
            tasks: true,
            instructions: true,
            log_level: None,
            roots: Vec::new(),
            sampling: None,
        }
    }

    /// A stdio server started with `command`.
    pub fn stdio(command: impl Into<String>) -> Self {
        Self::with_transport(McpTransport::Stdio(StdioTransport {
            command: command.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            stderr: StderrMode::Inherit,
        }))
    }

    /// A Streamable HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        Self::with_transport(McpTransport::Http(HttpTransport {
            url: url.into(),
            headers: BTreeMap::new(),
        }))
    }

    /// Adds arguments (stdio; ignored for HTTP).
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let McpTransport::Stdio(s) = &mut self.transport {
            s.args.extend(args.into_iter().map(Into::into));
        }
        self
    }

    /// Adds one argument (stdio; ignored for HTTP).
    pub fn arg(self, arg: impl Into<String>) -> Self {
        self.args([arg.into()])
    }

    /// Adds an environment variable on top of the inherited environment (stdio).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransport::Stdio(s) = &mut self.transport {
            s.env.insert(key.into(), value.into());
        }
        self
    }

    /// Sets the working directory (stdio).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        if let McpTransport::Stdio(s) = &mut self.transport {
            s.cwd = Some(dir.into());
        }
        self
    }

    /// Captures the child's stderr in a ring buffer of `bytes` bytes instead of
    /// inheriting it; its tail shows in connect errors and status (stdio).
    pub fn capture_stderr(mut self, bytes: usize) -> Self {
        if let McpTransport::Stdio(s) = &mut self.transport {
            s.stderr = StderrMode::Capture(bytes.max(1));
        }
        self
    }

    /// Adds a static header sent on every request (HTTP; ignored for stdio).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransport::Http(h) = &mut self.transport {
            h.headers.insert(name.into(), value.into());
        }
        self
    }

    /// Sets the approval policy for this server's tools. A
    /// [`Approval::Custom`] function gets the **bare** tool name (as the
    /// server calls it) and its annotations.
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approval = approval;
        self
    }

    /// Sets whether this server's tool annotations count for decisions:
    /// with [`Trust::None`] a tool claiming `readOnlyHint: true` still asks
    /// under the `annotations` policy (the hints are still shown).
    pub fn trust(mut self, trust: Trust) -> Self {
        self.trust = trust;
        self
    }

    /// Sets what drift from the pins does: `Off`, `Warn` (a warning, the
    /// state in `lousho tools`) or `Enforce` (new or changed tools are held
    /// back: not offered to the model, their calls denied).
    pub fn pin(mut self, mode: PinMode) -> Self {
        self.pin = Some(mode);
        self
    }

    /// Pins this server's tools to `pins` (the mode defaults to `warn`).
    pub fn pins(mut self, pins: ServerPins) -> Self {
        self.pins = Some(pins);
        self
    }

    /// Exposes only these tools (bare names or globs: `*`, `?`, `[..]`, `{a,b}`).
    pub fn allow_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.allow.extend(names.into_iter().map(Into::into));
        self
    }

    /// Hides these tools (bare names or globs: `*`, `?`, `[..]`, `{a,b}`).
    pub fn deny_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.deny.extend(names.into_iter().map(Into::into));
        self
    }

    /// How long connecting may take (default 30 s).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// How long one call may take (default 60 s; progress restarts it).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How many of its own requests (pings, elicitations) the server may have
    /// open with the client at once (default 64; at least 1): from the moment
    /// one is read until its answer is written. At the limit a stdio client
    /// reads nothing more until an answer is out (a flooding server is slowed
    /// down); an HTTP client leaves the excess unanswered.
    pub fn max_server_requests(mut self, limit: usize) -> Self {
        self.max_server_requests = limit.max(1);
        self
    }

    /// Connects at `ready()` even when the catalog has a fresh manifest of
    /// this server (see [`ManifestStore`](super::ManifestStore)).
    pub fn preload(mut self, preload: bool) -> Self {
        self.preload = preload;
        self
    }

    /// Whether its tools are held back from the model's requests while tool
    /// search is active (found with `tool_search` instead). Default: yes
    /// for MCP tools; `false` keeps this server's tools always loaded.
    pub fn defer(mut self, defer: bool) -> Self {
        self.defer = Some(defer);
        self
    }

    /// Whether the server may run calls as tasks (default true): the client
    /// declares the tasks extension (SEP-2663) and follows a task the server
    /// answers with — polling it, showing its status messages as progress,
    /// answering its questions, cancelling it with the run — to its result.
    /// Which calls become tasks is the server's choice; `false` makes every
    /// call wait for its result (a server that requires tasks then refuses
    /// them).
    pub fn tasks(mut self, tasks: bool) -> Self {
        self.tasks = tasks;
        self
    }

    /// Whether the server's `instructions` go into the agent's system prompt
    /// (default true; `false` for a server whose instructions mislead or
    /// cost too much).
    pub fn instructions(mut self, on: bool) -> Self {
        self.instructions = on;
        self
    }

    /// Asks the server for its log messages of `level` and above: a
    /// 2025-11-25 server that declares `logging` gets `logging/setLevel`
    /// once connected, a 2026-07-28 server the level in each call's `_meta`.
    /// They are logged through `tracing` with the target
    /// [`SERVER_LOG_TARGET`](super::SERVER_LOG_TARGET) and the server's name
    /// in the field `server` (the `lousho` command shows them on stderr).
    /// Without it, a 2025-11-25 server sends what it likes and a 2026-07-28
    /// server sends none.
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Offers these folders to the server as roots (`file://` URIs in
    /// `roots/list`), after the client's own
    /// ([`ConnectOptions::roots`](super::ConnectOptions::roots), an agent
    /// spec's `workspace`). In a spec, relative paths resolve from the
    /// spec's folder.
    pub fn roots<I, P>(mut self, folders: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.roots = folders.into_iter().map(Into::into).collect();
        self
    }

    /// Lets the server ask the client's model (`sampling/createMessage`),
    /// within `settings`' limits, when
    /// [`ConnectOptions::sampling`](super::ConnectOptions::sampling) answers
    /// (an agent answers with its own model, each request approved like a
    /// tool call named `sampling:<server>`).
    pub fn sampling(mut self, settings: SamplingSettings) -> Self {
        self.sampling = Some(settings);
        self
    }

    /// Signs in with OAuth (HTTP).
    pub fn oauth(mut self, oauth: OAuthSettings) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Whether a call of the tool `bare_name` needs approval under this
    /// entry's policy.
    pub fn needs_approval(&self, bare_name: &str, annotations: &ToolAnnotations) -> bool {
        self.approval.needs_approval(bare_name, annotations)
    }

    /// `"stdio"` or `"http"`.
    pub fn kind(&self) -> &'static str {
        match self.transport {
            McpTransport::Stdio(_) => "stdio",
            McpTransport::Http(_) => "http",
        }
    }

    /// Parses one entry from JSON; errors name the field. `${VAR}` and
    /// `${VAR:-default}` in its string values are expanded from the
    /// environment, as in [`parse_mcp_servers`].
    pub fn from_json_str(json: &str) -> Result<Self, ConfigError> {
        let value = expand_variables(parse_json(json)?, &env_var)?;
        serde_path_to_error::deserialize(value).map_err(ConfigError::from_path_error)
    }
}

/// Parses an `mcpServers` map from JSON: either Claude's `.mcp.json` shape
/// (`{"mcpServers": {...}}`) or the bare map (`{"files": {...}}`). Errors
/// name the server and the field.
///
/// `${VAR}` and `${VAR:-default}` in string values are expanded from the
/// process environment, with the rules of spec files (`$${` is a literal
/// `${`; an unset variable without a default is a
/// [`ConfigError::Variable`] naming it and the value's path), so
/// `"Authorization": "Bearer ${MCP_TOKEN}"` sends the token, not the text.
///
/// To take the variables from elsewhere, compose the two steps:
/// `servers_from_value(expand_variables(value, &|name| vars.get(name).cloned())?)`.
pub fn parse_mcp_servers(json: &str) -> Result<McpServers, ConfigError> {
    servers_from_value(expand_variables(parse_json(json)?, &env_var)?)
}

fn parse_json(json: &str) -> Result<serde_json::Value, ConfigError> {
    serde_json::from_str(json).map_err(|e| ConfigError::Invalid {
        path: String::new(),
        message: e.to_string(),
    })
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Reads an `mcpServers` map from an already parsed value (any serde format
/// can produce one), accepting both the `.mcp.json` shape and the bare map.
/// The values are taken as they are (no `${VAR}` expansion: the caller's
/// format has its own, as spec files do).
pub fn servers_from_value(value: serde_json::Value) -> Result<McpServers, ConfigError> {
    let is_wrapped = value
        .as_object()
        .is_some_and(|o| o.contains_key("mcpServers"));
    if is_wrapped {
        let file: McpConfigFile =
            serde_path_to_error::deserialize(value).map_err(ConfigError::from_path_error)?;
        Ok(file.mcp_servers)
    } else {
        serde_path_to_error::deserialize(value).map_err(ConfigError::from_path_error)
    }
}

/// Claude's `.mcp.json` shape: `{"mcpServers": {...}}`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct McpConfigFile {
    /// The servers.
    #[serde(rename = "mcpServers", default)]
    pub mcp_servers: McpServers,
}

/// A server entry that could not be read.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The entry is malformed (an unknown field, a wrong type, stdio and HTTP
    /// fields mixed, …).
    #[error("invalid MCP server config{}: {message}", if path.is_empty() || path == "." { String::new() } else { format!(" at `{path}`") })]
    Invalid {
        /// Where (e.g. `mcpServers.files`); empty at the top level.
        path: String,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A `${VAR}` reference in a string value could not be expanded (an unset
    /// variable without a default, or a malformed reference).
    #[error("MCP server config{}: {reason}", if path.is_empty() { String::new() } else { format!(" at `{path}`") })]
    Variable {
        /// The value's path (e.g. `mcpServers.docs.headers.Authorization`).
        path: String,
        /// What is wrong with the reference (shown in the message).
        reason: VariableError,
    },
}

impl ConfigError {
    fn from_path_error<E: fmt::Display>(e: serde_path_to_error::Error<E>) -> Self {
        ConfigError::Invalid {
            path: e.path().to_string(),
            message: e.inner().to_string(),
        }
    }
}

/// The wire shape of an entry, the one definition of the format: serde reads
/// it (unknown keys rejected, wrong types named by path) and the spec
/// file's JSON Schema is derived from it. The rules that span fields
/// (stdio vs http, `stderrCaptureBytes` needs `capture`, …) are in
/// `TryFrom<RawEntry> for McpServer`.
#[derive(Deserialize, Serialize, Default, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(
    rename = "McpServer",
    description = "One MCP server: `command` (stdio) or `url` (Streamable HTTP), and how its tools are exposed."
)]
pub(crate) struct RawEntry {
    /// `stdio` or `http` (optional: `command` means stdio, `url` means http).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<EntryKind>,
    /// stdio: the program (looked up on PATH; a relative path is relative to this file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    /// stdio: its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    /// stdio: variables added to the inherited environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    /// stdio: the working directory (default: this file's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<PathBuf>,
    /// stdio: `inherit` (default) or `capture` (kept for error messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stderr: Option<StderrKind>,
    /// stdio: the size of the captured stderr tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stderr_capture_bytes: Option<usize>,
    /// http: the Streamable HTTP endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    /// http: static headers sent on every request.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    headers: BTreeMap<String, String>,
    /// When its tools need approval (default `annotations`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    approval: Option<ApprovalKind>,
    /// Whether its tools' annotations count for decisions: `annotations`
    /// (default) or `none` (hints are shown but ignored: every tool asks
    /// unless a rule or the approval policy allows it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trust: Option<Trust>,
    /// What drift from the lock file's pins does: `off`, `warn` (default
    /// when a lock file exists) or `enforce` (new or changed tools are held
    /// back until `lousho pin` accepts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pin: Option<PinMode>,
    /// Which of its tools to expose, by bare name (globs: `*`, `?`, `[..]`, `{a,b}`).
    #[serde(default, skip_serializing_if = "ToolFilter::is_empty")]
    tools: ToolFilter,
    /// How long connecting may take (default 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    startup_timeout_ms: Option<u64>,
    /// How long one call may take (default 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    call_timeout_ms: Option<u64>,
    /// How many of its own requests (pings, elicitations) the server may have
    /// open with the client at once (default 64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    max_server_requests: Option<usize>,
    /// http: OAuth sign-in settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oauth: Option<OAuthSettings>,
    /// Connect when the agent gets ready even when a fresh tool manifest is
    /// cached (default false: such a server connects when one of its tools
    /// is first called).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    preload: bool,
    /// Whether its tools are held back while tool search is active and
    /// found with `tool_search` (default true; false: always sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    defer: Option<bool>,
    /// Whether the server may run calls as tasks, followed to their result
    /// (default true; false: every call waits for its result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tasks: Option<bool>,
    /// Whether the server's `instructions` go into the agent's system
    /// prompt (default true; at most 4 KiB of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instructions: Option<bool>,
    /// The level of log messages asked of the server (`debug` … `emergency`;
    /// default: none asked). They show on stderr (`-v` for `info`, `notice`
    /// and `debug`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log_level: Option<LogLevel>,
    /// Folders offered to this server alone as roots, after the agent's
    /// workspace (relative to this file's folder).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    roots: Vec<PathBuf>,
    /// Whether the server may ask the agent's model (`allow: true`; each
    /// request approved like a call of the tool `sampling:<name>`), with
    /// `maxTokens` per answer (default 1024) and `maxRequests` per
    /// connection (default 20). Default: it may not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sampling: Option<SamplingSettings>,
}

// `type:` of an entry. Read by hand so the old `sse` transport gets its own
// message and Claude's spellings of `http` are accepted (the schema lists
// the two names).
#[derive(Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum EntryKind {
    Stdio,
    Http,
}

impl<'de> Deserialize<'de> for EntryKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match String::deserialize(deserializer)?.as_str() {
            "stdio" => Ok(Self::Stdio),
            "http" | "streamable-http" | "streamableHttp" => Ok(Self::Http),
            "sse" => Err(D::Error::custom(
                "`type: sse` (the old HTTP+SSE transport) is not supported; use a Streamable HTTP endpoint with `type: http`",
            )),
            other => Err(D::Error::unknown_variant(other, &["stdio", "http"])),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum StderrKind {
    Inherit,
    Capture,
}

/// `annotations` (ask unless read-only or not destructive), `always` or `never`.
#[derive(Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ApprovalKind {
    Annotations,
    Always,
    Never,
}

impl TryFrom<RawEntry> for McpServer {
    type Error = EntryError;

    fn try_from(raw: RawEntry) -> Result<Self, EntryError> {
        let kind = match (raw.kind, &raw.command, &raw.url) {
            (Some(kind), _, _) => kind,
            (None, Some(_), None) => EntryKind::Stdio,
            (None, None, Some(_)) => EntryKind::Http,
            (None, Some(_), Some(_)) => {
                return Err(EntryError::CommandAndUrl);
            }
            (None, None, None) => {
                return Err(EntryError::NoCommandOrUrl);
            }
        };
        let mut server = match kind {
            EntryKind::Stdio => {
                let command = raw.command.ok_or(EntryError::Missing {
                    field: "command",
                    transport: "stdio",
                })?;
                for (field, set) in [
                    ("url", raw.url.is_some()),
                    ("headers", !raw.headers.is_empty()),
                    ("oauth", raw.oauth.is_some()),
                ] {
                    if set {
                        return Err(EntryError::OtherTransport {
                            field,
                            belongs_to: "http",
                            transport: "stdio",
                        });
                    }
                }
                let stderr = match (raw.stderr, raw.stderr_capture_bytes) {
                    (None | Some(StderrKind::Inherit), None) => StderrMode::Inherit,
                    (Some(StderrKind::Capture), n) | (None, n @ Some(_)) => {
                        StderrMode::Capture(n.unwrap_or(DEFAULT_STDERR_CAPTURE_BYTES).max(1))
                    }
                    (Some(StderrKind::Inherit), Some(_)) => {
                        return Err(EntryError::CaptureBytesWithoutCapture);
                    }
                };
                McpServer::with_transport(McpTransport::Stdio(StdioTransport {
                    command,
                    args: raw.args,
                    env: raw.env,
                    cwd: raw.cwd,
                    stderr,
                }))
            }
            EntryKind::Http => {
                let url = raw.url.ok_or(EntryError::Missing {
                    field: "url",
                    transport: "http",
                })?;
                for (field, set) in [
                    ("command", raw.command.is_some()),
                    ("args", !raw.args.is_empty()),
                    ("env", !raw.env.is_empty()),
                    ("cwd", raw.cwd.is_some()),
                    (
                        "stderr",
                        raw.stderr.is_some() || raw.stderr_capture_bytes.is_some(),
                    ),
                ] {
                    if set {
                        return Err(EntryError::OtherTransport {
                            field,
                            belongs_to: "stdio",
                            transport: "http",
                        });
                    }
                }
                if let Some(oauth) = &raw.oauth {
                    oauth.check()?;
                }
                let mut s = McpServer::with_transport(McpTransport::Http(HttpTransport {
                    url,
                    headers: raw.headers,
                }));
                s.oauth = raw.oauth;
                s
            }
        };
        server.approval = match raw.approval {
            None | Some(ApprovalKind::Annotations) => Approval::Annotations,
            Some(ApprovalKind::Always) => Approval::Always,
            Some(ApprovalKind::Never) => Approval::Never,
        };
        server.trust = raw.trust.unwrap_or_default();
        server.pin = raw.pin;
        raw.tools.check()?;
        server.tools = raw.tools;
        if let Some(ms) = raw.startup_timeout_ms {
            server.startup_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = raw.call_timeout_ms {
            server.call_timeout = Duration::from_millis(ms);
        }
        match raw.max_server_requests {
            Some(0) => return Err(EntryError::NoServerRequests),
            Some(n) => server.max_server_requests = n,
            None => {}
        }
        server.preload = raw.preload;
        server.defer = raw.defer;
        server.tasks = raw.tasks.unwrap_or(true);
        server.instructions = raw.instructions.unwrap_or(true);
        server.log_level = raw.log_level;
        server.roots = raw.roots;
        server.sampling = raw.sampling;
        Ok(server)
    }
}

impl From<McpServer> for RawEntry {
    fn from(s: McpServer) -> Self {
        let mut raw = RawEntry {
            approval: match s.approval {
                Approval::Annotations => None,
                Approval::Always => Some(ApprovalKind::Always),
                Approval::Never => Some(ApprovalKind::Never),
                // A function cannot be written to a file; files take the three strings.
                _ => None,
            },
            trust: (s.trust != Trust::Annotations).then_some(s.trust),
            pin: s.pin,
            tools: s.tools,
            startup_timeout_ms: (s.startup_timeout != DEFAULT_STARTUP_TIMEOUT)
                .then(|| duration_ms(s.startup_timeout)),
            call_timeout_ms: (s.call_timeout != DEFAULT_CALL_TIMEOUT)
                .then(|| duration_ms(s.call_timeout)),
            max_server_requests: (s.max_server_requests != DEFAULT_MAX_SERVER_REQUESTS)
                .then_some(s.max_server_requests),
            oauth: s.oauth,
            preload: s.preload,
            defer: s.defer,
            tasks: (!s.tasks).then_some(false),
            instructions: (!s.instructions).then_some(false),
            log_level: s.log_level,
            roots: s.roots,
            sampling: s.sampling,
            ..RawEntry::default()
        };
        match s.transport {
            McpTransport::Stdio(t) => {
                raw.command = Some(t.command);
                raw.args = t.args;
                raw.env = t.env;
                raw.cwd = t.cwd;
                if let StderrMode::Capture(n) = t.stderr {
                    raw.stderr = Some(StderrKind::Capture);
                    raw.stderr_capture_bytes = Some(n);
                }
            }
            McpTransport::Http(t) => {
                raw.kind = Some(EntryKind::Http);
                raw.url = Some(t.url);
                raw.headers = t.headers;
            }
        }
        raw
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

// Debug never shows env values or header values: they often hold secrets.
impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("transport", &self.transport)
            .field("approval", &self.approval)
            .field("trust", &self.trust)
            .field("pin", &self.pin)
            .field("pins", &self.pins.as_ref().map(|p| p.tools.len()))
            .field("tools", &self.tools)
            .field("startup_timeout", &self.startup_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("max_server_requests", &self.max_server_requests)
            .field("oauth", &self.oauth.is_some())
            .field("preload", &self.preload)
            .field("defer", &self.defer)
            .field("tasks", &self.tasks)
            .field("instructions", &self.instructions)
            .field("log_level", &self.log_level)
            .field("roots", &self.roots)
            .field("sampling", &self.sampling)
            .finish()
    }
}

impl fmt::Debug for McpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpTransport::Stdio(s) => s.fmt(f),
            McpTransport::Http(h) => h.fmt(f),
        }
    }
}

impl fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stdio")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .field("stderr", &self.stderr)
            .finish()
    }
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Http")
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_filters_use_the_permission_rules_globs() {
        let f = |allow: &[&str], deny: &[&str]| ToolFilter {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        };
        let allows = |filter: &ToolFilter, name| filter.allows(name);
        let search = f(&["search*", "*_docs", "{get,put}_?"], &["search_secret"]);
        assert!(allows(&search, "search_docs"));
        assert!(allows(&search, "read_docs"));
        assert!(allows(&search, "get_x"));
        assert!(!allows(&search, "get_xy"));
        assert!(!allows(&search, "search_secret"), "deny wins");
        assert!(!allows(&search, "other"));
        assert!(allows(&f(&[], &[]), "anything"));
        assert!(allows(&f(&["exact"], &[]), "exact"));
        assert!(!allows(&f(&["exact"], &[]), "exactly"));
        assert!(!allows(&f(&["a*a"], &[]), "a"));
        // A bad pattern fails closed and is named when checked.
        assert!(!allows(&f(&[], &["x["]), "anything"));
        assert!(!allows(&f(&["x["], &[]), "x"));
        let err = f(&["ok", "x["], &[]).check().unwrap_err();
        assert!(
            matches!(&err, EntryError::BadGlob { list: "allow", index: 1, pattern, .. } if pattern == "x["),
            "{err}"
        );
        assert!(err.to_string().contains("`tools.allow[1]` `x[`"), "{err}");
    }
}
