//! What `serve_mcp` serves, and how: [`ServeOptions`], [`ServeTransport`],
//! [`HttpOptions`] and [`Auth`].

use super::prompts::DefinedPrompt;
use super::resource_server::OAuthResource;
use super::resources::{DefinedResource, DefinedResourceTemplate};
use crate::Agent;
use crate::session::{LeaseSettings, SessionStore};
use crate::tool::{IntoTools, Tool, ToolSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The default HTTP port (`lousho mcp --http` uses it too).
pub const DEFAULT_HTTP_PORT: u16 = 3920;
/// The default HTTP endpoint path.
pub const DEFAULT_HTTP_PATH: &str = "/mcp";
/// The default cap on an HTTP request body (4 MiB); larger bodies get `413`.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The default cap on one stdio message line (16 MiB); a longer line gets a
/// JSON-RPC error.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// The default deadline for a request's headers, which also closes a
/// kept-alive connection left idle this long (10 s).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default deadline for a request's body once its headers are in (30 s);
/// a slower body gets `408`.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a served run waits for the client's user to answer an approval
/// form ([`ServeApprovals::Elicit`]) before the call counts as denied (5 min).
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);
/// The default minimum rate of an HTTP request body after its first 5 s
/// (240 bytes a second, as ASP.NET Core's Kestrel); a slower one gets `408`.
pub const DEFAULT_MIN_BODY_RATE: u64 = 240;
/// How many items one `resources/list`, `resources/templates/list` or
/// `prompts/list` answer carries by default.
pub const DEFAULT_PAGE_SIZE: usize = 100;
/// The default cap on `tools/call` requests in flight over HTTP (1024).
pub const DEFAULT_MAX_CALLS: usize = 1024;
/// The default cap on agent runs in flight over HTTP (128).
pub const DEFAULT_MAX_AGENT_RUNS: usize = 128;
/// The default share of each HTTP limit one client (IP address) may hold
/// (50 %).
pub const DEFAULT_CLIENT_SHARE_PERCENT: u8 = 50;
/// The default cap on HTTP connections served at once: three quarters of
/// the process's file-descriptor limit (`RLIMIT_NOFILE`, read when called),
/// 16 to 100,000 — 768 under the common limit of 1024, 192 under 256. The
/// last quarter stays for the rest of the process and for the connections
/// answered `503` past the cap. 768 where the limit cannot be read.
pub fn default_max_connections() -> usize {
    const FALLBACK: usize = 768;
    fd_limit().map_or(FALLBACK, |n| (n / 4 * 3).clamp(16, 100_000))
}

/// The soft limit on open file descriptors (`usize::MAX`: unlimited).
#[cfg(unix)]
pub(crate) fn fd_limit() -> Option<usize> {
    match rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
        None => Some(usize::MAX),
        Some(n) => usize::try_from(n).ok(),
    }
}

#[cfg(not(unix))]
pub(crate) fn fd_limit() -> Option<usize> {
    None
}

/// What to serve over MCP and how. Pass it to [`serve_mcp`](super::serve_mcp).
///
/// ```
/// use lousho::mcp::{HttpOptions, ServeTransport};
/// use lousho::{Agent, ServeOptions};
/// # fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::builder().model("test").build()?;
/// let options = ServeOptions::new(agent)
///     .name("support-bot")
///     .description("Ask the support agent a question")
///     .transport(ServeTransport::Http(HttpOptions::new().port(0)));
/// # let _ = options; Ok(()) }
/// ```
#[derive(Clone)]
#[must_use]
pub struct ServeOptions {
    pub(crate) agent: Agent,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) tool_name: Option<String>,
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    /// More agents, each served as one more tool: (tool name, agent).
    pub(crate) agents: Vec<(String, Agent)>,
    pub(crate) transport: ServeTransport,
    pub(crate) auth: Option<Auth>,
    pub(crate) approvals: ServeApprovals,
    pub(crate) approval_timeout: Duration,
    pub(crate) max_line_bytes: usize,
    pub(crate) sessions: Option<Arc<dyn SessionStore>>,
    pub(crate) session_lease: LeaseSettings,
    pub(crate) resources: Vec<DefinedResource>,
    pub(crate) resource_templates: Vec<DefinedResourceTemplate>,
    pub(crate) prompts: Vec<DefinedPrompt>,
    pub(crate) page_size: usize,
    /// A skills folder served through the Skills extension.
    #[cfg(feature = "builtin")]
    pub(crate) skills: Option<std::path::PathBuf>,
    pub(crate) title: Option<String>,
    pub(crate) icons: Vec<crate::tool::Icon>,
    pub(crate) transcripts: Option<Arc<dyn SessionStore>>,
    #[cfg(feature = "builtin")]
    pub(crate) files: Vec<super::WorkspaceFiles>,
    pub(crate) caller_limits: Option<super::CallerLimits>,
}

impl fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeOptions")
            .field("agent", &self.agent)
            .field("name", &self.name)
            .field("description", &self.description)
            .field("tool_name", &self.tool_name)
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| t.spec().name.clone())
                    .collect::<Vec<_>>(),
            )
            .field(
                "agents",
                &self
                    .agents
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("transport", &self.transport)
            .field("auth", &self.auth)
            .field("approvals", &self.approvals)
            .field("approval_timeout", &self.approval_timeout)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("sessions", &self.sessions)
            .field("session_lease", &self.session_lease)
            .field("resources", &self.resources)
            .field("resource_templates", &self.resource_templates)
            .field("prompts", &self.prompts)
            .field("page_size", &self.page_size)
            .field("title", &self.title)
            .field("icons", &self.icons)
            .field("transcripts", &self.transcripts.is_some())
            .field("caller_limits", &self.caller_limits)
            .finish_non_exhaustive()
    }
}

impl ServeOptions {
    /// Serves `agent` as one tool taking `{ "message": string }`, over stdio.
    pub fn new(agent: Agent) -> Self {
        Self {
            agent,
            name: None,
            description: None,
            tool_name: None,
            tools: Vec::new(),
            agents: Vec::new(),
            transport: ServeTransport::Stdio,
            auth: None,
            approvals: ServeApprovals::Deny,
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            sessions: None,
            session_lease: LeaseSettings::default(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
            prompts: Vec::new(),
            page_size: DEFAULT_PAGE_SIZE,
            #[cfg(feature = "builtin")]
            skills: None,
            title: None,
            icons: Vec::new(),
            transcripts: None,
            #[cfg(feature = "builtin")]
            files: Vec::new(),
            caller_limits: None,
        }
    }

    /// Also serves the skills of `folder` through the Skills extension
    /// (SEP-2640, `io.modelcontextprotocol/skills`): `skills/list`,
    /// `skills/get`, each skill's `SKILL.md` in `resources/list` and every
    /// file of a skill through `resources/read` (`skill://<name>/<path>`).
    /// The folder is what `AgentBuilder::skills` takes (one skill, or
    /// sub-folders holding a `SKILL.md`), read once when serving starts;
    /// one folder serves MCP hosts and lousho agents alike.
    #[cfg(feature = "builtin")]
    pub fn skills(mut self, folder: impl Into<std::path::PathBuf>) -> Self {
        self.skills = Some(folder.into());
        self
    }

    /// Also serves these files of a workspace as `file://` resources (spec:
    /// `serve.resources`), read through the file tools' sandbox; see
    /// [`WorkspaceFiles`](super::WorkspaceFiles).
    #[cfg(feature = "builtin")]
    pub fn files(mut self, files: super::WorkspaceFiles) -> Self {
        self.files.push(files);
        self
    }

    /// Also serves this resource (`resources/list`, `resources/read`). With
    /// any resource or template served, the server declares the
    /// `resources` capability (with subscriptions) and completions.
    pub fn resource(mut self, resource: DefinedResource) -> Self {
        self.resources.push(resource);
        self
    }

    /// Also serves the resources under this URI template
    /// (`resources/templates/list`; reads of fitting URIs).
    pub fn resource_template(mut self, template: DefinedResourceTemplate) -> Self {
        self.resource_templates.push(template);
        self
    }

    /// Also serves this prompt (`prompts/list`, `prompts/get`); the server
    /// then declares the `prompts` capability and completions.
    pub fn prompt(mut self, prompt: DefinedPrompt) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// How many items a `resources/list`, `resources/templates/list` or
    /// `prompts/list` answer carries before its `nextCursor` (default
    /// [`DEFAULT_PAGE_SIZE`]).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size;
        self
    }

    /// Lets MCP clients hold a conversation across calls, kept in `store`
    /// (spec: `serve.sessions: true`; `lousho mcp` uses its `--store`).
    ///
    /// The agent tool then takes an optional `session` argument: without it
    /// a call starts a new conversation under a new random id; with it the
    /// call continues that conversation (one the store does not have is
    /// created, so a client may pick its own ids). Every result names the
    /// session: in `structuredContent` as `{"reply": …, "session": …}` (the
    /// tool declares this `outputSchema`) and as a last text block
    /// `session: <id>`, for clients that show their model only text.
    ///
    /// Each call loads the history from the store and appends its turn when
    /// it completes, so replicas behind a load balancer sharing one store
    /// (`PostgresStore`) serve one conversation in turns, also over
    /// stateless HTTP. Two calls of one session at the same time take
    /// turns through the session's lease ([`session_lease`](Self::session_lease)).
    /// A call that repeats the message of a run of its session that stopped
    /// without finishing (its replica died mid-run, and the client retried)
    /// goes on with that run from its step journal instead of starting over.
    /// Without OAuth, anyone who can call the server and knows a session's id
    /// can continue it.
    pub fn sessions(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions = Some(store);
        self
    }

    /// Limits each caller's agent runs: runs at once, runs a minute, tokens
    /// a day (spec: `serve.limits.perCaller`); see [`CallerLimits`](super::CallerLimits).
    /// The counts live in the session store given to
    /// [`sessions`](Self::sessions) (or [`CallerLimits::store`](super::CallerLimits::store)),
    /// so replicas sharing it count together; else in memory.
    pub fn caller_limits(mut self, limits: super::CallerLimits) -> Self {
        self.caller_limits = Some(limits);
        self
    }

    /// How the served agent's runs take their session's lease (default
    /// [`LeaseSettings::default`]: a replica that died frees its sessions
    /// 30 s after its last heartbeat); `lousho mcp` reads the lease time
    /// from `LOUSHO_SESSION_LEASE` (seconds).
    pub fn session_lease(mut self, settings: LeaseSettings) -> Self {
        self.session_lease = settings;
        self
    }

    /// Also serves the conversations in `store` as resources (spec:
    /// `serve.resources: [sessions]`): `lousho://sessions` lists them (JSON:
    /// id, URI, message count, last update) and `lousho://sessions/{id}` is
    /// one transcript (JSON: its messages, oldest first), the `id`
    /// completed from the store. Every client that can call the server can
    /// read every conversation: serve them only to those who may.
    pub fn session_transcripts(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.transcripts = Some(store);
        self
    }

    /// The server name (default: the agent's name, else `lousho-agent`). The
    /// agent tool is named after it, sanitised to `[a-zA-Z0-9_-]`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// A display title for the server and its agent tool (the server
    /// info's and the tool's `title`; spec: `serve.title`).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds an icon for the server and its agent tool (their `icons`; spec:
    /// `serve.icons`).
    pub fn icon(mut self, icon: crate::tool::Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// The agent tool's description (default: the agent's description).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Names the agent tool explicitly instead of after the server name.
    pub fn tool_name(mut self, tool_name: impl Into<String>) -> Self {
        self.tool_name = Some(tool_name.into());
        self
    }

    /// Also exposes these tools directly, each callable as itself. The agent's
    /// permission rules, then each tool's approval policy, decide: tools they
    /// deny are left out; tools that would ask are left out unless
    /// [`approvals`](Self::approvals) is `Elicit` or `Allow`.
    pub fn tools(mut self, tools: impl IntoTools) -> Self {
        self.tools.extend(tools.into_tools());
        self
    }

    /// Also serves `agent` as one more tool named `tool_name`, taking
    /// `{ "message": string }` like the first (its description is the
    /// agent's, else one naming it). Approvals, auth and the transport are
    /// the server's; each agent's own permission rules decide its calls.
    pub fn agent(mut self, tool_name: impl Into<String>, agent: Agent) -> Self {
        self.agents.push((tool_name.into(), agent));
        self
    }

    /// Also exposes one tool directly.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Where to serve (default: [`ServeTransport::Stdio`]).
    pub fn transport(mut self, transport: ServeTransport) -> Self {
        self.transport = transport;
        self
    }

    /// Serves Streamable HTTP with these options (shorthand for
    /// `transport(ServeTransport::Http(http))`).
    pub fn http(self, http: HttpOptions) -> Self {
        self.transport(ServeTransport::Http(http))
    }

    /// Requires this authentication (HTTP only).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// stdio: the longest message line accepted (default 16 MiB); a longer
    /// one is answered with a JSON-RPC error (its id when readable) and
    /// skipped.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// What happens when a call needs approval (default
    /// [`ServeApprovals::Deny`]); see [`ServeApprovals`].
    pub fn approvals(mut self, approvals: ServeApprovals) -> Self {
        self.approvals = approvals;
        self
    }

    /// With [`ServeApprovals::Elicit`]: how long to wait for the user's
    /// answer before the call counts as denied (default
    /// [`DEFAULT_APPROVAL_TIMEOUT`], 5 minutes).
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = timeout;
        self
    }

    /// `true` is [`approvals(ServeApprovals::Allow)`](Self::approvals),
    /// `false` [`ServeApprovals::Deny`].
    #[deprecated(note = "use `approvals(ServeApprovals::Allow)` (spec: `serve.approvals: allow`)")]
    pub fn allow_approval_tools(self, allow: bool) -> Self {
        self.approvals(if allow {
            ServeApprovals::Allow
        } else {
            ServeApprovals::Deny
        })
    }
}

/// What a served agent does when a call needs approval (the agent's
/// permission rules, then the tool's approval policy, say "ask").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServeApprovals {
    /// Nobody can approve over MCP (the default): tools that need approval
    /// are not exposed directly, and an agent run that needs approval ends
    /// with an `isError` result naming the tool.
    #[default]
    Deny,
    /// Ask the calling client's user through elicitation: a form saying what
    /// the agent wants to run, with a summary of its input, to allow or deny
    /// (with an optional reason the agent sees). Allowed → the tool runs;
    /// denied, dismissed or unanswered within the
    /// [`approval_timeout`](ServeOptions::approval_timeout) → the tool gets a
    /// "denied by the user" result and the agent goes on. Tools that need
    /// approval are exposed directly and asked about the same way. A client
    /// without the elicitation capability, or one that cannot answer
    /// (stateless HTTP), gets the `Deny` behaviour's `isError` result.
    Elicit,
    /// Tools that need approval are exposed directly and **run with no human
    /// gate**: any MCP client that can reach the server can call them (a
    /// warning is logged). Agent runs still cannot be approved (`isError`).
    Allow,
}

impl ServeApprovals {
    /// `deny`, `elicit` or `allow`.
    pub fn as_str(self) -> &'static str {
        match self {
            ServeApprovals::Deny => "deny",
            ServeApprovals::Elicit => "elicit",
            ServeApprovals::Allow => "allow",
        }
    }
}

impl fmt::Display for ServeApprovals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not a [`ServeApprovals`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("`{0}` is not an approvals mode; use \"deny\", \"elicit\" or \"allow\"")]
pub struct ParseServeApprovalsError(String);

impl std::str::FromStr for ServeApprovals {
    type Err = ParseServeApprovalsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "deny" => Ok(ServeApprovals::Deny),
            "elicit" => Ok(ServeApprovals::Elicit),
            "allow" => Ok(ServeApprovals::Allow),
            other => Err(ParseServeApprovalsError(other.to_owned())),
        }
    }
}

/// How the server is reached.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum ServeTransport {
    /// Newline-delimited JSON-RPC on stdin/stdout (what Claude Code and
    /// Cursor spawn). Only the protocol is written to stdout; EOF on stdin
    /// shuts the server down.
    #[default]
    Stdio,
    /// Streamable HTTP: stateless, JSON responses, POST only — or with a
    /// session per client ([`HttpOptions::stateful`]).
    Http(HttpOptions),
}

/// Streamable HTTP settings.
#[derive(Debug, Clone)]
#[non_exhaustive]
#[must_use]
pub struct HttpOptions {
    /// The address to bind (default `127.0.0.1`).
    pub host: String,
    /// The port (default 3920; 0 picks a free one, see `local_addr()`).
    pub port: u16,
    /// The endpoint path (default `/mcp`).
    pub path: String,
    /// Extra `Host` values to accept besides the loopback names and the bound
    /// host (DNS-rebinding protection).
    pub allowed_hosts: Vec<String>,
    /// Browser origins to accept besides loopback ones, e.g.
    /// `https://app.example.com:443`. Any other `Origin` gets `403`.
    pub allowed_origins: Vec<String>,
    /// The largest request body accepted (default 4 MiB); larger get `413`.
    pub max_body_bytes: usize,
    /// How long a client may take to send a request's headers, counted from
    /// the connect or the end of the previous response (default 10 s): slow
    /// headers and idle kept-alive connections are closed after it.
    pub header_timeout: Duration,
    /// How long a client may take to send a request's body (default 30 s);
    /// a slower one gets `408` and the connection is closed.
    pub body_timeout: Duration,
    /// The most connections served at once (default
    /// [`default_max_connections`]: three quarters of the file-descriptor
    /// limit). At the cap, a new connection makes room: the kept-alive
    /// connection idle longest is closed, else one that has sent no complete
    /// request for a second (from the client holding the most); one with a
    /// request in flight never is. If no slot frees within a second, the new
    /// connection is answered `503` with `Retry-After` — never reset.
    pub max_connections: usize,
    /// After a request body's first 5 s, the average rate it must arrive at,
    /// in bytes a second (default 240; 0: none); a slower one gets `408`
    /// and the connection is closed.
    pub min_body_rate: u64,
    /// The most `tools/call` requests in flight at once (default 1024).
    /// A call whose body is in waits up to 2 s for a slot (in arrival
    /// order), then gets `503` with `Retry-After`.
    pub max_calls: usize,
    /// The most agent runs in flight at once (default 128), shed like
    /// [`max_calls`](Self#structfield.max_calls).
    pub max_agent_runs: usize,
    /// The share of `max_calls` and of `max_agent_runs` one client (IP
    /// address) may hold, in percent (default 50), so that one client cannot
    /// take every slot. Behind a reverse proxy every client has the proxy's
    /// address: raise it to 100 there.
    pub client_share_percent: u8,
    /// Keep a session per client (`Mcp-Session-Id`, default off): then the
    /// server can ask the client (elicitation, sampling — approvals with
    /// `ServeApprovals::Elicit`) while a call runs, and GET opens an event
    /// stream. Stateless (the default) serves each POST on its own.
    pub stateful: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".to_owned(),
            port: DEFAULT_HTTP_PORT,
            path: DEFAULT_HTTP_PATH.to_owned(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: default_max_connections(),
            min_body_rate: DEFAULT_MIN_BODY_RATE,
            max_calls: DEFAULT_MAX_CALLS,
            max_agent_runs: DEFAULT_MAX_AGENT_RUNS,
            client_share_percent: DEFAULT_CLIENT_SHARE_PERCENT,
            stateful: false,
        }
    }
}

impl HttpOptions {
    /// `127.0.0.1:3920/mcp`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The address to bind. Binding a non-loopback host without [`Auth`] logs a warning.
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// The port; 0 picks a free one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The endpoint path (`/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Accepts another `Host` header value (a hostname or `host:port`).
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Accepts another browser `Origin` (`scheme://host[:port|:*]`).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// The largest request body accepted, in bytes.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// The deadline for a request's headers (and for an idle kept-alive
    /// connection); see [`header_timeout`](Self#structfield.header_timeout).
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// The deadline for a request's body; see
    /// [`body_timeout`](Self#structfield.body_timeout).
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Keeps a session per client so the server can ask it things while a
    /// call runs; see [`stateful`](Self#structfield.stateful).
    pub fn stateful(mut self, stateful: bool) -> Self {
        self.stateful = stateful;
        self
    }

    /// The most connections open at once (at least 1); see
    /// [`max_connections`](Self#structfield.max_connections).
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max;
        self
    }

    /// The minimum request body rate in bytes a second (0: none); see
    /// [`min_body_rate`](Self#structfield.min_body_rate).
    pub fn min_body_rate(mut self, bytes_per_second: u64) -> Self {
        self.min_body_rate = bytes_per_second;
        self
    }

    /// The most `tools/call` requests in flight (at least 1); see
    /// [`max_calls`](Self#structfield.max_calls).
    pub fn max_calls(mut self, max: usize) -> Self {
        self.max_calls = max;
        self
    }

    /// The most agent runs in flight (at least 1); see
    /// [`max_agent_runs`](Self#structfield.max_agent_runs).
    pub fn max_agent_runs(mut self, max: usize) -> Self {
        self.max_agent_runs = max;
        self
    }

    /// One client's share of each call limit, in percent (1 to 100); see
    /// [`client_share_percent`](Self#structfield.client_share_percent).
    pub fn client_share_percent(mut self, percent: u8) -> Self {
        self.client_share_percent = percent;
        self
    }
}

/// How HTTP clients authenticate.
#[derive(Clone)]
#[non_exhaustive]
pub enum Auth {
    /// `Authorization: Bearer <token>`, compared in constant time; anything
    /// else gets `401` with `WWW-Authenticate: Bearer`.
    Bearer(BearerToken),
    /// OAuth 2.1 access tokens from an authorization server (the MCP
    /// authorization spec's resource server; see [`OAuthResource`]).
    OAuth(OAuthResource),
}

impl Auth {
    /// Requires `Authorization: Bearer <token>`.
    pub fn bearer(token: impl Into<String>) -> Self {
        Auth::Bearer(BearerToken(token.into()))
    }

    /// Requires an OAuth access token `resource` accepts.
    pub fn oauth(resource: OAuthResource) -> Self {
        Auth::OAuth(resource)
    }
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            Auth::OAuth(resource) => f.debug_tuple("OAuth").field(resource).finish(),
        }
    }
}

/// A bearer token; never printed.
#[derive(Clone)]
pub struct BearerToken(pub(crate) String);

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Directly exposed tools, collected into a set (duplicates are an error).
pub(crate) fn direct_tool_set(
    tools: &[Arc<dyn Tool>],
) -> Result<ToolSet, crate::tool::DuplicateToolError> {
    let mut set = ToolSet::new();
    for tool in tools {
        set.insert(tool.clone())?;
    }
    Ok(set)
}
