//! # lousho
//!
//! Build AI agents in Rust, with first-class [Model Context Protocol] support
//! in both directions: an agent **uses** MCP servers (their tools mounted as
//! `<server>__<tool>`, gated by approvals), and an agent **is** an MCP server
//! that Claude Code, Cursor and other MCP clients call.
//!
//! ```
//! use lousho::{Agent, define_tool, JsonSchema};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
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
//! | agents | [`Agent`], [`AgentBuilder`], [`RunRequest`] (`agent.send(..)`: `.await` it or `.stream()` it), [`Session`], [`Reply`], [`AgentEvent`] |
//! | tools | [`Tool`], [`define_tool`], [`ToolSet`], [`ToolAnnotations`], [`ToolOutput`] |
//! | models | [`Model`], [`TestModel`], [`ScriptedModel`], [`resolve_model`] |
//! | approval | [`Approval`], [`Permissions`], [`ApprovalRequest`], [`Decisions`], [`RunState`] — the decision order is in [`policy`] |
//! | built-in tools | [`fs_tools`], [`todo_tools`], [`clock_tools`], [`builtin`] |
//!
//! [Model Context Protocol]: https://modelcontextprotocol.io

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agent;
#[cfg(feature = "builtin")]
pub mod builtin;
mod error_chain;
#[cfg(any(feature = "mcp-client", feature = "mcp-server"))]
pub mod mcp;
pub mod model;
pub mod policy;
#[cfg(feature = "spec")]
pub mod spec;
pub mod tool;

pub use agent::{
    Agent, AgentBuilder, AgentError, AgentEvent, AgentStream, BuildError, Reply, RunRequest,
    RunState, RunStateError, RunStatus, Session, ToolCallRecord,
};
#[cfg(feature = "builtin")]
pub use builtin::{Workspace, clock_tools, fs_tools, todo_tools};
#[cfg(feature = "mcp-client")]
pub use mcp::{McpServer, connect_mcp, load_mcp_tools};
#[cfg(feature = "mcp-server")]
pub use mcp::{ServeOptions, serve_mcp};
pub use model::{
    Anthropic, Message, Model, ModelError, ModelEvent, ModelRequest, OpenAi, ScriptedModel,
    ScriptedTurn, TestModel, ToolCall, Usage, resolve_model,
};
pub use policy::{
    Approval, ApprovalDecision, ApprovalRequest, Decision, Decisions, PermissionResult,
    PermissionRule, Permissions, ToolDecision,
};
pub use tool::{
    Content, ConversationState, DefinedTool, IntoTools, Tool, ToolAnnotations, ToolContext,
    ToolError, ToolOutput, ToolSet, ToolSpec, define_tool, define_tool_with_context,
};

/// The `schemars` crate, for `#[schemars(...)]` attributes on tool inputs.
pub use schemars;
/// Derive this on tool inputs (re-exported from `schemars`).
pub use schemars::JsonSchema;
/// The cancellation token type used by [`RunRequest::cancel`] and [`ToolContext`].
pub use tokio_util::sync::CancellationToken;

/// The README's examples, compiled and run as doc tests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The common imports: `use lousho::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Agent, AgentEvent, Approval, JsonSchema, Reply, Tool, ToolAnnotations, ToolOutput,
        define_tool,
    };
}
