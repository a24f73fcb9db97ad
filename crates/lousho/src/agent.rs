//! The agent: a model, a prompt and tools, run in a loop until a final answer.

mod approval;
mod as_tool;
mod budget;
mod builder;
mod cassette_run;
mod compaction;
mod context;
mod deferral;
mod error;
mod event;
mod execute;
pub mod hooks;
mod journal;
mod lease;
mod offer;
mod output;
mod reply;
mod request;
mod run;
mod run_setup;
#[cfg(feature = "mcp-client")]
mod sampling;
mod session;
mod stream;
mod text_progress;

pub use crate::model::run_record::{RequestUsage, ToolCallRecord};
pub use crate::session::run_state::{RUN_STATE_VERSION, RunState, RunStateError};
pub(crate) use as_tool::ParentRun;
#[cfg(any(feature = "mcp-server", feature = "spec"))]
pub(crate) use as_tool::agent_description;
#[cfg(feature = "mcp-server")]
pub(crate) use as_tool::message_schema;
pub use as_tool::{AgentTool, DEFAULT_MAX_AGENT_DEPTH};
pub(crate) use budget::SessionBudget;
pub use budget::{Budget, BudgetLimit, BudgetScope, Spent};
pub use builder::{AgentBuilder, DEFAULT_MAX_PARALLEL_TOOLS, DEFAULT_MAX_TURNS};
pub use cassette_run::CassetteRunError;
pub use compaction::{
    COMPACTION_PROMPT, Compaction, DEFAULT_SUMMARY_TOKENS, DEFAULT_TOOL_RESULT_TOKENS,
};
pub use context::{SUMMARY_HEADER, TRIM_MARKER};
pub use deferral::{SearchPath, ToolBudget};
pub use error::{AgentError, BuildError};
pub use event::AgentEvent;
#[cfg(feature = "mcp-server")]
pub(crate) use execute::call_one;
pub use output::{DEFAULT_OUTPUT_RETRIES, OutputError, Typed, TypedRunRequest};
pub use reply::{Reply, RunStatus};
pub use request::RunRequest;
use run_setup::Begin;
pub use session::Session;
pub use stream::AgentStream;
pub use text_progress::TEXT_PROGRESS_INTERVAL;
pub(crate) use text_progress::{TextProgress, sleep_until_due};

use crate::model::{Message, Model, ModelSettings, ToolDefinition};
use crate::policy::{ApprovalHandler, CompiledPermissions, Decisions, ToolDecision};
use crate::tool::{ConversationState, Tool, ToolSet, ToolSource};
use futures::StreamExt;
use std::fmt;
use std::sync::Arc;

/// An AI agent: a model, a system prompt and tools.
///
/// Cheap to clone (an `Arc` inside), `Send + Sync`: share one agent between
/// tasks. Build one with [`Agent::builder`].
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use lousho::Agent;
/// let agent = Agent::builder().model("test").prompt("You are terse.").build()?;
/// let reply = agent.send("hello").await?;
/// assert_eq!(reply.text, "You said: hello");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<AgentInner>,
}

pub(crate) struct AgentInner {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) model: Arc<dyn Model>,
    /// The models to fail over to, in order ([`AgentBuilder::models`]);
    /// empty for one model.
    pub(crate) fallbacks: Vec<Arc<dyn Model>>,
    pub(crate) prompt: Option<String>,
    pub(crate) tools: ToolSet,
    pub(crate) tool_definitions: Arc<[ToolDefinition]>,
    pub(crate) sources: Vec<Arc<dyn ToolSource>>,
    pub(crate) max_turns: usize,
    pub(crate) max_parallel_tools: usize,
    pub(crate) context_budget: Option<usize>,
    /// Summaries instead of dropped turns ([`compaction`]).
    pub(crate) compaction: Option<compaction::Compactor>,
    /// Every run's output schema ([`output`]).
    pub(crate) output: Option<output::OutputCheck>,
    /// Every run's budget ([`budget`]).
    pub(crate) budget: Option<Budget>,
    /// Every session's budget, over its runs ([`budget`]).
    pub(crate) session_budget: Option<Budget>,
    pub(crate) settings: ModelSettings,
    /// Hooks around model and tool calls, in order.
    pub(crate) hooks: hooks::Hooks,
    pub(crate) permissions: CompiledPermissions,
    pub(crate) approval_handler: Option<ApprovalHandler>,
    /// Prices for the replies' cost estimates.
    pub(crate) prices: Arc<crate::model::PriceTable>,
    /// The price of each model of the list (by its number), looked up once
    /// at build rather than on every run or turn.
    pub(crate) model_prices: Box<[Option<crate::model::Price>]>,
    /// Whether spans carry prompts, completions and tool arguments/results.
    pub(crate) record_content: bool,
    /// How tool definitions are held back ([`crate::tool::search`]).
    pub(crate) tool_search: crate::tool::search::ToolSearch,
    /// The latest tool offer, reused while the tools stay the same.
    pub(crate) offer: offer::OfferCache,
    /// The skills named in the system prompt (also among `sources`, for
    /// their tools).
    #[cfg(feature = "builtin")]
    pub(crate) skills: Option<Arc<crate::skills::Skills>>,
}

impl AgentInner {
    /// The price of the list's model number `i`, if the table has one.
    pub(crate) fn model_price(&self, i: usize) -> Option<crate::model::Price> {
        self.model_prices.get(i).copied().flatten()
    }

    /// The model list's model number `i` (0: the first model).
    pub(crate) fn model_at(&self, i: usize) -> &Arc<dyn Model> {
        match i.checked_sub(1) {
            None => &self.model,
            Some(j) => self.fallbacks.get(j).unwrap_or(&self.model),
        }
    }

    /// Whether the provider searches deferred tools itself: every model of
    /// the list must (a fallback without it would get deferred tools it
    /// cannot find).
    pub(crate) fn native_tool_search(&self) -> bool {
        self.model.native_tool_search() && self.fallbacks.iter().all(|m| m.native_tool_search())
    }

    /// The system prompt a run sends: the agent's prompt, then the skills'
    /// section when it has skills.
    pub(crate) fn system_prompt(&self) -> Option<String> {
        #[cfg(feature = "builtin")]
        if let Some(skills) = &self.skills {
            return skills.system_prompt(self.prompt.as_deref());
        }
        self.prompt.clone()
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.inner.name)
            .field("model", &self.inner.model.name())
            .field("tools", &self.inner.tools)
            .field(
                "sources",
                &self
                    .inner
                    .sources
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>(),
            )
            .field("max_turns", &self.inner.max_turns)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts building an agent.
    pub fn builder() -> AgentBuilder {
        AgentBuilder::default()
    }

    /// The agent's name, if set.
    pub fn name(&self) -> Option<&str> {
        self.inner.name.as_deref()
    }

    /// The agent's description, if set.
    pub fn description(&self) -> Option<&str> {
        self.inner.description.as_deref()
    }

    /// The model's name (with a model list, the first model's).
    pub fn model_name(&self) -> &str {
        self.inner.model.name()
    }

    /// The names of the models to fail over to, in order (empty for one
    /// model; see [`AgentBuilder::models`]).
    pub fn fallback_model_names(&self) -> Vec<&str> {
        self.inner.fallbacks.iter().map(|m| m.name()).collect()
    }

    /// The system prompt.
    pub fn prompt(&self) -> Option<&str> {
        self.inner.prompt.as_deref()
    }

    /// The tools the model would see now: the agent's own plus those of its
    /// tool sources (MCP servers) that are ready.
    pub fn tools(&self) -> Result<ToolSet, AgentError> {
        offer::current(&self.inner).map(|offer| offer.tools.clone())
    }

    /// What a fresh run's first request would carry: every offered tool's
    /// estimated tokens, which are held back by tool search and the tokens
    /// sent (see [`crate::tool::search`]). Tool sources count as they are
    /// now (a cataloged MCP server's tools from its manifest).
    pub fn tool_budget(&self) -> Result<ToolBudget, AgentError> {
        let offer = offer::current(&self.inner)?;
        Ok(deferral::budget(&self.inner, &offer))
    }

    /// The agent's own tools (without tool sources).
    pub fn own_tools(&self) -> &ToolSet {
        &self.inner.tools
    }

    /// Gets every tool source ready (connects MCP servers, all in parallel).
    /// A no-op without tool sources.
    pub async fn ready(&self) -> Result<(), AgentError> {
        run::ready_sources(&self.inner).await
    }

    /// Closes every tool source (disconnects MCP servers, stops their
    /// processes). Idempotent; a later run reconnects.
    pub async fn close(&self) {
        futures::future::join_all(self.inner.sources.iter().map(|s| s.close())).await;
    }

    /// A run of a fresh conversation: `.await` it for the [`Reply`], or call
    /// [`.stream()`](RunRequest::stream) for its events; set options such as
    /// [`.cancel(token)`](RunRequest::cancel) first.
    pub fn send(&self, input: impl Into<Message>) -> RunRequest {
        RunRequest::new(
            self.inner.clone(),
            Begin::Fresh(vec![input.into()]),
            ConversationState::default(),
            None,
        )
    }

    /// A run of a fresh conversation that starts with `messages` (user and
    /// assistant turns, e.g. an MCP prompt's
    /// [`PromptConversation`](crate::mcp::PromptConversation) messages); the
    /// model answers after the last one.
    pub fn send_messages(&self, messages: impl IntoIterator<Item = Message>) -> RunRequest {
        RunRequest::new(
            self.inner.clone(),
            Begin::Fresh(messages.into_iter().collect()),
            ConversationState::default(),
            None,
        )
    }

    /// Continues a run that paused for approval ([`RunStatus::Interrupted`]),
    /// with answers for its pending calls; `.await` it for the run's next
    /// reply (which may pause again in a later turn), or stream it.
    ///
    /// The agent must be built from the same configuration as the one that
    /// paused (same tools, prompt and model); it may be a new `Agent` in
    /// another process, with the state read back by [`RunState::from_json`].
    /// The paused turn's calls that already ran are not run again; a pending
    /// call without an answer is denied. See [`crate::policy`] for the
    /// whole decision order.
    pub fn resume(&self, state: RunState, decisions: impl Into<Decisions>) -> RunRequest {
        let conversation = ConversationState::from_snapshot(state.conversation_state.clone());
        RunRequest::new(
            self.inner.clone(),
            Begin::Resume(Box::new(state), decisions.into()),
            conversation,
            None,
        )
    }

    /// What happens to a call of the tool `name` before any input is seen:
    /// permission rules, then the tool's approval policy (a `can_use_tool`
    /// callback may still decide otherwise per call). A name no tool has
    /// is `Deny` with [`DecisionReason::UnknownTool`](crate::policy::DecisionReason::UnknownTool)
    /// unless a rule matches it.
    pub fn tool_decision(&self, name: &str) -> ToolDecision {
        let tool = self.inner.tools.get(name).cloned().or_else(|| {
            self.inner
                .sources
                .iter()
                .flat_map(|s| s.tools())
                .find(|t| t.spec().name == name)
        });
        crate::policy::tool_decision(
            &self.inner.permissions,
            name,
            tool.as_ref().map(|t| t.spec()),
        )
    }

    /// The decision for `spec`'s tool before any input is seen (as
    /// [`tool_decision`](Agent::tool_decision), for a tool in hand):
    /// what `serve_mcp` exposes and advertises.
    #[cfg(feature = "mcp-server")]
    pub(crate) fn decision_for(&self, spec: &crate::tool::ToolSpec) -> ToolDecision {
        crate::policy::tool_decision(&self.inner.permissions, &spec.name, Some(spec))
    }

    /// Whether the agent has tool sources (MCP servers) besides its own tools.
    #[cfg(feature = "mcp-server")]
    pub(crate) fn has_tool_sources(&self) -> bool {
        !self.inner.sources.is_empty()
    }

    /// Whether an approval handler answers questions (without one, a run
    /// that needs an approval pauses).
    pub fn has_approval_handler(&self) -> bool {
        self.inner.approval_handler.is_some()
    }

    /// A multi-turn conversation that keeps its history (and tool state).
    pub fn session(&self) -> Session {
        Session::new(self.clone())
    }

    /// The stored conversation `id` in `store` (created empty if there is
    /// none): each `send` sees its history, and each completed turn is
    /// appended to the store. See [`crate::session`].
    pub async fn open_session(
        &self,
        store: Arc<dyn crate::session::SessionStore>,
        id: impl Into<String>,
    ) -> Result<Session, crate::session::StoreError> {
        Session::open(self.clone(), store, id.into()).await
    }

    /// Looks up one of the agent's own tools by name.
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.inner.tools.get(name)
    }
}

impl AgentStream {
    /// Drives the stream to its end and returns the reply.
    pub(crate) async fn into_reply(mut self) -> Result<Reply, AgentError> {
        while let Some(event) = self.next().await {
            if let AgentEvent::Done(reply) = event? {
                return Ok(*reply);
            }
        }
        Err(AgentError::Internal("the run ended without a reply".into()))
    }
}
