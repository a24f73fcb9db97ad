//! The rmcp `ServerHandler`: `tools/list` and `tools/call` for the agent tool
//! and the directly exposed tools; resources, prompts and completion in
//! [`offers`].

mod offers;

use super::agent_tool::{self, AgentCallEnd, Approver};
use super::approval;
use super::audit;
use super::caller_store;
use super::catalog::{ServerCatalog, Subscribed};
use super::invalid_params::custom_request_error;
use super::limits::{Limiter, PermitSlot, RunPermit};
use super::mrtr::{self, ParkedRuns, Round};
use super::peer_channel::{Asking, LogFilter, PeerChannel, ProgressTo, from_rmcp_level};
use super::result::{error_result, to_call_result};
use super::sessions::Conversations;
use super::tasks;
use crate::Agent;
use crate::agent::{SessionBudget, call_one};
use crate::mcp::protocol::carries_request_meta;
use crate::model::ToolCall;
use crate::policy::{ApprovalDecision, ApprovalRequest, Decision, decide_call};
use crate::session::{LeaseSettings, SessionStore};
use crate::sync::MutexExt;
use crate::telemetry::propagate;
use crate::telemetry::span::{self as spans, ToolDecision, execute_tool};
use crate::tool::{ClientChannel, ToolContext, ToolSet};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CompleteRequestParams, CompleteResult, CustomRequest, CustomResult, ErrorData,
    GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

/// The served agent and tools; cheap to clone (the HTTP transport clones it per request).
#[derive(Clone)]
pub(crate) struct LoushoServer {
    inner: Arc<Inner>,
    /// The level the client set with `logging/setLevel` (one per connection
    /// or session: see [`LoushoServer::for_session`]).
    log: LogFilter,
    /// The URIs this connection or session subscribed to.
    subscribed: Subscribed,
    /// What this connection's or session's calls of each agent tool spent
    /// together, against its agent's session budget.
    budgets: SessionBudgets,
}

/// Per agent tool, the session budget of one connection or MCP session.
type SessionBudgets = Arc<std::sync::Mutex<HashMap<String, SessionBudget>>>;

struct Inner {
    /// The first agent: its permission rules gate the direct tools.
    agent: Agent,
    /// Each agent tool's agent, by tool name.
    agents: HashMap<String, Agent>,
    /// The tools, resources and prompts served (changeable while serving).
    catalog: ServerCatalog,
    /// Fires on `close()`: every in-flight call is cancelled.
    shutdown: CancellationToken,
    /// Whether clients can answer server requests (elicitation, sampling):
    /// stdio and stateful HTTP, not stateless HTTP.
    answers: bool,
    /// `ServeApprovals::Elicit`: how long to wait for an approval.
    approval: Option<Duration>,
    /// `ServeOptions::sessions`: where the agent tool's conversations live.
    store: Option<Arc<dyn SessionStore>>,
    /// How runs take their session's lease.
    lease: LeaseSettings,
    /// Calls of 2026-07-28 clients parked on a question.
    parked: ParkedRuns,
    /// Agent runs served as tasks (clients with the tasks extension).
    tasks: tasks::ServedTasks,
    /// With a session store: calls parked on a round, for every replica.
    shared_rounds: Option<super::shared_rounds::SharedRounds>,
    /// Per-caller limits of agent runs.
    limiter: Option<Arc<Limiter>>,
    /// A skills folder served through the Skills extension.
    #[cfg(feature = "builtin")]
    skills: Option<Arc<super::skills::ServedSkills>>,
}

/// What the handler serves, decided by `serve_mcp`.
pub(crate) struct Served {
    pub(crate) limiter: Option<Arc<Limiter>>,
    pub(crate) agent: Agent,
    /// Each agent tool's agent, by tool name.
    pub(crate) agents: HashMap<String, Agent>,
    pub(crate) catalog: ServerCatalog,
    pub(crate) shutdown: CancellationToken,
    pub(crate) answers: bool,
    pub(crate) approval: Option<Duration>,
    pub(crate) store: Option<Arc<dyn SessionStore>>,
    pub(crate) lease: LeaseSettings,
    #[cfg(feature = "builtin")]
    pub(crate) skills: Option<Arc<super::skills::ServedSkills>>,
}

impl LoushoServer {
    pub(crate) fn new(served: Served) -> Self {
        let Served {
            limiter,
            agent,
            agents,
            catalog,
            shutdown,
            answers,
            approval,
            store,
            lease,
            #[cfg(feature = "builtin")]
            skills,
        } = served;
        // One sweep of the store for what other replicas asked of this
        // one's tasks and parked calls.
        let replicas = store
            .clone()
            .map(|store| super::request_sweep::ReplicaStore::start(store, lease.ttl, &shutdown));
        let tasks = tasks::ServedTasks::new(replicas.clone());
        let shared_rounds = replicas.map(super::shared_rounds::SharedRounds);
        Self {
            inner: Arc::new(Inner {
                agent,
                agents,
                catalog,
                shutdown,
                answers,
                approval,
                store,
                lease,
                parked: ParkedRuns::default(),
                tasks,
                shared_rounds,
                limiter,
                #[cfg(feature = "builtin")]
                skills,
            }),
            log: LogFilter::default(),
            subscribed: Subscribed::default(),
            budgets: SessionBudgets::default(),
        }
    }

    /// The names of the agent tools (a call of one is an agent run).
    pub(crate) fn agent_tool_names(&self) -> impl Iterator<Item = &str> {
        self.inner.agents.keys().map(String::as_str)
    }

    /// The per-caller limits of agent runs, if any are set.
    pub(crate) fn limiter(&self) -> Option<&Arc<Limiter>> {
        self.inner.limiter.as_ref()
    }

    /// The server for a new connection or HTTP session: same tools, its own
    /// log level.
    pub(crate) fn for_session(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            log: LogFilter::default(),
            subscribed: Subscribed::default(),
            budgets: SessionBudgets::default(),
        }
    }

    /// One round of a call from a 2026-07-28 client that may ask it
    /// something: the first starts the call (`call`, on its own task, with
    /// the channel asking in rounds), a retry (`requestState`) resumes it
    /// with the client's answer; each ends with the next question (an
    /// `InputRequiredResult`) or the call's result. A cancelled round
    /// cancels the call.
    async fn in_rounds<F, Fut>(
        &self,
        request: &CallToolRequestParams,
        caller: Option<&super::caller::Caller>,
        mut channel: PeerChannel,
        request_cancel: &CancellationToken,
        run_cancel: CancellationToken,
        call: F,
    ) -> Result<CallToolResponse, ErrorData>
    where
        F: FnOnce(PeerChannel, CancellationToken) -> Fut,
        Fut: Future<Output = Option<CallToolResult>> + Send + 'static,
    {
        let parked = &self.inner.parked;
        let shared = self.inner.shared_rounds.as_ref();
        let handle = request.request_state.as_deref();
        // The round, and whether this process drove it (a retry of a call
        // parked on another replica is relayed there).
        let round = async {
            if let Some(handle) = handle {
                let answers = request.input_responses.as_ref();
                if let Some(round) = parked.resume(handle, answers).await {
                    return (Some(round), true);
                }
                let Some(shared) = shared else {
                    return (None, false);
                };
                return (shared.relay(handle, caller, answers).await, false);
            }
            let (rounds, driven) = mrtr::start(run_cancel.clone());
            channel.asking = Asking::Rounds(rounds.clone());
            let running = call(channel, run_cancel);
            // The call outlives this round: it ends, or is cancelled when
            // a round is cancelled or its retry never comes.
            tokio::spawn(async move {
                let done = running.await;
                rounds.done(done).await;
            });
            (Some(parked.next(driven).await), true)
        };
        let (round, here) = tokio::select! {
            biased;
            () = request_cancel.cancelled() => {
                if let (Some(shared), Some(handle)) = (shared, handle) {
                    shared.cancel(handle).await;
                }
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
            round = round => round,
        };
        // A question parked here: any replica may take its retry.
        if let (Some(shared), Some(round), true) = (shared, &round, here) {
            let owner = caller.map(super::caller::Caller::key);
            shared
                .share(parked, round, owner, &self.inner.shutdown)
                .await;
        }
        match round {
            Some(Round::Input(input)) => Ok(CallToolResponse::InputRequired(input)),
            Some(Round::Done(result)) => Ok(result.into()),
            Some(Round::Cancelled) => {
                Err(ErrorData::internal_error("the call was cancelled", None))
            }
            None => Ok(error_result(
                "this question is no longer pending (it was answered already, or it expired \
                 after its timeout); call the tool again",
            )
            .into()),
        }
    }

    /// How a call's tools reach its client.
    fn channel(&self, cx: &RequestContext<RoleServer>, progress: ProgressTo) -> PeerChannel {
        let caps = cx.client_capabilities().unwrap_or_default();
        let modern = cx
            .protocol_version()
            .is_some_and(|v| carries_request_meta(&v));
        let asking = if modern {
            Asking::Modern
        } else if self.inner.answers {
            Asking::Requests
        } else {
            Asking::Stateless
        };
        PeerChannel {
            peer: cx.peer.clone(),
            progress,
            log: self.log.clone(),
            asking,
            elicitation: caps.elicitation.is_some(),
            sampling: caps.sampling.is_some(),
            sampling_tools: caps.sampling.as_ref().is_some_and(|s| s.tools.is_some()),
        }
    }
}

impl ServerHandler for LoushoServer {
    fn get_info(&self) -> ServerConfig {
        #[cfg_attr(not(feature = "builtin"), allow(unused_mut))]
        let mut info = self.inner.catalog.info();
        #[cfg(feature = "builtin")]
        if self.inner.skills.is_some() {
            info.capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(
                    rmcp::model::SKILLS_EXTENSION_ID.to_owned(),
                    rmcp::model::JsonObject::new(),
                );
        }
        info
    }

    #[cfg(feature = "builtin")]
    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, ErrorData> {
        match &self.inner.skills {
            Some(skills) => Ok(skills.list()),
            None => Err(ErrorData::method_not_found::<
                rmcp::model::ListSkillsRequestMethod,
            >()),
        }
    }

    #[cfg(feature = "builtin")]
    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, ErrorData> {
        match &self.inner.skills {
            Some(skills) => skills.get(&request.uri),
            None => Err(ErrorData::method_not_found::<
                rmcp::model::GetSkillRequestMethod,
            >()),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.inner.catalog.read(|e| e.tools());
        // An OAuth caller sees only the tools its scopes open.
        if let Some(caller) = caller_of(&cx) {
            tools.retain(|t| caller.may_call(&t.name));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn on_initialized(&self, cx: NotificationContext<RoleServer>) {
        // Sessions that can hear notifications hear of changes.
        if self.inner.answers {
            self.inner
                .catalog
                .listeners()
                .add_session(cx.peer, self.subscribed.clone());
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, cx: SubscriptionContext) -> Result<(), ErrorData> {
        self.listen_stream(cx).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.resources_page(request)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.templates_page(request)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        #[cfg(feature = "builtin")]
        if let Some(read) = self
            .inner
            .skills
            .as_ref()
            .and_then(|s| s.read(&request.uri))
        {
            return Ok(read.into());
        }
        self.read(request.uri, cx).await.map(Into::into)
    }

    #[allow(deprecated)] // resources/subscribe: the 2025-11-25 way
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribe_to(request.uri)
    }

    #[allow(deprecated)] // resources/unsubscribe: the 2025-11-25 way
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribed.remove(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.prompts_page(request)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.prompt(request, cx).await.map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = caller_of(&cx).map(|c| caller_store::CallerKey(c.key()));
        self.completion(request, caller).await
    }

    #[allow(deprecated)] // logging: deprecated by SEP-2577, spoken by 2025-11-25 clients
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log.set(from_rmcp_level(request.level));
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let tasks = &self.inner.tasks;
        tasks.get(&request.task_id, caller_of(&cx)).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (id, answers) = (&request.task_id, request.input_responses);
        self.inner.tasks.update(id, caller_of(&cx), answers).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let tasks = &self.inner.tasks;
        tasks.cancel(&request.task_id, caller_of(&cx)).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.catalog.read(|e| e.tool(name))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(custom_request_error(&request))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let version = cx.protocol_version();
        tracing::debug!(
            id = %cx.id,
            tool = %request.name,
            protocol = version.as_ref().map_or("unknown", |v| v.as_str()),
            "serving a tools/call"
        );
        let span = server_span(&request, &cx);
        let started = std::time::Instant::now();
        let caller = caller_of(&cx).cloned();
        audit::mark_span(&span, caller.as_ref());
        let tool = request.name.clone();
        let mut decision = audit::Decision::Allowed;
        let result = self
            .call_tool_in_span(request, cx, &mut decision)
            .instrument(span.clone())
            .await;
        let complete = match &result {
            Ok(CallToolResponse::Complete(r)) => Ok(Some(r)),
            Ok(_) => Ok(None),
            Err(e) => Err(e),
        };
        let outcome = match complete {
            Ok(Some(r)) if r.is_error == Some(true) => "tool_error",
            Ok(Some(_)) => "ok",
            Ok(None) => "task",
            Err(_) => "error",
        };
        audit::call(caller.as_ref(), &tool, decision, outcome, started);
        record_outcome(&span, complete);
        result
    }
}

/// Marks the call's server span with its failure: a JSON-RPC error, or a
/// tool's error result (`Ok(None)`: an answer that is not a result).
fn record_outcome(span: &Span, outcome: Result<Option<&CallToolResult>, &ErrorData>) {
    if span.is_disabled() {
        return;
    }
    match outcome {
        Err(e) => spans::record_error(span, &e.code.0.to_string(), &e.message),
        Ok(Some(r)) if r.is_error == Some(true) => {
            spans::record_error(span, "tool_error", &"the tool returned an error result");
        }
        Ok(_) => {}
    }
}

/// The caller the per-caller limits count a stdio server's runs under (its
/// one client).
const STDIO_CALLER: &str = "stdio";

/// The caller an OAuth access token named, over HTTP.
pub(super) fn caller_of(cx: &RequestContext<RoleServer>) -> Option<&super::caller::Caller> {
    cx.extensions
        .get::<axum::http::request::Parts>()?
        .extensions
        .get::<super::caller::Caller>()
}

/// The call's MCP server span: a child of the caller's span when the request's
/// `_meta` carries its `traceparent`.
fn server_span(request: &CallToolRequestParams, cx: &RequestContext<RoleServer>) -> Span {
    let session = cx
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok());
    let span = spans::mcp_server_call(&request.name, &cx.id.to_string(), session);
    propagate::adopt_remote_parent(&span, &cx.meta);
    span
}

impl LoushoServer {
    /// Serves one `tools/call`; `decision` becomes what refused it when
    /// this refuses it (over stdio, a per-caller limit: over HTTP the screen
    /// refuses before rmcp sees the request, and audits it there).
    async fn call_tool_in_span(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
        decision: &mut audit::Decision,
    ) -> Result<CallToolResponse, ErrorData> {
        let inner = &self.inner;
        // Over HTTP a cancel notification drops rmcp's future for this call,
        // which cancels `cx.ct` (see `http/screen.rs`). Only waited on here.
        let request_cancel = cx.ct.clone();
        // A run's own token, a child of the server's shutdown, made only where
        // a run needs one: every call's child of that one shared token would
        // take its lock (`run_direct` makes its own).
        let run_cancel = || inner.shutdown.child_token();
        let id = cx.id.to_string();
        let caller = caller_of(&cx).cloned();
        // With OAuth, a caller's sessions are its own.
        let store = caller_store::for_caller(inner.store.clone(), caller.as_ref()).map(|store| {
            Conversations {
                store,
                lease: inner.lease,
            }
        });
        if let Some(agent) = inner.agents.get(request.name.as_ref()) {
            let permit = match self.run_permit(&request, &cx).await {
                Ok(permit) => permit,
                Err(refused) => {
                    *decision = audit::Decision::RateLimited;
                    return Ok(error_result(refused).into());
                }
            };
            let progress = match cx.meta.get_progress_token() {
                Some(t) => ProgressTo::Run(t, Default::default()),
                None => ProgressTo::Nowhere,
            };
            let channel = self.channel(&cx, progress);
            let approver = match inner.approval {
                Some(timeout) => Approver::Elicit(timeout),
                None => Approver::Nobody,
            };
            let budget = self.session_budget(&request.name, agent);
            if request.request_state.is_none()
                && tasks::client_takes_tasks(cx.client_capabilities().as_ref())
            {
                let agent = agent.clone();
                let arguments = request.arguments;
                // The task is not the request: only `tasks/cancel` and the
                // server's close stop it.
                let call = move |channel, run_cancel| {
                    agent_tool::call_detached(
                        agent, arguments, run_cancel, channel, approver, store, permit, budget,
                    )
                };
                let status = "the agent is working";
                let task =
                    inner
                        .tasks
                        .spawn_call(caller.as_ref(), channel, &inner.shutdown, status, call);
                return Ok(CallToolResponse::Task(Box::pin(task).await));
            }
            if rounds_for(&request, &channel) {
                let agent = agent.clone();
                let arguments = request.arguments.clone();
                // Detached from the round's request: cancelled through
                // `run_cancel` only.
                let call = move |channel, run_cancel| {
                    agent_tool::call_detached(
                        agent, arguments, run_cancel, channel, approver, store, permit, budget,
                    )
                };
                // Boxed, as below: an agent run's future is large, and
                // inlined it would be moved with every direct call's too.
                return Box::pin(self.in_rounds(
                    &request,
                    caller.as_ref(),
                    channel,
                    &request_cancel,
                    run_cancel(),
                    call,
                ))
                .await;
            }
            return match Box::pin(agent_tool::call(
                agent,
                request.arguments,
                &request_cancel,
                run_cancel(),
                channel,
                approver,
                store.as_ref(),
                permit.as_ref(),
                budget,
            ))
            .await
            {
                AgentCallEnd::Result(r) => Ok(r.into()),
                AgentCallEnd::Cancelled => {
                    Err(ErrorData::internal_error("the call was cancelled", None))
                }
            };
        }
        if !inner.catalog.read(|e| e.direct().contains(&request.name)) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; call tools/list for the tools this server has",
                    request.name
                ),
                None,
            ));
        }
        let progress = match cx.meta.get_progress_token() {
            Some(t) => ProgressTo::Direct(t),
            None => ProgressTo::Nowhere,
        };
        let channel = self.channel(&cx, progress);
        if request.request_state.is_none()
            && self.serves_as_task(&request.name)
            && tasks::client_takes_tasks(cx.client_capabilities().as_ref())
        {
            let server = self.clone();
            let call = move |channel, run_cancel: CancellationToken| async move {
                server
                    .run_direct(request, id, channel, &run_cancel)
                    .await
                    .ok()
            };
            let status = "the tool is working";
            let caller = caller_of(&cx);
            let task = inner
                .tasks
                .spawn_call(caller, channel, &inner.shutdown, status, call);
            return Ok(CallToolResponse::Task(Box::pin(task).await));
        }
        if rounds_for(&request, &channel) {
            let server = self.clone();
            let direct = request.clone();
            let call = move |channel, run_cancel: CancellationToken| async move {
                server
                    .run_direct(direct, id, channel, &run_cancel)
                    .await
                    .ok()
            };
            return Box::pin(self.in_rounds(
                &request,
                caller.as_ref(),
                channel,
                &request_cancel,
                run_cancel(),
                call,
            ))
            .await;
        }
        self.run_direct(request, id, channel, &request_cancel)
            .await
            .map(Into::into)
    }

    /// An agent run's permit under the per-caller limits (`None` when none
    /// are set): over HTTP the one the screen took (none for the retry of an
    /// input-required round: it is no new run); on stdio, for its one
    /// client, taken here. `Err` is the refusal, for an `isError` result.
    async fn run_permit(
        &self,
        request: &CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<Option<RunPermit>, String> {
        let Some(limiter) = &self.inner.limiter else {
            return Ok(None);
        };
        if let Some(parts) = cx.extensions.get::<axum::http::request::Parts>() {
            return Ok(parts
                .extensions
                .get::<PermitSlot>()
                .and_then(PermitSlot::take));
        }
        if request.request_state.is_some() {
            return Ok(None);
        }
        match limiter.admit(STDIO_CALLER).await {
            Ok(permit) => Ok(Some(permit)),
            Err(refused) => {
                tracing::info!(%refused, "refused an agent run past a per-caller limit");
                Err(refused.to_string())
            }
        }
    }

    /// The session budget of agent tool `name`'s calls on this connection
    /// or MCP session: its agent's, counted from the first call; `None`
    /// when the agent has none.
    fn session_budget(&self, name: &str, agent: &Agent) -> Option<SessionBudget> {
        let budget = agent.inner.session_budget?;
        let mut budgets = self.budgets.lock_unpoisoned();
        let shared = budgets
            .entry(name.to_owned())
            .or_insert_with(|| SessionBudget::new(budget));
        Some(shared.clone())
    }

    /// Whether the direct tool `name` opted in to run as a task.
    fn serves_as_task(&self, name: &str) -> bool {
        self.inner
            .catalog
            .read(|e| e.direct().get(name).is_some_and(|t| t.spec().serve_as_task))
    }

    /// Runs a directly served tool: the approval gate (when approvals are
    /// asked), then the tool; ends early when `request_cancel` fires.
    async fn run_direct(
        &self,
        request: CallToolRequestParams,
        id: String,
        channel: PeerChannel,
        request_cancel: &CancellationToken,
    ) -> Result<CallToolResult, ErrorData> {
        let inner = &self.inner;
        let direct = inner.catalog.read(|e| e.direct().clone());
        let run_cancel = inner.shutdown.child_token();
        let call = ToolCall {
            id,
            name: request.name.to_string(),
            arguments: request
                .arguments
                .map_or_else(|| Value::Object(Default::default()), Value::Object),
        };
        let gate = async {
            match inner.approval {
                Some(timeout) => direct_gate(&inner.agent, &direct, &call, &channel, timeout).await,
                None => None,
            }
        };
        // Boxed: the approval gate and the tool call make a large future,
        // which rmcp's per-request task would otherwise carry (and move)
        // inline with this one.
        let run = Box::pin(async {
            if let Some(refused) = gate.await {
                return refused;
            }
            let client: Arc<dyn ClientChannel> = Arc::new(channel.clone());
            let ctx = ToolContext::new(call.id.clone())
                .with_cancel(run_cancel.clone())
                .with_client(Some(client));
            let span = execute_tool(&call, ToolDecision::Allowed);
            to_call_result(call_one(&direct, &call, ctx, span, false).await)
        });
        tokio::select! {
            biased;
            out = run => Ok(out),
            () = request_cancel.cancelled() => {
                run_cancel.cancel();
                Err(ErrorData::internal_error("the call was cancelled", None))
            }
        }
    }
}

/// Whether a call is driven in input-required rounds: a retry of one, or a
/// 2026-07-28 client's call that may ask it (it declared elicitation or
/// sampling).
fn rounds_for(request: &CallToolRequestParams, channel: &PeerChannel) -> bool {
    request.request_state.is_some()
        || (matches!(channel.asking, Asking::Modern) && (channel.elicitation || channel.sampling))
}

/// `ServeApprovals::Elicit` for a direct call: the decision order (with the
/// input); a call that would ask is put to the client's user. `Some` is the
/// result to return instead of running the tool.
async fn direct_gate(
    agent: &Agent,
    direct: &ToolSet,
    call: &ToolCall,
    channel: &PeerChannel,
    timeout: Duration,
) -> Option<CallToolResult> {
    let spec = direct.get(&call.name).map(|t| t.spec().clone())?;
    let decided = decide_call(
        &agent.inner.permissions,
        &call.name,
        Some(&spec),
        Some(&call.arguments),
    )
    .await;
    match decided.decision.decision {
        Decision::Run => None,
        Decision::Deny => Some(error_result(decided.denial(&call.name))),
        Decision::Ask => {
            if let Some(why) = approval::cannot_ask(channel) {
                return Some(error_result(format!(
                    "approval needed: `{}` needs approval and {why}",
                    call.name
                )));
            }
            let request = ApprovalRequest::new(
                &call.id,
                &spec,
                call.arguments.clone(),
                decided.decision.reason,
            );
            match approval::ask(channel, request, timeout).await {
                ApprovalDecision::Approve => None,
                ApprovalDecision::Deny { reason } => Some(error_result(match reason {
                    Some(r) => format!("The user denied the call to `{}`: {r}", call.name),
                    None => format!("The user denied the call to `{}`.", call.name),
                })),
            }
        }
    }
}
