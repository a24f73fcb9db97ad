//! # lousho
//!
//! Build AI agents in Rust, with first-class [Model Context Protocol] support
//! in both directions: an agent **uses** MCP servers (their tools mounted as
//! `<server>__<tool>`, gated by approvals), and an agent **is** an MCP server
//! that Claude Code, Cursor and other MCP clients call.
//!
//! ```
//! use lousho::{Agent, define_tool};
//! use serde::Deserialize;
//!
//! #[lousho::tool_input] // derives JsonSchema; no `schemars` dependency needed
//! #[derive(Deserialize)]
//! struct Search {
//!     /// What to look for.
//!     query: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let search_docs = define_tool("search_docs", "Search the docs", |input: Search| async move {
//!     format!("results for {}", input.query)
//! })
//! .read_only();
//!
//! // "test" is the offline TestModel: it calls every tool once, then reports.
//! let agent = Agent::builder()
//!     .model("test")
//!     .prompt("You answer support questions.")
//!     .tool(search_docs)
//!     .build()?;
//! let reply = agent.send("How do I reset my password?").await?;
//! assert_eq!(reply.tool_calls.len(), 1);
//! assert!(reply.text.contains("results for"));
//! # Ok(()) }
//! ```
//!
//! ## Where things are
//!
//! | concept | items |
//! | --- | --- |
//! | agents | [`Agent`], [`AgentBuilder`], [`Session`], [`Reply`], [`AgentEvent`], [`AgentError`]; `agent.send(..)` returns an [`agent::RunRequest`] (`.await` it or `.stream()` it); the rest in [`agent`] |
//! | tools | [`Tool`], [`define_tool`], [`ToolSet`], [`ToolAnnotations`], [`ToolOutput`], [`ToolContext`], [`tool_input`](macro@tool_input), [`async_trait`](macro@async_trait); the rest in [`tool`] |
//! | cassettes | [`cassette`]: record a run (model and MCP traffic) once, replay it offline in tests; `AgentBuilder::replay` |
//! | models | [`Model`]; providers, messages and `resolve_model` in [`model`]; `model::testing` has the offline `TestModel` and `ScriptedModel` |
//! | approval | [`Approval`], [`Permissions`], [`RunState`]; answers and rules in [`policy`], which also has the decision order |
//! | MCP | `McpServer`, `connect_mcp`, `serve_mcp`, `ServeOptions`; the rest in `mcp` |
//! | built-in tools | `builtin` (`fs_tools`, `todo_tools`, `clock_tools`) |
//! | skills | `skills` (`LocalSkills`, `SkillSource`); `AgentBuilder::skills`, `ServeOptions::skills` |
//! | sessions | [`session`]: the `SessionStore` trait, `MemoryStore`, `SqliteStore`, `PostgresStore`; [`Agent::open_session`] |
//!
//! ## Cargo features
//!
//! Each layer can be left out; all but the session databases are on by
//! default. With none, lousho is
//! the agent loop, your own tools and the model providers.
//!
//! | feature | what it adds |
//! | --- | --- |
//! | `mcp-client` | use MCP servers: `connect_mcp`, `AgentBuilder::mcp_server`, `load_mcp_tools` |
//! | `mcp-server` | serve an agent over MCP: `serve_mcp` (stdio, Streamable HTTP) |
//! | `oauth` | OAuth sign-in for HTTP MCP servers (`mcp::oauth`, `ConnectOptions::tokens`); implies `mcp-client`; without it an `oauth` entry fails to connect with `McpError::MissingFeature` |
//! | `builtin` | the built-in tools: `fs_tools`, `todo_tools`, `clock_tools`; Agent Skills (`skills`) |
//! | `spec` | agent spec files (`spec`); servers and built-ins in a file need their features |
//! | `sqlite` (off by default) | `session::SqliteStore`: sessions in a SQLite file (bundled SQLite, a C build) |
//! | `postgres` (off by default) | `session::PostgresStore`: sessions in PostgreSQL, shared by replicas |
//!
//! [Model Context Protocol]: https://modelcontextprotocol.io

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agent;
#[cfg(feature = "builtin")]
pub mod builtin;
pub mod cassette;
mod error_chain;
#[cfg(any(feature = "spec", feature = "mcp-client"))]
mod interpolate;
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
pub mod mcp;
pub mod model;
pub mod policy;
pub mod session;
#[cfg(feature = "builtin")]
pub mod skills;
#[cfg(feature = "spec")]
pub mod spec;
mod sync;
pub mod telemetry;
pub mod tool;

// The headline names, one path each; everything else is reachable through
// its module (`lousho::agent::…`, `lousho::model::…`, `lousho::policy::…`,
// `lousho::tool::…`, `lousho::mcp::…`).
#[doc(inline)]
pub use agent::{Agent, AgentBuilder, AgentError, AgentEvent, Reply, RunState, Session};
#[cfg(feature = "mcp-client")]
#[doc(inline)]
pub use mcp::client::config::McpServer;
#[cfg(feature = "mcp-client")]
#[doc(inline)]
pub use mcp::client::connect_mcp;
#[cfg(feature = "mcp-server")]
#[doc(inline)]
pub use mcp::server::{ServeOptions, serve_mcp};
#[doc(inline)]
pub use model::Model;
#[doc(inline)]
pub use policy::{Approval, Permissions};
#[doc(inline)]
pub use tool::{Tool, ToolAnnotations, ToolContext, ToolOutput, ToolSet, define_tool};

/// Implement [`Tool`] (or [`ToolSource`](tool::ToolSource)) on your own type
/// with `#[lousho::async_trait]`.
pub use async_trait::async_trait;
/// Derives [`JsonSchema`] for a tool's input through lousho's own
/// [`schemars`], so your crate needs no `schemars` dependency:
///
/// ```
/// #[lousho::tool_input]
/// #[derive(serde::Deserialize)]
/// struct Search {
///     /// What to look for (the field docs become the schema's descriptions).
///     query: String,
///     #[schemars(range(min = 1, max = 50))]
///     limit: Option<u32>,
/// }
/// # let schema = lousho::schemars::schema_for!(Search);
/// # assert_eq!(schema.get("required"), Some(&serde_json::json!(["query"])));
/// ```
///
/// It expands to `#[derive(lousho::JsonSchema)]` plus
/// `#[schemars(crate = "::lousho::schemars")]`; other `#[schemars(..)]` and
/// `#[serde(..)]` attributes work as usual. It takes no arguments.
pub use lousho_macros::tool_input;
/// The `schemars` crate, for `#[schemars(...)]` attributes on tool inputs.
pub use schemars;
/// The trait a tool's input implements (re-exported from `schemars`). Derive
/// it with [`#[lousho::tool_input]`](macro@tool_input): `#[derive(JsonSchema)]`
/// itself writes `schemars::` paths, so it needs `schemars` as a dependency of
/// your crate (or `#[schemars(crate = "lousho::schemars")]` on the type).
pub use schemars::JsonSchema;
/// The cancellation token type used by [`RunRequest::cancel`](agent::RunRequest::cancel)
/// and [`ToolContext`].
pub use tokio_util::sync::CancellationToken;

/// The README's examples, compiled and run as doc tests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// Every ```rust block of docs/*.md, compiled (and run unless `no_run`) as
/// doc tests; each page under the features its examples need.
#[cfg(doctest)]
pub mod docs_doctests {
    #[doc = include_str!("../../../docs/approvals.md")]
    pub struct Approvals;
    #[cfg(feature = "builtin")]
    #[doc = include_str!("../../../docs/builtins.md")]
    pub struct Builtins;
    #[doc = include_str!("../../../docs/cli.md")]
    pub struct Cli;
    #[cfg(feature = "mcp-client")]
    #[doc = include_str!("../../../docs/mcp-client.md")]
    pub struct McpClient;
    #[cfg(feature = "oauth")]
    #[doc = include_str!("../../../docs/oauth.md")]
    pub struct OAuth;
    #[cfg(feature = "otel")]
    #[doc = include_str!("../../../docs/observability.md")]
    pub struct Observability;
    #[doc = include_str!("../../../docs/providers.md")]
    pub struct Providers;
    #[doc = include_str!("../../../docs/security.md")]
    pub struct Security;
    #[doc = include_str!("../../../docs/sessions.md")]
    pub struct Sessions;
    #[cfg(feature = "mcp-client")]
    #[doc = include_str!("../../../docs/testing.md")]
    pub struct Testing;
    #[cfg(feature = "mcp-server")]
    #[doc = include_str!("../../../docs/serving.md")]
    pub struct Serving;
}

/// The common imports: `use lousho::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Agent, AgentEvent, Approval, JsonSchema, Reply, Tool, ToolAnnotations, ToolContext,
        ToolOutput, async_trait, define_tool, tool_input,
    };
}
