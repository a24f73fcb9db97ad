//! MCP in both directions: use MCP servers in an agent, and serve an agent
//! over MCP. Every item is here, flat (`lousho::mcp::X`); the headline ones
//! (`McpServer`, `connect_mcp`, `serve_mcp`, `ServeOptions`) are at the crate
//! root.
//!
//! # Using MCP servers
//!
//! Use MCP servers: connect stdio and Streamable HTTP servers and mount their
//! tools as `<server>__<tool>`.
//!
//! Three ways in:
//! - [`AgentBuilder::mcp_server`](crate::AgentBuilder::mcp_server): the agent
//!   connects on `ready()` or its first run and closes on `close()`;
//! - [`connect_mcp`](crate::connect_mcp): connect up front, check [`status`](McpClient::status),
//!   share [`tools`](McpClient::tools) between agents;
//! - [`load_mcp_tools`]: tools from an rmcp client you connected yourself.
//!
//! # Catalog
//!
//! What each server offered when it was last listed (its tool
//! manifest), so a run can offer a server's tools without starting it and
//! connect the server only when one of its tools is called.
//!
//! - After every successful `tools/list` (at connect and after every
//!   `list_changed` refresh) the connection records a [`ToolManifest`]: the
//!   tools with every field, server info, instructions, protocol version,
//!   the time it was fetched and a [`ToolFingerprint`]
//!   per tool. It is keyed by the server's [`ServerIdentity`],
//!   so a changed entry (command, arguments, environment, URL, headers) never
//!   reuses a stale manifest.
//! - A [`ManifestStore`] keeps them: [`DiskManifestStore`] (one JSON file per
//!   identity under the user's cache directory; atomic writes) or
//!   [`MemoryManifestStore`].
//! - With a store in [`ConnectOptions`], a server with a
//!   fresh manifest (younger than the max age, [`DEFAULT_MANIFEST_MAX_AGE`] unless set)
//!   is `Cataloged`: not spawned or dialled at `ready()` or the first run; it
//!   connects (once, shared by concurrent callers) when one of its tools is
//!   first called. A server without one, or with `preload: true`, connects
//!   as without a store.
//!
//! The library never writes a cache unless given a store; the `lousho` CLI
//! uses [`DiskManifestStore::from_env`] by default.
//!
//! # Serving an agent
//!
//! Serve an agent (and chosen tools) over MCP, on stdio or Streamable HTTP.
//!
//! [`serve_mcp`](crate::serve_mcp) exposes the agent as **one tool** taking `{ "message": string }`
//! — named after the server name, sanitised to `[a-zA-Z0-9_-]` — plus any tools
//! you pass in [`ServeOptions::tools`](crate::ServeOptions::tools), each callable as itself.
//!
//! - **Stateless.** Every call of the agent tool is a fresh conversation.
//! - **Cancellation.** Cancelling the request (`notifications/cancelled`, or
//!   over HTTP the client dropping the request) cancels the run: its tools see
//!   their [`ToolContext::cancel`](crate::ToolContext) token fire. A cancelled
//!   request gets no JSON-RPC response (over HTTP its stream just ends).
//! - **Errors.** An agent failure is an `isError: true` result with the reason,
//!   not a JSON-RPC error. A run that would pause for approval (and cannot
//!   ask) is an `isError: true` result naming the tool.
//! - **Progress.** When the client sends a `progressToken`, each tool call and
//!   model turn sends a progress notification with a short message.
//! - **Approvals.** "Needs approval" is decided as for the model's own calls:
//!   the agent's permission rules, then the tool's approval policy.
//!   [`ServeOptions::approvals`](crate::ServeOptions::approvals) says what then
//!   happens: [`ServeApprovals::Deny`] (default: such runs end `isError`, such
//!   tools are not exposed), [`ServeApprovals::Elicit`] (the calling client's
//!   user is asked through an elicitation form) or [`ServeApprovals::Allow`]
//!   (such tools are exposed with **no human gate**); tools the rules deny are
//!   never exposed.
//! - **Annotations.** A tool that needs approval is advertised
//!   `readOnlyHint: false, destructiveHint: true`; a tool's own hints are sent
//!   verbatim; a tool with none sends none. The agent tool is read-only when
//!   every tool the agent can call is.
//! - **stdio.** Only the protocol is written to stdout (log to stderr); EOF on
//!   stdin shuts the server down. Serve stdio from a `current_thread` runtime
//!   for the best latency.
//! - **Tools that talk back.** A direct tool, and any tool the served agent
//!   calls, can report progress, log, elicit and sample through its
//!   [`ToolContext`](crate::ToolContext) (typed errors when the client cannot).
//! - **HTTP.** Binds `127.0.0.1` by default; stateless, POST only (GET/DELETE
//!   get `405`) unless [`HttpOptions::stateful`] keeps a session per client
//!   (then the server can ask the client things while a call runs);
//!   `Host`/`Origin` checked against DNS rebinding (`403`; two `Host` headers
//!   or user info in one: `400`; absolute-form targets checked too); bodies
//!   over [`HttpOptions::max_body_bytes`] get `413`; [`Auth::bearer`] requires
//!   `Authorization: Bearer <token>`, scheme in any case (`401` with
//!   `WWW-Authenticate: Bearer` otherwise). Binding a non-loopback host
//!   without auth logs a warning. At most [`HttpOptions::max_connections`]
//!   connections (past it, `503` with `Retry-After`); slow headers, idle connections and slow bodies are closed
//!   after [`HttpOptions::header_timeout`] / [`HttpOptions::body_timeout`].
//!
//! ```no_run
//! use lousho::mcp::HttpOptions;
//! use lousho::{Agent, ServeOptions, serve_mcp};
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::builder().model("test").prompt("You answer support questions.").build()?;
//! let server = serve_mcp(
//!     ServeOptions::new(agent)
//!         .name("support-bot")
//!         .description("Ask the support agent a question")
//!         .http(HttpOptions::new().port(3920)),
//! )
//! .await?;
//! println!("serving on {}", server.url().unwrap_or_default());
//! server.close().await?;
//! # Ok(()) }
//! ```

// The modules are private: the flat re-exports below are the one path.
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
mod batch_writer;
#[cfg(feature = "mcp-client")]
pub(crate) mod client;
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
pub(crate) mod digest;
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
pub(crate) mod file_uri;
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
mod line_reader;
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
pub(crate) mod log_level;
// Only the client reads responses' media types (the server leaves that to
// rmcp's service); both ask which era a session is in.
#[cfg(feature = "mcp-client")]
pub(crate) mod media_type;
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
pub(crate) mod protocol;
#[cfg(feature = "mcp-server")]
pub(crate) mod server;
#[cfg(feature = "mcp-server")]
mod typed_call;
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
mod usage_meta;

#[cfg(feature = "oauth")]
pub use client::oauth;
// Every public item of `client` and `server`, flat: `lousho::mcp::X` is the
// one path (`McpServer`, `connect_mcp`, `serve_mcp` and `ServeOptions` are at
// the crate root).
/// Icons of served tools, resources, prompts and the server (the same type
/// as [`crate::tool::Icon`]).
pub use crate::tool::{Icon, IconTheme};
#[cfg(feature = "mcp-client")]
pub use client::{
    CompletionTarget, ConfigError, ConnectOptions, DEFAULT_CALL_TIMEOUT, DEFAULT_MANIFEST_MAX_AGE,
    DEFAULT_MAX_SERVER_REQUESTS, DEFAULT_SAMPLING_MAX_REQUESTS, DEFAULT_SAMPLING_MAX_TOKENS,
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_STDERR_CAPTURE_BYTES, DiskManifestStore, ElicitationHandler,
    ElicitationKind, ElicitationRequest, ElicitationResponse, HttpTransport, IDEMPOTENCY_KEY_META,
    IdpSettings, LOG_TARGET, LoadOptions, MANIFEST_FORMAT, MAX_INSTRUCTIONS_BYTES, ManifestOffers,
    ManifestStore, ManifestStoreError, ManifestTool, McpClient, McpConfigFile, McpError, McpPrompt,
    McpPromptArgument, McpResource, McpResourceTemplate, McpRoot, McpServers, McpTool,
    McpTransport, MemoryManifestStore, NameCollision, OAuthGrant, OAuthSettings, OWN_ENV_VARS,
    OnError, ProgressHook, PromptConversation, ResourceContents, ResourceMention, ResourceUpdates,
    SERVER_LOG_TARGET, SPEC_CHAIN_VAR, SamplingError, SamplingHandler, SamplingRequest,
    SamplingResponse, SamplingSettings, SamplingStop, ServerIdentity, ServerProgress, ServerStatus,
    SigningAlgorithm, StderrMode, StdioTransport, ToolFilter, ToolFingerprint, ToolManifest,
    ToolNames, ToolNaming, VariableError, expand_variables, fill_defaults, load_mcp_tools,
    parse_mcp_servers, qualified_name, resource_content, resource_mentions, resource_parts,
    servers_from_value,
};
#[cfg(feature = "mcp-server")]
pub use server::{
    Auth, BearerToken, CallerLimits, CompletionRequest, DEFAULT_APPROVAL_TIMEOUT,
    DEFAULT_BODY_TIMEOUT, DEFAULT_CLIENT_SHARE_PERCENT, DEFAULT_HEADER_TIMEOUT, DEFAULT_HTTP_PATH,
    DEFAULT_HTTP_PORT, DEFAULT_MAX_AGENT_RUNS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CALLS,
    DEFAULT_MAX_LINE_BYTES, DEFAULT_MIN_BODY_RATE, DEFAULT_OAUTH_CLOCK_SKEW, DEFAULT_PAGE_SIZE,
    DefinedPrompt, DefinedResource, DefinedResourceTemplate, HttpOptions, IntoPromptMessages,
    IntoResourceContent, MAX_COMPLETION_VALUES, McpServerHandle, OAuthResource, OAuthResourceError,
    ParseServeApprovalsError, PromptError, PromptMessage, PromptRole, ResourceContent,
    ResourceError, ServeApprovals, ServeError, ServeTransport, ServerCatalog, UriTemplateError,
    default_max_connections, define_prompt, define_prompt_with_context, define_resource,
    define_resource_template,
};
#[cfg(all(feature = "mcp-server", feature = "builtin"))]
pub use server::{MAX_LISTED_FILES, WorkspaceFiles};

/// The rmcp crate (the MCP protocol implementation lousho builds on), for
/// [`load_mcp_tools`] with a client you connected yourself. This is the only
/// place rmcp types reach lousho's public API; rmcp's major version may move
/// faster than lousho's.
pub use rmcp;
