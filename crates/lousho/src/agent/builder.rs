use super::{Agent, AgentInner, BuildError};
use crate::model::{ModelRef, ModelSettings, ToolDefinition};
use crate::policy::{
    ApprovalDecision, ApprovalHandler, ApprovalRequest, PermissionResult, PermissionRule,
    Permissions, approval_handler,
};
use crate::tool::is_object_schema;
use crate::tool::{IntoTools, Tool, ToolSet, ToolSource, is_valid_tool_name};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

/// The default limit on model turns per run.
pub const DEFAULT_MAX_TURNS: usize = 20;
/// The default limit on tool calls running at once.
pub const DEFAULT_MAX_PARALLEL_TOOLS: usize = 8;

/// Builds an [`Agent`]. Every method consumes and returns the builder;
/// [`build`](AgentBuilder::build) validates everything and returns a typed error.
#[derive(Default)]
#[must_use]
pub struct AgentBuilder {
    name: Option<String>,
    description: Option<String>,
    model: Option<ModelRef>,
    fallbacks: Vec<ModelRef>,
    prompt: Option<String>,
    tools: Vec<Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
    max_turns: Option<usize>,
    max_parallel_tools: Option<usize>,
    context_budget: Option<usize>,
    compaction: Option<super::Compaction>,
    budget: Option<super::Budget>,
    session_budget: Option<super::Budget>,
    output: Option<crate::model::OutputSchema>,
    settings: ModelSettings,
    hooks: super::hooks::Hooks,
    permissions: Permissions,
    approval_handler: Option<ApprovalHandler>,
    prices: Option<crate::model::PriceTable>,
    record_content: Option<bool>,
    tool_search: crate::tool::search::ToolSearch,
    cassette: Option<crate::cassette::Cassette>,
    #[cfg(feature = "mcp-client")]
    mcp_servers: crate::mcp::McpServers,
    #[cfg(feature = "mcp-client")]
    mcp_options: crate::mcp::ConnectOptions,
    #[cfg(feature = "builtin")]
    skill_folders: Vec<std::path::PathBuf>,
    #[cfg(feature = "builtin")]
    skill_sources: Vec<Arc<dyn crate::skills::SkillSource>>,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("name", &self.name)
            .field("tools", &self.tools.len())
            .field("sources", &self.sources.len())
            .field("max_turns", &self.max_turns)
            .field("max_parallel_tools", &self.max_parallel_tools)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// The model: a `"vendor/model"` string (`"openai/gpt-4o-mini"`,
    /// `"anthropic/…"`, `"openrouter/<vendor>/<model>"`, `"ollama/…"`, `"test"`)
    /// or a [`Model`](crate::Model) value (a provider, a [`ScriptedModel`](crate::model::testing::ScriptedModel)).
    pub fn model(mut self, model: impl Into<ModelRef>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// A model list: the first model answers; when it fails with a rate
    /// limit, an overload or a conversation too long for it (at once), or
    /// with an error still failing after its provider's retries (see
    /// [`ModelError::fails_over`](crate::model::ModelError::fails_over)),
    /// the next one is asked, and so on. Replaces the model and earlier
    /// fallbacks. Which model answered is in
    /// [`Reply::model`](crate::Reply::model), each request's in
    /// [`Reply::requests`](crate::Reply::requests), and on the `chat` span
    /// as `gen_ai.response.model`; an
    /// [`AgentEvent::ModelFailover`](crate::AgentEvent::ModelFailover) tells
    /// of each failover. Authentication errors and bad requests do not fail
    /// over. A streamed turn fails over only before any of its text reached
    /// the caller. Spec files: `model: [anthropic/…, openai/…]`.
    ///
    /// ```
    /// use lousho::Agent;
    /// use lousho::model::OpenAi;
    ///
    /// let agent = Agent::builder()
    ///     .models(["test/primary", "test/fallback"])
    ///     .build()?;
    /// assert_eq!(agent.fallback_model_names(), ["test/fallback"]);
    ///
    /// // Mixed kinds: a model string, then a provider builder.
    /// let local = OpenAi::compatible("http://127.0.0.1:8000/v1", "qwen2.5");
    /// let agent = Agent::builder().model("test").fallback_model(local).build()?;
    /// # Ok::<(), lousho::agent::BuildError>(())
    /// ```
    pub fn models<I, M>(mut self, models: I) -> Self
    where
        I: IntoIterator<Item = M>,
        M: Into<ModelRef>,
    {
        let mut models = models.into_iter().map(Into::into);
        self.model = models.next();
        self.fallbacks = models.collect();
        self
    }

    /// Adds a model to fail over to, after the [`model`](Self::model) and
    /// the fallbacks added before (see [`models`](Self::models)).
    pub fn fallback_model(mut self, model: impl Into<ModelRef>) -> Self {
        self.fallbacks.push(model.into());
        self
    }

    /// The system prompt.
    pub fn prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = Some(prompt.into());
        self
    }

    /// A name (used when the agent is served over MCP).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// A description (used when the agent is served over MCP).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds one tool.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Adds tools: one tool, a `Vec`, a [`ToolSet`], or a tuple mixing them
    /// (`.tools((search_docs, mcp.tools()))`). Can be called more than once.
    pub fn tools(mut self, tools: impl IntoTools) -> Self {
        self.tools.extend(tools.into_tools());
        self
    }

    /// Adds a source of tools that come and go at run time (MCP servers).
    pub fn tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.sources.push(source);
        self
    }

    /// Adds an MCP server under `name`; its tools appear as `<name>__<tool>`
    /// (or as set by [`mcp_options`](Self::mcp_options)). Servers connect on
    /// [`Agent::ready`] or the first run, all in parallel, and
    /// [`Agent::close`] stops them (a later run reconnects).
    #[cfg(feature = "mcp-client")]
    pub fn mcp_server(mut self, name: impl Into<String>, server: crate::McpServer) -> Self {
        self.mcp_servers.insert(name.into(), server);
        self
    }

    /// Adds MCP servers (the `mcpServers` map).
    #[cfg(feature = "mcp-client")]
    pub fn mcp_servers<I, N>(mut self, servers: I) -> Self
    where
        I: IntoIterator<Item = (N, crate::McpServer)>,
        N: Into<String>,
    {
        self.mcp_servers
            .extend(servers.into_iter().map(|(n, s)| (n.into(), s)));
        self
    }

    /// How the agent's own MCP servers ([`mcp_server`](Self::mcp_server))
    /// connect, the options [`connect_mcp`](crate::connect_mcp) takes:
    /// tool naming (`mcp__<server>__<tool>` with
    /// [`ToolNaming::McpPrefixed`](crate::mcp::ToolNaming::McpPrefixed)),
    /// `lazy`, `on_error` (with [`OnError::Skip`](crate::mcp::OnError::Skip)
    /// a server that cannot connect is left out of the run with a warning and
    /// tried again on the next one), the OAuth token store and the
    /// elicitation handler. Replaces earlier options.
    ///
    /// ```
    /// use lousho::Agent;
    /// use lousho::mcp::{ConnectOptions, OnError, ToolNaming};
    /// let agent = Agent::builder()
    ///     .model("test")
    ///     .mcp_options(
    ///         ConnectOptions::new()
    ///             .naming(ToolNaming::McpPrefixed)
    ///             .on_error(OnError::Skip),
    ///     )
    ///     .build()?;
    /// # Ok::<(), lousho::agent::BuildError>(())
    /// ```
    #[cfg(feature = "mcp-client")]
    pub fn mcp_options(mut self, options: crate::mcp::ConnectOptions) -> Self {
        self.mcp_options = options;
        self
    }

    /// Keeps the agent's MCP servers' tool manifests in `store`: a server
    /// with a fresh manifest is not started at `ready()` or the first run;
    /// the model is offered its tools from the manifest and the server
    /// connects when one of them is first called (see
    /// [the catalog](crate::mcp#catalog)). Without a store (the
    /// default) servers connect on `ready()` or the first run and nothing is
    /// written. Same as [`ConnectOptions::manifests`](crate::mcp::ConnectOptions::manifests);
    /// a later [`mcp_options`](Self::mcp_options) replaces it.
    #[cfg(feature = "mcp-client")]
    pub fn manifests(mut self, store: Arc<dyn crate::mcp::client::ManifestStore>) -> Self {
        self.mcp_options.manifests = Some(store);
        self
    }

    /// The most model turns one run may take (default 20).
    pub fn max_turns(mut self, max_turns: usize) -> Self {
        self.max_turns = Some(max_turns);
        self
    }

    /// The most tokens (estimated) of conversation to send the model in one
    /// request, system prompt and tool definitions included. Default: no
    /// limit.
    ///
    /// A longer conversation (a stored session that grew) is sent without
    /// its oldest turns. The system prompt and the tools always go; then the
    /// newest turns that fit, cut only before a user message, so a tool call
    /// never goes without its result and the input starts with a user
    /// message; the newest turn always goes, even past the budget. Tokens are
    /// estimated as one per 4 bytes of each message's JSON (leave headroom).
    /// Only what is sent shrinks: the reply, the session and its store keep
    /// every message. Spec files: `contextBudget`.
    pub fn context_budget(mut self, tokens: usize) -> Self {
        self.context_budget = Some(tokens);
        self
    }

    /// Summarise older messages instead of leaving them out when a
    /// conversation passes the [`context_budget`](Self::context_budget)
    /// (which it needs): tool results are trimmed first, the first message
    /// (the task) stays, the summary is kept in the conversation (and the
    /// session) naming what it replaces. See [`Compaction`](super::Compaction).
    /// Spec files: `compaction`.
    pub fn compaction(mut self, compaction: super::Compaction) -> Self {
        self.compaction = Some(compaction);
        self
    }

    /// Limits on what each run may spend: tokens, cost, wall time, model
    /// turns, tool calls (see [`Budget`](crate::agent::Budget)). A run that
    /// reaches one ends with
    /// [`RunStatus::BudgetExceeded`](crate::agent::RunStatus::BudgetExceeded).
    /// [`RunRequest::budget`](crate::agent::RunRequest::budget) replaces it
    /// for one run. Spec files: `budget`.
    pub fn budget(mut self, budget: super::Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Limits on what all runs of one session together may spend: each
    /// [`Session`](crate::Session) of the agent starts with it
    /// ([`Session::budget`](crate::Session::budget) replaces it), and a
    /// served agent ([`serve_mcp`](crate::serve_mcp)) counts it over the
    /// calls of one MCP session. A run that reaches it ends with
    /// [`RunStatus::BudgetExceeded`](crate::agent::RunStatus::BudgetExceeded)
    /// and scope [`BudgetScope::Session`](crate::agent::BudgetScope::Session).
    /// Spec files: `sessionBudget`.
    pub fn session_budget(mut self, budget: super::Budget) -> Self {
        self.session_budget = Some(budget);
        self
    }

    /// A JSON Schema every run's final answer must match (see
    /// [`RunRequest::output`](crate::agent::RunRequest::output) for a typed
    /// one): sent as the provider's structured output, the answer checked
    /// (with the `mcp-client` feature, against the schema; else as JSON)
    /// and kept in [`Reply::output`](crate::Reply::output). Spec files:
    /// `output: { schema }`.
    pub fn output_schema(mut self, schema: crate::model::OutputSchema) -> Self {
        self.output = Some(schema);
        self
    }

    /// The most tool calls that run at once within a turn (default 8).
    pub fn max_parallel_tools(mut self, n: usize) -> Self {
        self.max_parallel_tools = Some(n);
        self
    }

    /// Sampling settings sent with every request.
    pub fn settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Adds a hook around the run's model and tool calls (see
    /// [`hooks`](crate::agent::hooks)); hooks run in the order added.
    pub fn hook(mut self, hook: impl super::hooks::Hook) -> Self {
        self.hooks.0.push(Arc::new(hook));
        self
    }

    /// Permission rules and the `can_use_tool` callback (replaces earlier
    /// ones). See [`crate::policy`] for the decision order.
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.permissions = permissions;
        self
    }

    /// Adds one permission rule (`PermissionRule::deny("mcp__postgres__exec")`).
    pub fn permission_rule(mut self, rule: PermissionRule) -> Self {
        self.permissions = self.permissions.rule(rule);
        self
    }

    /// Sets the `can_use_tool` callback: `(tool name, input) -> PermissionResult`,
    /// asked for every call no permission rule matched.
    pub fn can_use_tool<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PermissionResult> + Send + 'static,
    {
        self.permissions = self.permissions.can_use_tool(f);
        self
    }

    /// Sets the approval handler: asked for every call that needs approval,
    /// it answers approve or deny. Without one, such a run pauses and
    /// returns [`RunStatus::Interrupted`](crate::agent::RunStatus::Interrupted).
    pub fn approval_handler<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ApprovalDecision> + Send + 'static,
    {
        self.approval_handler = Some(approval_handler(f));
        self
    }

    /// The prices for the cost estimate on every [`Reply`](crate::Reply)
    /// (default: [`PriceTable::builtin`](crate::model::PriceTable::builtin);
    /// [`PriceTable::empty`](crate::model::PriceTable::empty) for none).
    pub fn prices(mut self, prices: crate::model::PriceTable) -> Self {
        self.prices = Some(prices);
        self
    }

    /// Whether this agent's spans carry content: the prompt, the messages,
    /// the model's output, tool arguments and results (the conventions'
    /// opt-in attributes). Off by default, or as
    /// [`CAPTURE_CONTENT_VAR`](crate::telemetry::CAPTURE_CONTENT_VAR) says.
    pub fn record_content(mut self, on: bool) -> Self {
        self.record_content = Some(on);
        self
    }

    /// Tool search: when and which tool definitions are held back from the
    /// model's requests, a `tool_search` tool offered instead (default:
    /// `auto`, MCP tools deferred above 30 tools or 10 % of the model's
    /// context). See [`crate::tool::search`].
    ///
    /// ```
    /// use lousho::Agent;
    /// use lousho::tool::search::{ToolSearch, ToolSearchMode};
    /// let agent = Agent::builder()
    ///     .model("test")
    ///     .tool_search(ToolSearch::new(ToolSearchMode::On).always_loaded(["files__read_file"]))
    ///     .build()?;
    /// # Ok::<(), lousho::agent::BuildError>(())
    /// ```
    pub fn tool_search(mut self, search: crate::tool::search::ToolSearch) -> Self {
        self.tool_search = search;
        self
    }

    /// Skills from a local folder ([`crate::skills`]): the folder is one
    /// skill (it holds a `SKILL.md`) or holds skills (sub-folders with a
    /// `SKILL.md`). Only their names and descriptions go into the system
    /// prompt; the model loads a skill with the `load_skill` tool and reads
    /// its files with `read_skill_file`. The folder is read at
    /// [`build`](Self::build) (a broken `SKILL.md` is a
    /// [`BuildError::Skills`]). An agent's MCP servers that offer the Skills
    /// extension add theirs, named `<server>:<name>`.
    ///
    /// ```no_run
    /// let agent = lousho::Agent::builder().model("test").skills("./skills").build()?;
    /// # Ok::<(), lousho::agent::BuildError>(())
    /// ```
    #[cfg(feature = "builtin")]
    pub fn skills(mut self, folder: impl Into<std::path::PathBuf>) -> Self {
        self.skill_folders.push(folder.into());
        self
    }

    /// Skills from a source of your own (see [`skills`](Self::skills)).
    #[cfg(feature = "builtin")]
    pub fn skill_source(mut self, source: Arc<dyn crate::skills::SkillSource>) -> Self {
        self.skill_sources.push(source);
        self
    }

    /// Records the agent's model traffic into `cassette`, or replays it
    /// from it (see [`cassette`](crate::cassette)): recording wraps the
    /// model; replaying answers from the file and never builds the model
    /// (no key needed; the model may be left unset). The agent's own MCP
    /// servers ([`mcp_server`](Self::mcp_server)) are recorded or replayed
    /// too. [`record`](Self::record) and [`replay`](Self::replay) do a
    /// whole run.
    pub fn cassette(mut self, cassette: crate::cassette::Cassette) -> Self {
        self.cassette = Some(cassette);
        self
    }

    /// The model, through the cassette when there is one.
    fn built_model(
        model: Option<ModelRef>,
        cassette: Option<&crate::cassette::Cassette>,
    ) -> Result<Arc<dyn crate::Model>, BuildError> {
        if let Some(replay) = cassette.and_then(|c| c.replay_model()) {
            return Ok(replay);
        }
        let real = model.ok_or(BuildError::MissingModel)?.resolve()?;
        Ok(match cassette {
            Some(c) => c.record_model(real),
            None => real,
        })
    }

    /// Validates and builds the agent.
    pub fn build(self) -> Result<Agent, BuildError> {
        let model = Self::built_model(self.model, self.cassette.as_ref())?;
        let compaction = match self.compaction {
            None => None,
            Some(_) if self.context_budget.is_none() => {
                return Err(BuildError::InvalidSetting(
                    "compaction needs a context budget: set context_budget (spec files: contextBudget)"
                        .into(),
                ));
            }
            Some(c) => Some(c.build(|m| Self::built_model(Some(m), self.cassette.as_ref()))?),
        };
        // A replayed run answers from its cassette: no fallback is asked.
        let replaying = self
            .cassette
            .as_ref()
            .is_some_and(crate::cassette::Cassette::is_replaying);
        let fallbacks = if replaying {
            Vec::new()
        } else {
            self.fallbacks
                .into_iter()
                .map(|m| Self::built_model(Some(m), self.cassette.as_ref()))
                .collect::<Result<Vec<_>, _>>()?
        };
        let max_turns = self.max_turns.unwrap_or(DEFAULT_MAX_TURNS);
        if max_turns == 0 {
            return Err(BuildError::InvalidSetting(
                "max_turns must be at least 1".into(),
            ));
        }
        let max_parallel_tools = self
            .max_parallel_tools
            .unwrap_or(DEFAULT_MAX_PARALLEL_TOOLS);
        if max_parallel_tools == 0 {
            return Err(BuildError::InvalidSetting(
                "max_parallel_tools must be at least 1".into(),
            ));
        }
        let mut tools = ToolSet::new();
        for tool in self.tools {
            validate_tool(tool.as_ref())?;
            tools.insert(tool)?;
        }
        let permissions = self.permissions.compile()?;
        let tool_definitions = definitions(&tools, &permissions);
        #[cfg_attr(not(feature = "mcp-client"), allow(unused_mut))]
        let mut sources = self.sources;
        #[cfg(feature = "builtin")]
        let mut skill_sources = Vec::new();
        #[cfg(feature = "builtin")]
        for folder in &self.skill_folders {
            skill_sources.push(Arc::new(crate::skills::LocalSkills::open(folder)?)
                as Arc<dyn crate::skills::SkillSource>);
        }
        #[cfg(feature = "builtin")]
        skill_sources.extend(self.skill_sources);
        #[cfg(feature = "mcp-client")]
        if !self.mcp_servers.is_empty() {
            let mut options = self.mcp_options;
            let may_sample = self
                .mcp_servers
                .values()
                .any(|s| s.sampling.is_some_and(|s| s.allow));
            if may_sample && options.sampling.is_none() {
                // The servers that may ask get the agent's own model.
                options.sampling = Some(Arc::new(super::sampling::AgentSampling::new(
                    model.clone(),
                    permissions.clone(),
                    self.approval_handler.clone(),
                )));
            }
            if let Some(cassette) = &self.cassette {
                options.cassette = Some(cassette.clone());
            }
            let client = crate::mcp::McpClient::new(self.mcp_servers, options);
            #[cfg(feature = "builtin")]
            skill_sources.push(Arc::new(client.clone()));
            sources.push(Arc::new(client));
        }
        #[cfg(feature = "builtin")]
        let skills = (!skill_sources.is_empty()).then(|| {
            let skills = Arc::new(crate::skills::Skills::new(skill_sources));
            sources.push(skills.clone());
            skills
        });
        check_source_names(&tools, &sources)?;
        let prices = self
            .prices
            .map_or_else(crate::model::PriceTable::shared_builtin, Arc::new);
        let model_prices = std::iter::once(&model)
            .chain(&fallbacks)
            .map(|m| prices.price(m.name()))
            .collect();
        Ok(Agent {
            inner: Arc::new(AgentInner {
                name: self.name,
                description: self.description,
                model,
                fallbacks,
                prompt: self.prompt,
                tools,
                tool_definitions,
                sources,
                max_turns,
                max_parallel_tools,
                context_budget: self.context_budget,
                compaction,
                budget: self.budget,
                session_budget: self.session_budget,
                output: self.output.map(super::output::OutputCheck::schema),
                settings: self.settings,
                hooks: self.hooks,
                permissions,
                approval_handler: self.approval_handler,
                model_prices,
                prices,
                record_content: self
                    .record_content
                    .unwrap_or_else(crate::telemetry::capture_content_from_env),
                tool_search: self.tool_search,
                offer: Default::default(),
                #[cfg(feature = "builtin")]
                skills,
            }),
        })
    }
}

/// An own tool may not take the name of a source's tool (an MCP tool's full
/// name, `<server>__<tool>`): caught here for the sources whose tools are
/// known (a connected [`McpClient`](crate::mcp::McpClient)), at `ready()` for
/// the others.
fn check_source_names(tools: &ToolSet, sources: &[Arc<dyn ToolSource>]) -> Result<(), BuildError> {
    if sources.is_empty() {
        return Ok(());
    }
    let mut all = tools.clone();
    for source in sources {
        for tool in source.tools() {
            all.insert(tool)?;
        }
    }
    Ok(())
}

/// Checks a tool's name and input schema.
pub(crate) fn validate_tool(tool: &dyn Tool) -> Result<(), BuildError> {
    let spec = tool.spec();
    if !is_valid_tool_name(&spec.name) {
        return Err(BuildError::InvalidToolName(spec.name.clone()));
    }
    if !is_object_schema(&spec.input_schema) {
        return Err(BuildError::InvalidInputSchema(spec.name.clone()));
    }
    Ok(())
}

/// What the model is offered: every tool but those their pins hold back
/// and those a permission rule denies unconditionally
/// ([`offered_to_model`](crate::policy::offered_to_model)).
pub(crate) fn definitions(
    tools: &ToolSet,
    permissions: &crate::policy::CompiledPermissions,
) -> Arc<[ToolDefinition]> {
    tools
        .iter()
        .filter(|t| !t.spec().is_held_back())
        .filter(|t| crate::policy::offered_to_model(permissions, &t.spec().name))
        .map(|t| {
            let spec = t.spec();
            ToolDefinition::new(
                spec.name.clone(),
                spec.description.clone(),
                spec.input_schema.clone(),
            )
        })
        .collect()
}
