//! The file's shape, exactly: what serde reads and what the JSON Schema says.

#[cfg(feature = "mcp-client")]
use crate::mcp::McpServers;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use std::fmt;

/// An agent spec file (YAML). Keys are the TypeScript edition's, so one file
/// serves both editions.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "lousho agent spec", rename = "AgentSpecFile")]
pub(crate) struct SpecFile {
    /// The agent's name (also the MCP server's and its tool's name when served).
    pub name: Option<String>,
    /// What the agent does (the served tool's description).
    pub description: Option<String>,
    /// `vendor/model`: `openai/gpt-4o-mini`, `anthropic/…`, `openrouter/<vendor>/<model>`, `ollama/<model>`, `test` (offline), or `sampling` (served over MCP: the calling client's model). Or a list of them, tried in order: the next one answers when one is rate limited, overloaded, gets a conversation too long for it, or still fails after its retries.
    pub model: Option<ModelFile>,
    /// The provider's base URL and sampling settings for `model`.
    pub model_options: Option<ModelOptionsFile>,
    /// The system prompt.
    pub prompt: Option<String>,
    /// Built-in tools by name: read_file, list_dir, glob, grep, todo_read, todo_write, current_date, day_name.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The folder the file tools may read (relative to this file; default: this file's folder).
    pub workspace: Option<String>,
    /// Agent Skills: a folder (relative to this file) that is one skill (it holds a SKILL.md) or holds skills (sub-folders with a SKILL.md), or a list of such folders. Only names and descriptions go into the system prompt; the model loads a skill with `load_skill` and reads its files with `read_skill_file`.
    pub skills: Option<SkillsFile>,
    /// The most model turns one run may take (default 20).
    #[schemars(range(min = 1))]
    pub max_turns: Option<usize>,
    /// The most tokens (estimated: one per 4 bytes of JSON) of conversation one model request may carry, system prompt and tools included; a longer conversation (a stored session that grew) is sent without its oldest whole turns. Default: no limit.
    #[schemars(range(min = 1))]
    pub context_budget: Option<usize>,
    /// Summarise older messages with a model instead of leaving them out when the conversation passes `contextBudget` (which it needs): tool results are trimmed first, the first message (the task) stays, the summary is kept in the session naming the messages it replaces. `{}` for the agent's own model and the defaults.
    pub compaction: Option<CompactionFile>,
    /// A JSON Schema the final answer must match, sent as the provider's structured output (OpenAI `response_format`, Anthropic `output_config.format`); the answer is checked, one that does not fit is sent back twice at most, and `lousho run --json` prints it as `output` in its `done` line.
    pub output: Option<OutputFile>,
    /// Limits on what each run may spend; a run that reaches one stops with status `budget_exceeded` (`lousho run` exits with 5).
    pub budget: Option<BudgetFile>,
    /// Limits on what all runs of one session together may spend (the same keys as `budget`): a `lousho run --session` conversation's runs in one process; served by `lousho mcp`, all calls of one MCP session (a stdio connection, an HTTP `Mcp-Session-Id`; over stateless HTTP each call is its own). A run that reaches one stops with status `budget_exceeded`, scope `session`.
    pub session_budget: Option<BudgetFile>,
    /// MCP servers by name, or the path of another client's MCP config (relative to this file): `.mcp.json`, `claude_desktop_config.json`, `.cursor/mcp.json`, `.vscode/mcp.json` or Codex's `config.toml`.
    pub mcp_servers: Option<McpServersField>,
    /// Tool search: `auto` (default: above 30 tools or 10 % of the model's context, MCP tools are held back and found with a `tool_search` tool), `on` or `off`.
    pub tool_search: Option<crate::tool::search::ToolSearchMode>,
    /// Tools (by the name the model calls them, e.g. `files__read_file`) always sent even when tool search holds back the others.
    #[serde(default)]
    pub always_loaded_tools: Vec<String>,
    /// How the `mcpServers` connect and name their tools.
    #[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
    pub mcp: Option<McpOptionsFile>,
    /// Permission rules, checked before each tool's approval policy.
    pub permissions: Option<PermissionsFile>,
    /// How `lousho mcp` serves the agent.
    pub serve: Option<ServeFile>,
    /// Traces (OpenTelemetry) and the cost estimate.
    pub telemetry: Option<super::telemetry::TelemetryFile>,
    /// More agents by name, each an inline spec or the path of a spec file (relative to this file). `lousho mcp` serves each as one more tool; any agent of the file lists others by name among its `tools` to call them; `lousho run --agent NAME` runs one.
    pub agents: Option<std::collections::BTreeMap<String, AgentEntryFile>>,
}

/// `output:`: the schema of the final answer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct OutputFile {
    /// The JSON Schema (an object schema).
    pub schema: serde_json::Value,
    /// Its name for the provider (a-z, A-Z, 0-9, `_`, `-`; default `output`).
    pub name: Option<String>,
}

/// `compaction:`: summaries instead of left-out turns.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CompactionFile {
    /// The model that writes the summaries, `vendor/model` (e.g. a cheaper one; its key and base URL from the environment). Default: the agent's model.
    pub model: Option<String>,
    /// Tokens (estimated) of the newest messages kept as they are. Default: a quarter of `contextBudget`.
    #[schemars(range(min = 1))]
    pub keep_tokens: Option<usize>,
    /// Tool results longer than this many tokens (estimated) are trimmed to it, with a marker, before anything is summarised. Default 500.
    #[schemars(range(min = 1))]
    pub tool_result_tokens: Option<usize>,
    /// The most tokens a summary may take. Default 1024.
    #[schemars(range(min = 1))]
    pub summary_tokens: Option<u32>,
}

impl CompactionFile {
    /// As the agent's compaction.
    pub(crate) fn to_compaction(&self) -> crate::agent::Compaction {
        let mut c = crate::agent::Compaction::new();
        if let Some(model) = &self.model {
            c = c.model(model);
        }
        if let Some(n) = self.keep_tokens {
            c = c.keep_tokens(n);
        }
        if let Some(n) = self.tool_result_tokens {
            c = c.tool_result_tokens(n);
        }
        if let Some(n) = self.summary_tokens {
            c = c.summary_tokens(n);
        }
        c
    }
}

/// `budget:`: limits on what each run may spend (each optional).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BudgetFile {
    /// Most input (prompt) tokens, cached ones included.
    #[schemars(range(min = 1))]
    pub input_tokens: Option<u64>,
    /// Most output tokens, reasoning included.
    #[schemars(range(min = 1))]
    pub output_tokens: Option<u64>,
    /// Most input plus output tokens.
    #[schemars(range(min = 1))]
    pub total_tokens: Option<u64>,
    /// Most estimated cost in US dollars (from the price table).
    #[schemars(range(min = 0))]
    pub cost_usd: Option<f64>,
    /// Most wall time per run, in milliseconds.
    #[schemars(range(min = 1))]
    pub wall_time_ms: Option<u64>,
    /// Most model turns.
    #[schemars(range(min = 1))]
    pub turns: Option<usize>,
    /// Most tool calls.
    pub tool_calls: Option<usize>,
}

impl BudgetFile {
    /// As the agent's budget.
    pub(crate) fn to_budget(&self) -> crate::agent::Budget {
        let mut b = crate::agent::Budget::new();
        b.input_tokens = self.input_tokens;
        b.output_tokens = self.output_tokens;
        b.total_tokens = self.total_tokens;
        b.cost_usd = self.cost_usd;
        b.wall_time = self.wall_time_ms.map(std::time::Duration::from_millis);
        b.turns = self.turns;
        b.tool_calls = self.tool_calls;
        b
    }
}

/// `model:`: one model string or a list (the first, then its fallbacks).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum ModelFile {
    One(String),
    List(Vec<String>),
}

impl ModelFile {
    /// The model strings, in order.
    pub(crate) fn models(self) -> Vec<String> {
        match self {
            Self::One(m) => vec![m],
            Self::List(l) => l,
        }
    }
}

/// `skills:`: one folder or a list.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum SkillsFile {
    One(String),
    Many(Vec<String>),
}

impl SkillsFile {
    /// The folders, as written.
    pub(crate) fn folders(self) -> Vec<String> {
        match self {
            Self::One(f) => vec![f],
            Self::Many(l) => l,
        }
    }
}

/// One entry of `agents:`: an inline spec, or the path of a spec file.
#[derive(Debug)]
pub(crate) enum AgentEntryFile {
    Path(String),
    Inline(Box<SpecFile>),
}

impl<'de> Deserialize<'de> for AgentEntryFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AgentEntryFile;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an agent spec (a map), or the path of an agent spec file")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(AgentEntryFile::Path(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                SpecFile::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|f| AgentEntryFile::Inline(Box::new(f)))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for AgentEntryFile {
    fn schema_name() -> Cow<'static, str> {
        "AgentEntry".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let spec = generator.subschema_for::<SpecFile>();
        json_schema!({
            "oneOf": [
                spec,
                { "type": "string", "description": "The path of an agent spec file, relative to this file." }
            ]
        })
    }
}

/// Without the `mcp-client` feature the entries are kept as plain values:
/// a file that names any is an error naming the feature.
#[cfg(not(feature = "mcp-client"))]
type McpServers = std::collections::BTreeMap<String, serde_json::Value>;

/// `mcpServers`: a map of entries, or a path to a `.mcp.json`.
#[derive(Debug)]
pub(crate) enum McpServersField {
    Path(#[cfg_attr(not(feature = "mcp-client"), expect(dead_code))] String),
    Map(McpServers),
}

impl<'de> Deserialize<'de> for McpServersField {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = McpServersField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of MCP servers by name, or the path of a .mcp.json file")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(McpServersField::Path(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                McpServers::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(McpServersField::Map)
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for McpServersField {
    fn schema_name() -> Cow<'static, str> {
        "McpServers".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        #[cfg(feature = "mcp-client")]
        let entry = generator.subschema_for::<crate::mcp::client::config::RawEntry>();
        // Without the client the entries are not read (a file with any is an
        // error naming the feature), so their shape is left open.
        #[cfg(not(feature = "mcp-client"))]
        let entry = generator.subschema_for::<serde_json::Map<String, serde_json::Value>>();
        json_schema!({
            "oneOf": [
                { "type": "object", "additionalProperties": entry },
                { "type": "string", "description": "The path of another client's MCP config: .mcp.json, claude_desktop_config.json, .cursor/mcp.json, .vscode/mcp.json or a Codex config.toml." }
            ]
        })
    }
}

/// `mcp: { naming, lazy, onError }`: the options of `connect_mcp`, for the
/// agent's own `mcpServers`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "McpOptions")]
#[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
pub(crate) struct McpOptionsFile {
    /// Tool names: `prefixed` (`<server>__<tool>`, the default) or `mcp` (`mcp__<server>__<tool>`).
    pub naming: Option<NamingFile>,
    /// After `close()` or a dropped connection, the next tool call reconnects (default true); with false that call fails instead.
    pub lazy: Option<bool>,
    /// A server that cannot connect: `throw` fails the run (default); `skip` leaves it out with a warning (and tries it again on the next run).
    pub on_error: Option<OnErrorFile>,
}

/// `prefixed` (`<server>__<tool>`) or `mcp` (`mcp__<server>__<tool>`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "ToolNaming")]
#[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
pub(crate) enum NamingFile {
    Prefixed,
    Mcp,
}

/// `throw` or `skip`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "OnError")]
#[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
pub(crate) enum OnErrorFile {
    Throw,
    Skip,
}

/// `modelOptions: { baseUrl, temperature, maxOutputTokens, promptCache,
/// thinkingBudget, reasoningEffort }`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "ModelOptions")]
pub(crate) struct ModelOptionsFile {
    /// The provider's API base URL (e.g. `http://127.0.0.1:8080/v1` for an OpenAI-compatible server); overrides OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_BASE_URL. Applies to the spec's `model`, not to a `--model` from the command line.
    pub base_url: Option<String>,
    /// Sampling temperature (0 to 2; the provider's default when unset).
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f32>,
    /// The most tokens one model turn may generate (`max_tokens`; the provider's default when unset).
    #[schemars(range(min = 1))]
    pub max_output_tokens: Option<u32>,
    /// Whether requests mark their stable prefix (tools, system prompt, conversation) for the provider's prompt cache: Anthropic `cache_control` breakpoints (default true). OpenAI caches on its own either way.
    pub prompt_cache: Option<bool>,
    /// Anthropic extended thinking with this token budget (at least 1024; counts toward the output limit). Not with `reasoningEffort`.
    #[schemars(range(min = 1024))]
    pub thinking_budget: Option<u32>,
    /// A reasoning effort: OpenAI `reasoning_effort`; Anthropic adaptive thinking with this effort (Claude 4.6 and later). Not with `thinkingBudget`.
    pub reasoning_effort: Option<crate::model::ReasoningEffort>,
    /// Client-side rate limits by provider (`openai`, `anthropic`, `openrouter`, `ollama`), for every model of the `model` list from that provider: `{ rpm, tpm }`. Shared by all agents of the process that use the same provider, base URL and key; a request that would pass them waits.
    #[serde(default)]
    pub limits: std::collections::BTreeMap<String, RateLimitsFile>,
}

/// `modelOptions.limits.<provider>`: requests and tokens per minute.
#[derive(Debug, Default, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "RateLimits")]
pub(crate) struct RateLimitsFile {
    /// The most requests per minute.
    #[schemars(range(min = 1))]
    pub rpm: Option<u32>,
    /// The most tokens (input plus output, estimated before the request and corrected with the usage) per minute.
    #[schemars(range(min = 1))]
    pub tpm: Option<u32>,
}

/// `permissions: { rules: [...] }`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PermissionsFile {
    /// Rules matched on the tool's full name; deny > ask > allow.
    #[serde(default)]
    pub rules: Vec<RuleFile>,
}

/// One permission rule.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleFile {
    /// The TypeScript edition's rule kind (only `tool` exists).
    #[allow(dead_code)]
    pub kind: Option<RuleKind>,
    /// A full tool name (`docs__search`) or a glob (`docs__*`).
    pub tool: String,
    /// `allow`, `ask` or `deny`.
    pub decision: RuleDecisionFile,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RuleKind {
    Tool,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RuleDecisionFile {
    Allow,
    Ask,
    Deny,
}

/// `serve:` — what `lousho mcp` exposes besides the agent tool, and its auth.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ServeFile {
    /// Tools exposed directly (built-ins or MCP tools by full name).
    #[serde(default)]
    pub tools: Vec<String>,
    /// HTTP auth.
    pub auth: Option<AuthFile>,
    /// What happens when a call needs approval: `deny` (default: nobody can
    /// approve over MCP), `elicit` (ask the calling client's user through an
    /// elicitation form), `allow` (expose such tools with no human gate).
    pub approvals: Option<ApprovalsFile>,
    /// With `approvals: elicit`: how long to wait for the user's answer
    /// before the call counts as denied (default 300000).
    pub approval_timeout_ms: Option<u64>,
    /// Deprecated: `true` is `approvals: allow`.
    pub allow_approval_tools: Option<bool>,
    /// HTTP: extra `Host` names (or `host:port`) to accept besides loopback
    /// and the bound address, e.g. the server's public name.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// HTTP: the most connections served at once (default: three quarters
    /// of the file-descriptor limit).
    pub max_connections: Option<usize>,
    /// HTTP: the deadline for a request's headers, which also closes idle
    /// kept-alive connections (default 10000).
    pub header_timeout_ms: Option<u64>,
    /// HTTP: the deadline for a request's body (default 30000).
    pub body_timeout_ms: Option<u64>,
    /// HTTP: after a request body's first 5 s, the average rate it must
    /// arrive at, in bytes a second (default 240; 0: none), else `408`.
    pub min_body_rate: Option<u64>,
    /// HTTP: the most `tools/call` requests in flight (default 1024); past
    /// it a call waits up to 2 s, then gets `503` with `Retry-After`.
    pub max_calls: Option<usize>,
    /// HTTP: the most agent runs in flight (default 128), shed likewise.
    pub max_agent_runs: Option<usize>,
    /// HTTP: the share of `maxCalls` and `maxAgentRuns` one client (IP
    /// address) may hold, in percent (default 50; 100 behind a proxy).
    pub client_share_percent: Option<u8>,
    /// HTTP: the largest request body accepted, in bytes (default 4 MiB).
    pub max_body_bytes: Option<usize>,
    /// HTTP: keep a session per client (`Mcp-Session-Id`) so the server can
    /// ask it things (elicitation, sampling) while a call runs (default false).
    #[serde(default)]
    pub stateful: bool,
    /// stdio: the longest message line accepted, in bytes (default 16 MiB).
    pub max_line_bytes: Option<usize>,
    /// A skills folder (relative to this file) served through the MCP Skills extension (`io.modelcontextprotocol/skills`): `skills/list`, `skills/get`, and each skill's files as `skill://<name>/<path>` resources. The same folder an agent's `skills:` takes.
    pub skills: Option<String>,
    /// Resources to serve besides tools: `workspace` (every file of the workspace as a `file://` resource, read through the file tools' sandbox), globs relative to the workspace (`docs/**/*.md`), `sessions` (the session store's transcripts: `lousho://sessions` and `lousho://sessions/{id}`).
    #[serde(default)]
    pub resources: Vec<String>,
    /// Prompts by name: message templates with arguments (`{{name}}`), or the agent's own prompt (`agentPrompt: true`).
    #[serde(default)]
    pub prompts: std::collections::BTreeMap<String, super::serve_offers::PromptFile>,
    /// A display title for the server and its agent tool.
    pub title: Option<String>,
    /// Icons for the server and its agent tool: `{ src, mimeType, sizes, theme }`.
    #[serde(default)]
    pub icons: Vec<crate::tool::Icon>,
    /// Limits on what each caller may run: `perCaller: { concurrentRuns, runsPerMinute, tokensPerDay }`. Counted in the session store when `lousho mcp` has one (`--store`; shared by replicas on PostgreSQL), else in memory; a run past a limit gets HTTP `429` with `Retry-After` (stdio: an `isError` result).
    pub limits: Option<LimitsFile>,
    /// Keep conversations across calls (default false): the agent tool takes an optional `session` (the id a previous call returned) and every result names its session. `lousho mcp` keeps them in its session store (`--store` / `LOUSHO_STORE`: a SQLite file, or a postgres:// URL that replicas share).
    #[serde(default)]
    pub sessions: bool,
}

/// `serve.limits`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct LimitsFile {
    /// Per caller: the OAuth token's subject (and issuer) with `auth: { type: oauth }`, else the client's IP address over HTTP, the one client over stdio.
    pub per_caller: Option<PerCallerFile>,
}

/// `serve.limits.perCaller`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PerCallerFile {
    /// The most agent runs one caller may have going at once.
    #[schemars(range(min = 1))]
    pub concurrent_runs: Option<u32>,
    /// The most agent runs one caller may start in a minute (the minute starts with its first run).
    #[schemars(range(min = 1))]
    pub runs_per_minute: Option<u32>,
    /// The most model tokens (input plus output) one caller's runs may use in a day; a run is refused once the day's count reached it.
    #[schemars(range(min = 1))]
    pub tokens_per_day: Option<u64>,
}

/// `serve.approvals`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ApprovalsFile {
    Deny,
    Elicit,
    Allow,
}

/// `auth: { type: bearer, token: "${TOKEN}" }` or `auth: { type: oauth,
/// issuer, audience, … }`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub(crate) enum AuthFile {
    /// Require `Authorization: Bearer <token>`.
    Bearer {
        /// The token (use `${VAR}`; never write it into the file).
        token: String,
    },
    /// Require OAuth 2.1 access tokens (JWTs; opaque tokens too with
    /// `introspection`) from an authorization server:
    /// the server publishes Protected Resource Metadata (RFC 9728) and
    /// answers `401` / `403 insufficient_scope` with `WWW-Authenticate`.
    #[serde(rename = "oauth", rename_all = "camelCase")]
    OAuth {
        /// The authorization server's issuer URL (the tokens' `iss`; https,
        /// or http on loopback). Its keys come from its metadata's `jwks_uri`.
        issuer: String,
        /// This server's canonical URL as clients reach it, e.g.
        /// `https://agents.example.com/mcp`: the tokens' `aud` (RFC 8707
        /// resource) and the metadata's `resource`.
        audience: String,
        /// Scopes every token must carry.
        #[serde(default)]
        scopes: Vec<String>,
        /// Tool-name globs and the scope each needs on top (`research*:
        /// agents:research`): tools a token lacks the scope for are not
        /// listed, and calling one gets `403 insufficient_scope`.
        #[serde(default)]
        tool_scopes: std::collections::BTreeMap<String, String>,
        /// The issuer's JWKS URL, instead of the one its metadata names.
        jwks_uri: Option<String>,
        /// The allowance for clock differences on `exp` and `nbf` (default 30000).
        clock_skew_ms: Option<u64>,
        /// Accept opaque access tokens too: a token that is not a signed JWT
        /// is introspected (RFC 7662) at the issuer with this server's
        /// client credentials.
        introspection: Option<IntrospectionFile>,
        /// The issuer's introspection endpoint, instead of the one its
        /// metadata names (`introspection_endpoint`).
        introspection_endpoint: Option<String>,
    },
}

/// `auth.introspection: { clientId, clientSecret }`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct IntrospectionFile {
    /// This server's client id at the authorization server.
    pub(crate) client_id: String,
    /// Its client secret (use `${VAR}`; never write it into the file).
    pub(crate) client_secret: String,
}

impl std::fmt::Debug for IntrospectionFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionFile")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}
