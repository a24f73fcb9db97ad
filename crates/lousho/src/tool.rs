//! Tools: what an agent can call.
//!
//! A [`Tool`] pairs a [`ToolSpec`] (name, description, JSON Schema, MCP-shaped
//! [`ToolAnnotations`], [`Approval`] policy, [`ToolOrigin`]) with an async `call`. Most tools are
//! made with [`define_tool`] from a closure over a typed input; tools that
//! already speak JSON use [`DefinedTool::from_json`].
//!
//! A [`ToolSet`] is a map of tools keyed by name, and [`IntoTools`] lets
//! `AgentBuilder::tools` take one tool, a `Vec`, a `ToolSet` or a tuple mixing
//! them.

mod annotations;
mod approval;
mod context;
mod define;
mod error;
mod icon;
pub(crate) mod name;
mod origin;
mod output;
/// Public as `lousho::policy::{PinMode, PinState, ToolPin}`.
pub(crate) mod pin;
mod schema;
pub mod search;
mod set;
mod source;
mod spec;
/// Public as `lousho::policy::Trust`.
pub(crate) mod trust;

pub use annotations::ToolAnnotations;
pub use approval::{Approval, CustomApproval, ParseApprovalError};
pub(crate) use context::{CallerRun, ClientChannel};
pub use context::{
    ClientError, ConversationState, Elicitation, LogLevel, SamplingMessage, SamplingReply,
    SamplingRequest, SamplingRole, ToolContext,
};
pub use define::{
    DefinedTool, IntoToolOutput, Json, ToolHandler, define_tool, define_tool_with_context,
};
pub use error::ToolError;
pub use icon::{Icon, IconTheme};
pub use name::{MAX_TOOL_NAME_LEN, is_valid_tool_name, sanitize_tool_name};
pub use origin::ToolOrigin;
pub use output::{Content, ToolOutput};
pub(crate) use schema::is_object_schema;
pub use schema::schema_for;
pub use set::{DuplicateToolError, IntoTools, ToolSet};
pub use source::{ToolSource, ToolSourceError};
pub use spec::ToolSpec;

use async_trait::async_trait;

/// Something an agent can call.
///
/// Implement it directly for full control, or use [`define_tool`] /
/// [`DefinedTool::from_json`]. A failing tool returns `Err(ToolError)` (or an
/// [`ToolOutput::error`]); the agent turns either into an error result the
/// model sees — a tool never crashes a run.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// Name, description, schemas, annotations and approval policy.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool with the model's arguments.
    ///
    /// `ctx.cancel` fires when the run is cancelled; long tools should watch it.
    async fn call(
        &self,
        input: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError>;
}
