//! Agent spec files: an agent described in YAML, loaded into an [`AgentBuilder`].
//!
//! The keys are the TypeScript edition's (camelCase), so one file serves
//! both editions:
//!
//! ```yaml
//! name: support-bot
//! description: Ask the support agent a question
//! model: openai/gpt-4o-mini          # or `test` offline
//! prompt: You answer support questions.
//! tools: [read_file, grep]           # built-in tools
//! workspace: ./docs                  # the file tools' folder (default: this file's folder)
//! maxTurns: 10
//! contextBudget: 100000              # tokens of conversation per model request
//! compaction: {}                     # summarise older turns instead of leaving them out
//! toolSearch: auto                   # on | off: hold MCP tools back, offer `tool_search`
//! alwaysLoadedTools: [docs__search]  # sent even when the others are held back
//! mcpServers:                        # or a path: mcpServers: ./.mcp.json
//!   docs:
//!     url: https://example.com/mcp
//!     headers: { Authorization: "Bearer ${DOCS_TOKEN}" }
//!     approval: never                # annotations | always | never
//! mcp:                               # how mcpServers connect (all optional)
//!   naming: prefixed                 # docs__search; `mcp`: mcp__docs__search
//!   lazy: true                       # false: a call after a close or a drop fails
//!   onError: throw                   # skip: a server that cannot connect is left out
//! permissions:
//!   rules:
//!     - { tool: "docs__delete_*", decision: deny }
//! serve:                             # for `lousho mcp`
//!   tools: [read_file, docs__search] # exposed directly besides the agent tool
//!   auth: { type: bearer, token: "${TOKEN}" }
//!   sessions: true                   # clients continue a conversation by its id
//! ```
//!
//! - `${VAR}` and `${VAR:-default}` are expanded in every string value (also
//!   inside `mcpServers` and a referenced `.mcp.json`); an unset `${VAR}` is
//!   an error naming it. `$${` is a literal `${`.
//! - Relative paths (`workspace`, the `.mcp.json` path, a stdio server's
//!   `cwd` and a `command` with a `/`) resolve from the spec file's folder;
//!   a stdio server without `cwd` starts there.
//! - Strict: an unknown key, a wrong type, a bad model string or an unknown
//!   built-in is a [`SpecError`] naming the file, the line and the key, with
//!   a suggestion when a known key is close (`mcpservers` → `mcpServers`).
//! - [`spec_json_schema`] is the JSON Schema of the format, for editors
//!   (checked in as `schemas/agent-spec.schema.json`).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use lousho::spec::SpecLoader;
//! let spec = SpecLoader::new()
//!     .var("GREETING", "Hello")
//!     .parse("model: test\nprompt: ${GREETING}, be brief.\ntools: [current_date]\n", "agent.yaml")?;
//! assert_eq!(spec.prompt.as_deref(), Some("Hello, be brief."));
//! let agent = spec.agent_builder()?.build()?;
//! assert!(agent.tool("current_date").is_some());
//! # Ok(()) }
//! ```

mod agents;
mod error;
mod file;
#[cfg(feature = "mcp-client")]
mod host_config;
mod locate;
mod mcp_servers;
mod nesting;
mod read;
mod resolve;
mod serve_offers;
mod suggest;
mod telemetry;

pub use error::{SpecError, SpecErrorKind};
pub use read::DEFAULT_MAX_SPEC_BYTES;
pub use serve_offers::{
    PromptMessageRole, ServedPrompt, ServedPromptArgument, ServedPromptMessage, ServedResources,
};
pub use telemetry::TelemetrySpec;

use crate::AgentBuilder;
#[cfg(feature = "builtin")]
use crate::builtin::{BUILTIN_NAMES, Workspace, builtin_tools};
use crate::interpolate::{VariableError, first_reference, interpolate};
#[cfg(feature = "mcp-client")]
use crate::mcp::{ConnectOptions, McpServers};
use crate::model::{ModelRef, ModelSettings};
use crate::policy::Permissions;
use file::SpecFile;
use locate::{line_of_key, line_of_offset};
use nesting::{MAX_FLOW_NESTING, too_deep};
use read::{ReadError, read_bounded};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Without the `builtin` feature there are no built-in tools to name.
#[cfg(not(feature = "builtin"))]
const BUILTIN_NAMES: [&str; 0] = [];

/// A loaded spec file: values interpolated, paths resolved, `.mcp.json` read.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentSpec {
    /// The file it came from.
    pub path: PathBuf,
    /// The agent's name.
    pub name: Option<String>,
    /// What the agent does.
    pub description: Option<String>,
    /// The model string (checked to name a known provider); with a model
    /// list (`model: [a, b]`), its first.
    pub model: Option<String>,
    /// The rest of a model list, in order: the models to fail over to (see
    /// `AgentBuilder::models`). Empty for one model.
    pub fallback_models: Vec<String>,
    /// The provider's base URL for `model` (`modelOptions.baseUrl`; not
    /// for the fallback models).
    pub base_url: Option<String>,
    /// Client-side rate limits by provider (`modelOptions.limits`: `openai`,
    /// `anthropic`, `openrouter`, `ollama`), for every model of the list
    /// from that provider.
    pub rate_limits: BTreeMap<String, crate::model::RateLimits>,
    /// Sampling settings sent with every request (`modelOptions.temperature`,
    /// `modelOptions.maxOutputTokens`, `modelOptions.promptCache`,
    /// `modelOptions.thinkingBudget`, `modelOptions.reasoningEffort`).
    pub model_settings: ModelSettings,
    /// The system prompt.
    pub prompt: Option<String>,
    /// Built-in tools by name (checked).
    pub tools: Vec<String>,
    /// The agents of the file's `agents:` this agent calls as tools (named
    /// in `tools`; see [`AgentSpec::build_agents`]).
    pub agent_tools: Vec<String>,
    /// The file's other agents (`agents:`), by name; only the top spec has
    /// them.
    pub agents: BTreeMap<String, AgentSpec>,
    /// The file tools' folder (absolute or relative to the working directory).
    pub workspace: PathBuf,
    /// Skills folders (`skills:`, resolved against the file's folder; see
    /// `AgentBuilder::skills`).
    pub skills: Vec<PathBuf>,
    /// The most model turns per run.
    pub max_turns: Option<usize>,
    /// The most tokens (estimated) of conversation per model request
    /// (`contextBudget`; see `AgentBuilder::context_budget`).
    pub context_budget: Option<usize>,
    /// Summaries instead of left-out turns (`compaction`; see
    /// `AgentBuilder::compaction`).
    pub compaction: Option<crate::agent::Compaction>,
    /// The final answer's schema (`output`; see
    /// `AgentBuilder::output_schema`).
    pub output: Option<crate::model::OutputSchema>,
    /// Limits on what each run may spend (`budget`; see
    /// `AgentBuilder::budget`).
    pub budget: Option<crate::agent::Budget>,
    /// Limits on what all runs of one session together may spend
    /// (`sessionBudget`; see `AgentBuilder::session_budget`).
    pub session_budget: Option<crate::agent::Budget>,
    /// Tool search (`toolSearch`, `alwaysLoadedTools`).
    pub tool_search: crate::tool::search::ToolSearch,
    /// The MCP servers.
    #[cfg(feature = "mcp-client")]
    pub mcp_servers: McpServers,
    /// How they connect (the `mcp:` section: naming, lazy, on_error; and
    /// the pins of the lock file next to the spec, `<name>.lock.json`, when
    /// one exists; the other options are the defaults, for the caller to
    /// add to).
    #[cfg(feature = "mcp-client")]
    pub mcp_options: ConnectOptions,
    /// The permission rules.
    pub permissions: Permissions,
    /// How `lousho mcp` serves it.
    pub serve: ServeSpec,
    /// The `telemetry` section.
    pub telemetry: TelemetrySpec,
}

/// `serve.approvals`: what `lousho mcp` does when a call needs approval
/// (`serve_mcp`'s `ServeApprovals`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approvals {
    /// Nobody can approve over MCP (the default).
    #[default]
    Deny,
    /// Ask the calling client's user through an elicitation form.
    Elicit,
    /// Expose tools that need approval with no human gate.
    Allow,
}

/// `serve.auth: { type: oauth, … }`: the settings of an OAuth resource
/// server (`lousho::mcp::OAuthResource`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ServeOAuth {
    /// The authorization server's issuer URL.
    pub issuer: String,
    /// This server's canonical URL (the tokens' audience).
    pub audience: String,
    /// Scopes every token must carry.
    pub scopes: Vec<String>,
    /// Tool-name globs and the scope each needs on top.
    pub tool_scopes: Vec<(String, String)>,
    /// The issuer's JWKS URL, if not from its metadata.
    pub jwks_uri: Option<String>,
    /// The allowance for clock differences (`clockSkewMs`).
    pub clock_skew: Option<std::time::Duration>,
    /// Opaque tokens introspected with these credentials
    /// (`introspection: { clientId, clientSecret }`).
    pub introspection: Option<ServeIntrospection>,
    /// The issuer's introspection endpoint, if not from its metadata
    /// (`introspectionEndpoint`).
    pub introspection_endpoint: Option<String>,
}

/// `serve.auth.introspection`: the client credentials a resource server
/// introspects opaque tokens with (the secret is never printed by `Debug`).
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ServeIntrospection {
    /// This server's client id at the authorization server.
    pub client_id: String,
    /// Its client secret.
    pub client_secret: String,
}

impl fmt::Debug for ServeIntrospection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeIntrospection")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

/// `serve.limits.perCaller`: limits on each caller's agent runs
/// (`lousho::mcp::CallerLimits`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeCallerLimits {
    /// The most runs at once (`concurrentRuns`).
    pub concurrent_runs: Option<u32>,
    /// The most runs started in a minute (`runsPerMinute`).
    pub runs_per_minute: Option<u32>,
    /// The most model tokens in a day (`tokensPerDay`).
    pub tokens_per_day: Option<u64>,
}

/// The `serve` section.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ServeSpec {
    /// Tools exposed directly besides the agent tool, by full name.
    pub tools: Vec<String>,
    /// A bearer token HTTP clients must send (never printed by `Debug`).
    pub bearer_token: Option<String>,
    /// OAuth access tokens HTTP clients must send (`serve.auth: { type:
    /// oauth, … }`).
    pub oauth: Option<ServeOAuth>,
    /// What happens when a call needs approval (`serve.approvals`: `deny`,
    /// `elicit` or `allow`; the deprecated `serve.allowApprovalTools: true` is
    /// `allow`).
    pub approvals: Approvals,
    /// How long `elicit` waits for an answer (`serve.approvalTimeoutMs`).
    pub approval_timeout: Option<std::time::Duration>,
    /// HTTP: extra `Host` values to accept (`serve.allowedHosts`).
    pub allowed_hosts: Vec<String>,
    /// HTTP: the most connections served at once (`serve.maxConnections`).
    pub max_connections: Option<usize>,
    /// HTTP: the deadline for a request's headers and for idle connections
    /// (`serve.headerTimeoutMs`).
    pub header_timeout: Option<std::time::Duration>,
    /// HTTP: the deadline for a request's body (`serve.bodyTimeoutMs`).
    pub body_timeout: Option<std::time::Duration>,
    /// HTTP: the minimum request body rate, bytes a second
    /// (`serve.minBodyRate`).
    pub min_body_rate: Option<u64>,
    /// HTTP: the most calls in flight (`serve.maxCalls`).
    pub max_calls: Option<usize>,
    /// HTTP: the most agent runs in flight (`serve.maxAgentRuns`).
    pub max_agent_runs: Option<usize>,
    /// HTTP: one client's share of each call limit, in percent
    /// (`serve.clientSharePercent`).
    pub client_share_percent: Option<u8>,
    /// HTTP: the largest request body accepted (`serve.maxBodyBytes`).
    pub max_body_bytes: Option<usize>,
    /// HTTP: a session per client, so the server can ask it things
    /// (`serve.stateful`).
    pub stateful: bool,
    /// stdio: the longest message line accepted (`serve.maxLineBytes`).
    pub max_line_bytes: Option<usize>,
    /// Conversations across calls, in the session store (`serve.sessions`;
    /// `ServeOptions::sessions`).
    pub sessions: bool,
    /// A skills folder served through the Skills extension
    /// (`serve.skills`, resolved against the file's folder;
    /// `ServeOptions::skills`).
    pub skills: Option<PathBuf>,
    /// Resources served besides tools (`serve.resources`).
    pub resources: Vec<ServedResources>,
    /// Prompts served (`serve.prompts`), by name.
    pub prompts: Vec<ServedPrompt>,
    /// The server's and its agent tool's display title (`serve.title`).
    pub title: Option<String>,
    /// The server's and its agent tool's icons (`serve.icons`).
    pub icons: Vec<crate::tool::Icon>,
    /// Limits on each caller's agent runs (`serve.limits.perCaller`).
    pub caller_limits: Option<ServeCallerLimits>,
}

impl fmt::Debug for ServeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeSpec")
            .field("tools", &self.tools)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("oauth", &self.oauth)
            .field("approvals", &self.approvals)
            .field("approval_timeout", &self.approval_timeout)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_connections", &self.max_connections)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("min_body_rate", &self.min_body_rate)
            .field("max_calls", &self.max_calls)
            .field("max_agent_runs", &self.max_agent_runs)
            .field("client_share_percent", &self.client_share_percent)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("stateful", &self.stateful)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("sessions", &self.sessions)
            .field("skills", &self.skills)
            .field("resources", &self.resources)
            .field("prompts", &self.prompts)
            .field("title", &self.title)
            .field("icons", &self.icons)
            .field("caller_limits", &self.caller_limits)
            .finish()
    }
}

/// Reads spec files, with extra variables on top of the environment.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct SpecLoader {
    vars: BTreeMap<String, String>,
    no_env: bool,
    max_bytes: Option<u64>,
}

/// Loads a spec file with the process environment's variables.
pub fn load_spec(path: impl AsRef<Path>) -> Result<AgentSpec, SpecError> {
    SpecLoader::new().load(path)
}

/// The JSON Schema (2020-12) of spec files, generated from the types.
pub fn spec_json_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(SpecFile);
    schema.to_value()
}

impl SpecLoader {
    /// Variables from the process environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a variable; it wins over the environment's.
    pub fn var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// Ignores the process environment (only [`var`](Self::var)s count).
    pub fn without_env(mut self) -> Self {
        self.no_env = true;
        self
    }

    /// Refuses spec files (and the `.mcp.json` they name) larger than
    /// `bytes`; the default is [`DEFAULT_MAX_SPEC_BYTES`] (1 MiB).
    pub fn max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = Some(bytes);
        self
    }

    fn limit(&self) -> u64 {
        self.max_bytes.unwrap_or(DEFAULT_MAX_SPEC_BYTES)
    }

    fn lookup(&self, name: &str) -> Option<String> {
        self.vars
            .get(name)
            .cloned()
            .or_else(|| (!self.no_env).then(|| std::env::var(name).ok()).flatten())
    }

    /// Reads and loads the spec file at `path`.
    ///
    /// Only a file or a pipe is read (a directory or a device such as
    /// `/dev/zero` is refused unread), and at most
    /// [`max_file_bytes`](Self::max_file_bytes).
    pub fn load(&self, path: impl AsRef<Path>) -> Result<AgentSpec, SpecError> {
        let path = path.as_ref();
        let text = self.read(path)?;
        self.parse(&text, path)
    }

    /// Reads a spec file's text, bounded.
    fn read(&self, path: &Path) -> Result<String, SpecError> {
        let limit = self.limit();
        read_bounded(path, limit).map_err(|e| {
            let kind = match e {
                ReadError::TooLarge => SpecErrorKind::TooLarge { limit },
                ReadError::NotAFile(kind) => SpecErrorKind::NotAFile(kind.to_owned()),
                ReadError::Io(e) => return SpecError::new(path, SpecErrorKind::Read).source(e),
                ReadError::NotUtf8 => {
                    return SpecError::new(path, SpecErrorKind::Read).source(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "the file is not UTF-8 text",
                    ));
                }
            };
            SpecError::new(path, kind)
        })
    }

    /// Loads a spec from its text; `path` names it in errors and is where
    /// relative paths resolve from (its folder).
    ///
    /// Text over [`max_file_bytes`](Self::max_file_bytes), or whose `[…]` /
    /// `{…}` collections nest more than 64 levels deep, is refused before
    /// the YAML parser sees it (it would take seconds to minutes on it).
    pub fn parse(&self, text: &str, path: impl AsRef<Path>) -> Result<AgentSpec, SpecError> {
        self.parse_in(text, path.as_ref(), &agents::Scope::Top)
    }

    /// [`parse`](Self::parse), as the top spec or as one of its `agents`.
    fn parse_in(
        &self,
        text: &str,
        path: &Path,
        scope: &agents::Scope,
    ) -> Result<AgentSpec, SpecError> {
        let err = |kind| SpecError::new(path, kind);
        // 0. Bounds the parser's time.
        let limit = self.limit();
        if text.len() as u64 > limit {
            return Err(err(SpecErrorKind::TooLarge { limit }));
        }
        if let Some(line) = too_deep(text, MAX_FLOW_NESTING) {
            return Err(err(SpecErrorKind::TooDeep {
                limit: MAX_FLOW_NESTING,
            })
            .at(Some(line), None));
        }
        // 1. YAML syntax.
        let value: yaml_serde::Value = yaml_serde::from_str(text).map_err(|e| {
            let (line, column) = location(&e);
            err(SpecErrorKind::Yaml(strip_location(&e.to_string()))).at(line, column)
        })?;
        // 2. The shape, straight from the text so errors carry their line.
        let checked: Result<SpecFile, _> =
            serde_path_to_error::deserialize(yaml_serde::Deserializer::from_str(text));
        if let Err(e) = checked {
            return Err(shape_error(path, text, e));
        }
        // 3. Variables, in every string value.
        let value = self.expand(value, "", path, text)?;
        // 4. The values, from the expanded tree.
        let file: SpecFile = serde_path_to_error::deserialize(value).map_err(|e| {
            let key = e.path().to_string();
            err(SpecErrorKind::Invalid(e.inner().to_string()))
                .at(line_of_key(text, &key), None)
                .key(key)
        })?;
        self.resolve(file, path, text, scope)
    }

    fn expand(
        &self,
        value: yaml_serde::Value,
        key: &str,
        path: &Path,
        text: &str,
    ) -> Result<yaml_serde::Value, SpecError> {
        use yaml_serde::Value;
        Ok(match value {
            Value::String(s) => Value::String(self.expand_str(&s, key, path, text)?),
            Value::Sequence(items) => Value::Sequence(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| self.expand(v, &format!("{key}[{i}]"), path, text))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Mapping(map) => {
                let mut out = yaml_serde::Mapping::new();
                for (k, v) in map {
                    let name = k.as_str().map(str::to_owned).unwrap_or_default();
                    let child = if key.is_empty() {
                        name
                    } else {
                        format!("{key}.{name}")
                    };
                    out.insert(k, self.expand(v, &child, path, text)?);
                }
                Value::Mapping(out)
            }
            other => other,
        })
    }

    fn expand_str(&self, s: &str, key: &str, path: &Path, text: &str) -> Result<String, SpecError> {
        interpolate(s, &|name| self.lookup(name)).map_err(|e| {
            let line = match &e {
                VariableError::Unset(name) => {
                    first_reference(text, name).map(|o| line_of_offset(text, o))
                }
                VariableError::Malformed(_) | VariableError::TooDeep(_) => line_of_key(text, key),
            };
            let kind = match &e {
                VariableError::Unset(_) => SpecErrorKind::UnsetVariable(e.to_string()),
                VariableError::Malformed(_) | VariableError::TooDeep(_) => {
                    SpecErrorKind::Invalid(e.to_string())
                }
            };
            SpecError::new(path, kind).at(line, None).key(key)
        })
    }

    /// The checked, resolved spec of a parsed `file`: its model settings,
    /// tools, limits, MCP servers, permissions, serving options and agents
    /// (each step in [`resolve`]), checked in that order.
    fn resolve(
        &self,
        mut file: SpecFile,
        path: &Path,
        text: &str,
        scope: &agents::Scope,
    ) -> Result<AgentSpec, SpecError> {
        let at = locate::At { path, text };
        let dir = resolve::spec_dir(path);
        let model_options = file.model_options.take().unwrap_or_default();
        let (model, fallback_models) = resolve::model_list(file.model.take(), &at)?;
        let model_settings = resolve::model_settings(model.as_deref(), &model_options, &at)?;
        let agent_entries = file.agents.take().unwrap_or_default();
        let agent_names = scope.names(path, &agent_entries)?;
        let (agent_tools, builtin) = resolve::split_tools(&file.tools, &agent_names, &at)?;
        resolve::check_limits(&file, &at)?;
        #[cfg(feature = "mcp-client")]
        let mcp_servers = self.mcp_servers(file.mcp_servers, &dir, path, text)?;
        #[cfg(not(feature = "mcp-client"))]
        self.no_mcp_servers(file.mcp_servers, path, text)?;
        let permissions = resolve::permissions(file.permissions.take(), &at)?;
        let skills: Vec<PathBuf> = file
            .skills
            .take()
            .map(file::SkillsFile::folders)
            .unwrap_or_default()
            .into_iter()
            .map(|f| join_clean(&dir, Path::new(&f)))
            .collect();
        if cfg!(not(feature = "builtin")) && !skills.is_empty() {
            return Err(at.key(
                SpecErrorKind::MissingFeature {
                    feature: "builtin",
                    needed_for: "skills",
                },
                "skills",
            ));
        }
        let mut serve = match file.serve.take() {
            Some(s) => resolve::serve_spec(s, file.prompt.as_deref(), &at)?,
            None => ServeSpec::default(),
        };
        serve.skills = serve.skills.map(|s| join_clean(&dir, &s));
        let workspace = file
            .workspace
            .as_ref()
            .map_or_else(|| dir.clone(), |w| join_clean(&dir, Path::new(w)));
        let mut spec = AgentSpec {
            path: path.to_path_buf(),
            name: file.name,
            description: file.description,
            model,
            fallback_models,
            rate_limits: resolve::rate_limits(&model_options, &at)?,
            base_url: model_options.base_url,
            model_settings,
            prompt: file.prompt,
            tools: builtin,
            agent_tools,
            agents: BTreeMap::new(),
            workspace: workspace.clone(),
            skills,
            max_turns: file.max_turns,
            context_budget: file.context_budget,
            compaction: file
                .compaction
                .as_ref()
                .map(file::CompactionFile::to_compaction),
            budget: file.budget.as_ref().map(file::BudgetFile::to_budget),
            session_budget: file
                .session_budget
                .as_ref()
                .map(file::BudgetFile::to_budget),
            output: file.output.map(|o| {
                crate::model::OutputSchema::new(o.name.unwrap_or_else(|| "output".into()), o.schema)
            }),
            tool_search: crate::tool::search::ToolSearch::new(file.tool_search.unwrap_or_default())
                .always_loaded(file.always_loaded_tools),
            #[cfg(feature = "mcp-client")]
            mcp_servers,
            #[cfg(feature = "mcp-client")]
            // The workspace is offered to the servers as their root.
            mcp_options: mcp_servers::with_lock_file(
                mcp_servers::connect_options(file.mcp.unwrap_or_default()),
                path,
            )?
            .roots([crate::mcp::McpRoot::folder(&workspace)]),
            permissions,
            serve,
            telemetry: file.telemetry.map(TelemetrySpec::from).unwrap_or_default(),
        };
        spec.agents = self.resolve_agents(agent_entries, &agent_names, &dir, path, text)?;
        Ok(spec)
    }
}

impl AgentSpec {
    /// An [`AgentBuilder`] with everything the file says, MCP servers
    /// included (they connect on `ready()` or the first run).
    pub fn agent_builder(&self) -> Result<AgentBuilder, SpecError> {
        let builder = self.agent_builder_without_mcp()?;
        #[cfg(feature = "mcp-client")]
        let builder = builder
            .mcp_servers(self.mcp_servers.clone())
            .mcp_options(self.mcp_options.clone());
        Ok(builder)
    }

    /// [`agent_builder`](Self::agent_builder) without the MCP servers, for
    /// callers that connect them themselves (`connect_mcp`) and add them as
    /// a tool source.
    pub fn agent_builder_without_mcp(&self) -> Result<AgentBuilder, SpecError> {
        let mut builder = AgentBuilder::default()
            .permissions(self.permissions.clone())
            .settings(self.model_settings.clone());
        if let Some(model) = &self.model {
            builder = builder.model(self.model_ref(model, self.base_url.as_deref()));
        }
        for model in &self.fallback_models {
            builder = builder.fallback_model(self.model_ref(model, None));
        }
        if let Some(name) = &self.name {
            builder = builder.name(name);
        }
        if let Some(description) = &self.description {
            builder = builder.description(description);
        }
        if let Some(prompt) = &self.prompt {
            builder = builder.prompt(prompt);
        }
        if let Some(max_turns) = self.max_turns {
            builder = builder.max_turns(max_turns);
        }
        if let Some(budget) = self.context_budget {
            builder = builder.context_budget(budget);
        }
        if let Some(compaction) = &self.compaction {
            builder = builder.compaction(compaction.clone());
        }
        if let Some(budget) = self.budget {
            builder = builder.budget(budget);
        }
        if let Some(budget) = self.session_budget {
            builder = builder.session_budget(budget);
        }
        if let Some(output) = &self.output {
            builder = builder.output_schema(output.clone());
        }
        builder = builder.tool_search(self.tool_search.clone());
        #[cfg(feature = "builtin")]
        for folder in &self.skills {
            builder = builder.skills(folder);
        }
        builder = self.telemetry.apply(builder);
        #[cfg(feature = "builtin")]
        if !self.tools.is_empty() {
            let workspace = Workspace::new(&self.workspace).map_err(|e| {
                SpecError::new(&self.path, SpecErrorKind::Invalid(e.to_string()))
                    .key("workspace")
                    .source(e)
            })?;
            let tools = builtin_tools(&self.tools, &workspace).map_err(|e| {
                SpecError::new(
                    &self.path,
                    SpecErrorKind::UnknownTool {
                        name: e.name.clone(),
                        suggestion: None,
                    },
                )
                .key("tools")
            })?;
            builder = builder.tools(tools);
        }
        Ok(builder)
    }
}

impl AgentSpec {
    /// One model of the list, with its base URL and its provider's rate
    /// limits (`modelOptions.limits`), resolved when the agent is built.
    fn model_ref(&self, model: &str, base_url: Option<&str>) -> ModelRef {
        let vendor = model.split_once('/').map_or(model, |(v, _)| v);
        let limits = self.rate_limits.get(vendor).copied().unwrap_or_default();
        if base_url.is_none() && limits.is_empty() {
            return ModelRef::from(model);
        }
        let (model, url) = (model.to_owned(), base_url.map(str::to_owned));
        ModelRef::deferred(move || {
            crate::model::resolve_model_at(
                &model,
                &crate::model::process_env,
                url.as_deref(),
                limits,
            )
        })
    }
}

/// `dir/rel` without `.` components (`./bin/server` → `dir/bin/server`).
fn join_clean(dir: &Path, rel: &Path) -> PathBuf {
    rel.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .fold(dir.to_path_buf(), |acc, c| acc.join(c))
}

/// Checks that `model` names a known provider, without needing its key.
fn check_model(model: &str) -> Result<(), SpecErrorKind> {
    let fake_keys = |name: &str| name.ends_with("_API_KEY").then(|| "spec-check".to_owned());
    match crate::model::resolve_model_with_env(model, &fake_keys) {
        Err(crate::model::ModelError::UnknownModel { .. }) => Err(SpecErrorKind::BadModel(
            format!("`{model}` is not a model string"),
        )),
        _ => Ok(()),
    }
}

/// Checks that `url` is a base URL the model's provider accepts.
fn check_base_url(model: &str, url: &str) -> Result<(), SpecErrorKind> {
    let fake_keys = |name: &str| name.ends_with("_API_KEY").then(|| "spec-check".to_owned());
    match crate::model::resolve_model_at(model, &fake_keys, Some(url), Default::default()) {
        Err(e @ crate::model::ModelError::InvalidConfig { .. }) => {
            Err(SpecErrorKind::Invalid(e.to_string()))
        }
        _ => Ok(()),
    }
}

fn location(e: &yaml_serde::Error) -> (Option<usize>, Option<usize>) {
    match e.location() {
        Some(l) => (Some(l.line()), Some(l.column())),
        None => (None, None),
    }
}

/// yaml_serde appends " at line L column C"; the error shows it up front.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

fn shape_error(
    path: &Path,
    text: &str,
    e: serde_path_to_error::Error<yaml_serde::Error>,
) -> SpecError {
    let key = e.path().to_string();
    let (mut line, column) = location(e.inner());
    let message = strip_location(&e.inner().to_string());
    if line.is_none() {
        line = line_of_key(text, &key);
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let unknown = rest.split('`').next().unwrap_or_default();
        let suggestion =
            suggest::did_you_mean(unknown, suggest::expected_fields(rest)).map(str::to_owned);
        let key = if key.ends_with(unknown) {
            key
        } else if key.is_empty() || key == "." {
            unknown.to_owned()
        } else {
            format!("{key}.{unknown}")
        };
        return SpecError::new(path, SpecErrorKind::UnknownKey { suggestion })
            .at(line, column)
            .key(key);
    }
    SpecError::new(path, SpecErrorKind::Invalid(message))
        .at(line, column)
        .key(key)
}
