//! The turn loop: model → tool calls (concurrent, bounded) → results → model.

use super::approval::{TurnCalls, TurnContext};
use super::budget::RunBudget;
use super::journal::RunJournal;
use super::run_setup::{Begin, RunOptions, SessionLink, StoreCommit};
use super::{
    AgentError, AgentEvent, AgentInner, AgentStream, ParentRun, Reply, RequestUsage, RunStatus,
    ToolCallRecord,
};
use crate::model::run_record::UsageSink;
use crate::model::{Message, ModelRequest, Part, Price, ToolCall, ToolResult, Usage};
use crate::policy::ApprovalHandler;
use crate::telemetry;
use crate::tool::{CallerRun, ClientChannel, ConversationState, ToolOutput, ToolSet};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

mod budgeted;
mod checked;
mod compacted;
mod failover;
mod hooked;
mod model_turn;
mod paused;
mod resumed;

const EVENT_BUFFER: usize = 64;

/// Spawns a run and returns its event stream.
pub(crate) fn spawn(
    inner: Arc<AgentInner>,
    begin: Begin,
    state: ConversationState,
    options: RunOptions,
    session: Option<SessionLink>,
) -> AgentStream {
    let (history, commit) = match session {
        None => (None, None),
        Some(SessionLink::Memory(history)) => (Some(history), None),
        Some(SessionLink::Stored(commit)) => (None, Some(commit)),
    };
    let cancel = match &options.cancel {
        Some(parent) => parent.child_token(),
        None => CancellationToken::new(),
    };
    let (tx, rx) = mpsc::channel(EVENT_BUFFER);
    let guard = cancel.clone().drop_guard();
    // The run's span, a child of the caller's current span.
    let span = telemetry::span::invoke_agent(inner.name.as_deref(), inner.model.name());
    let run_span = span.clone();
    let task = async move {
        let max_turns = options.max_turns.unwrap_or(inner.max_turns);
        let approval_handler = options
            .approval_handler
            .or_else(|| inner.approval_handler.clone());
        let output = options.output.or_else(|| inner.output.clone());
        let budget = RunBudget::new(options.budget.or(inner.budget), options.session_budget);
        let run = Run {
            inner,
            state,
            cancel: cancel.clone(),
            tx: tx.clone(),
            max_turns,
            approval_handler,
            commit,
            journal: None,
            tool_client: options.tool_client,
            depth: options.depth,
            child_usage: UsageSink::default(),
            done: std::sync::Mutex::new(None),
            compaction_failed: std::sync::atomic::AtomicBool::new(false),
            budget,
            output,
        }
        .run(begin);
        let result = match options.timeout {
            None => run.await,
            Some(timeout) => {
                tokio::pin!(run);
                tokio::select! {
                    biased;
                    r = &mut run => r,
                    () = tokio::time::sleep(timeout) => {
                        // The run stops as on a cancel (its tools get their
                        // grace), then fails with the timeout.
                        cancel.cancel();
                        let _ = run.await;
                        Err(AgentError::TimedOut { timeout })
                    }
                }
            }
        };
        if let Err(e) = result {
            telemetry::span::record_error(&run_span, e.kind(), &e);
            let _ = tx.send(Err(e)).await;
        }
    };
    // Boxed: the run's state machine is large (kilobytes), and tokio moves a
    // spawned future's whole stage several times (into the task, then on
    // each stage change); a box moves as a pointer.
    tokio::spawn(Box::pin(task).instrument(span));
    AgentStream::new(rx, guard, history)
}

/// Connects every tool source, in parallel, then checks that no two tools
/// share a name (an own tool named like an MCP tool's full name fails here,
/// as soon as the names are known, with an error naming both).
pub(crate) async fn ready_sources(inner: &AgentInner) -> Result<(), AgentError> {
    if inner.sources.is_empty() {
        return Ok(());
    }
    let results = futures::future::join_all(inner.sources.iter().map(|s| s.ready())).await;
    for r in results {
        r?;
    }
    super::offer::current(inner).map(|_| ())
}

struct Run {
    inner: Arc<AgentInner>,
    state: ConversationState,
    cancel: CancellationToken,
    tx: mpsc::Sender<Result<AgentEvent, AgentError>>,
    max_turns: usize,
    approval_handler: Option<ApprovalHandler>,
    /// A stored session's commit, made before `Done` is sent.
    commit: Option<StoreCommit>,
    /// A stored session's run: its step journal.
    journal: Option<RunJournal>,
    tool_client: Option<Arc<dyn ClientChannel>>,
    /// How many agent tools deep this run is (the top run: 0).
    depth: usize,
    /// The usage of the agents this run's tools ran ([`Agent::as_tool`](crate::Agent::as_tool)).
    child_usage: UsageSink,
    /// The run's budgets, when any is set ([`super::budget`]).
    budget: Option<RunBudget>,
    /// The run's output schema ([`super::output`]).
    output: Option<super::output::OutputCheck>,
    /// A leased run's reply, sent as `Done` once the lease is given back: a
    /// caller that exits on `Done` (the CLI does) must not leave the lease
    /// held until it runs out, keeping the session's next run waiting.
    done: std::sync::Mutex<Option<Box<Reply>>>,
    /// A summary request failed: the run sends its newest turns without a
    /// summary from then on ([`super::compaction`]).
    compaction_failed: std::sync::atomic::AtomicBool,
}

/// A run's progress between turns.
struct Progress {
    request: ModelRequest,
    records: Vec<ToolCallRecord>,
    usage: Usage,
    requests: Vec<RequestUsage>,
    turns: usize,
    /// Which of `requests` gave the latest turn of this run's own (not its
    /// agent tools'): its model answered.
    answered: Option<usize>,
}

impl Progress {
    /// Counts one model turn's request to `model` (its name and price):
    /// its tokens, and its cost when priced.
    fn count_request(
        &mut self,
        model: &str,
        price: Option<Price>,
        usage: Usage,
        definition_tokens: usize,
    ) {
        self.answered = Some(self.requests.len());
        self.count_priced(model, price, usage, definition_tokens);
    }

    /// Counts a request to `model` (the agent's, or the one summarising).
    fn count_model_request(
        &mut self,
        inner: &AgentInner,
        model: &str,
        usage: Usage,
        definition_tokens: usize,
    ) {
        self.count_priced(model, inner.prices.price(model), usage, definition_tokens);
    }

    fn count_priced(
        &mut self,
        model: &str,
        price: Option<Price>,
        usage: Usage,
        definition_tokens: usize,
    ) {
        self.usage += usage;
        self.requests.push(RequestUsage {
            model: model.to_owned(),
            usage,
            cost_usd: price.map(|p| p.cost(usage)),
            tool_definition_tokens: u64::try_from(definition_tokens).unwrap_or(u64::MAX),
        });
    }

    /// Counts the requests of agents run as tools.
    fn count_children(&mut self, sink: &UsageSink) {
        for request in sink.take() {
            self.usage += request.usage;
            self.requests.push(request);
        }
    }

    /// Adds a turn's results to the conversation and the records.
    fn push_results(&mut self, calls: Vec<ToolCall>, outputs: Vec<ToolOutput>) {
        let mut results = Vec::with_capacity(outputs.len());
        for (call, output) in calls.into_iter().zip(outputs) {
            results.push(ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                output: output.clone(),
            });
            self.records.push(ToolCallRecord { call, output });
        }
        self.request.messages.push(Message::tool_results(results));
    }

    fn into_reply(self, text: String, status: RunStatus) -> Reply {
        let cost_usd = if self.requests.is_empty() {
            None
        } else {
            self.requests.iter().map(|r| r.cost_usd).sum()
        };
        let model = self
            .answered
            .or(self.requests.len().checked_sub(1))
            .and_then(|i| self.requests.get(i))
            .map(|r| r.model.clone());
        // Runs inside the run's `invoke_agent` span.
        telemetry::span::record_response_model(&tracing::Span::current(), model.as_deref());
        let reply = Reply {
            model,
            text,
            messages: self.request.messages,
            tool_calls: self.records,
            usage: self.usage,
            requests: self.requests,
            cost_usd,
            output: None,
            turns: self.turns,
            status,
            pending: Vec::new(),
            state: None,
        };
        // Runs inside the run's `invoke_agent` span.
        telemetry::span::record_run_end(
            &tracing::Span::current(),
            reply.usage,
            reply.cost_usd,
            reply.turns,
            reply.status.as_str(),
        );
        reply
    }
}

/// One model turn's output.
struct TurnOutput {
    text: String,
    /// The provider's own blocks (native tool search), kept in order.
    blocks: Vec<crate::model::ProviderBlock>,
    calls: Vec<ToolCall>,
    usage: Usage,
    /// The wall-time budget ran out while the model streamed.
    cut: bool,
    /// Which model of the list answered (0: the first).
    model: usize,
}

impl Run {
    async fn emit(&self, event: AgentEvent) -> Result<(), AgentError> {
        // The receiver is gone: the caller dropped the stream, so stop.
        self.tx
            .send(Ok(event))
            .await
            .map_err(|_| AgentError::Cancelled)
    }

    async fn run(mut self, begin: Begin) -> Result<(), AgentError> {
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err(AgentError::Cancelled),
            r = ready_sources(&self.inner) => r?,
        }
        // A stored session's run holds its lease from here to its end.
        let Some(commit) = self.commit.as_mut() else {
            return self.turns(begin).await;
        };
        let lease = super::lease::take(
            &commit.store,
            &commit.id,
            commit.lease,
            &self.tx,
            &self.cancel,
        )
        .await?;
        let holder = lease.holder().to_owned();
        let result = tokio::select! {
            r = self.prepare_and_turn(begin, &holder) => r,
            never = lease.heartbeat() => match never {},
        };
        if result.is_err()
            && let Some(journal) = &self.journal
        {
            journal.interrupt().await;
        }
        lease.release().await;
        result?;
        let done = crate::sync::MutexExt::lock_unpoisoned(&self.done).take();
        match done {
            Some(reply) => self.emit(AgentEvent::Done(reply)).await,
            None => Ok(()),
        }
    }

    /// Under the lease: the stored history and the journal, then the turns.
    async fn prepare_and_turn(&mut self, begin: Begin, holder: &str) -> Result<(), AgentError> {
        let begin = self.prepare(begin, holder).await?;
        self.turns(begin).await
    }

    /// The turns, from the first (or the resumed one) to the reply.
    async fn turns(&self, begin: Begin) -> Result<(), AgentError> {
        let mut run = match begin {
            // A retry is settled under the lease (`prepare`); without a
            // store it is a fresh run.
            Begin::Fresh(messages) | Begin::Retry(messages, _) => Progress {
                request: ModelRequest::new(messages),
                records: Vec::new(),
                usage: Usage::default(),
                requests: Vec::new(),
                turns: 0,
                answered: None,
            },
            Begin::Resume(paused, decisions) => {
                self.finish_paused_turn(*paused, &decisions).await?
            }
            // Only a stored session has interrupted runs.
            Begin::Journal(run) => {
                return Err(AgentError::NoInterruptedRun {
                    run,
                    session: "(in memory)".into(),
                });
            }
            Begin::Replayed(replayed) => match self.resume_replayed(*replayed).await? {
                Some(run) => run,
                None => return Ok(()),
            },
        };
        run.request = run.request.settings(self.inner.settings.clone());
        run.request.system = system_prompt(&self.inner);
        if let Some(output) = &self.output {
            run.request.settings.output = Some(output.schema.clone());
        }
        let mut output_failures = 0;
        let max_turns = self.max_turns;
        // Only compaction adds summaries; without it, a conversation that
        // starts without one never holds one, and no turn searches for it.
        let summarised = self.inner.compaction.is_some()
            || run
                .request
                .messages
                .iter()
                .any(|m| m.as_summary().is_some());
        // What only an agent configured for it does (budgets, compaction,
        // hooks, a journal, typed output) is boxed: the common turn's state
        // machine stays small, so each turn moves and polls less.
        for turn in run.turns + 1..=max_turns {
            if self.budget.is_some()
                && let Some(stop) = self.budget_reached(&run, 0)
            {
                return Box::pin(self.stop_for_budget(run, String::new(), stop)).await;
            }
            let offer = super::offer::current(&self.inner)?;
            let turn_tools = super::deferral::plan(&self.inner, &offer, &run.request.messages);
            let tools = turn_tools.tools;
            run.request.tools = turn_tools.definitions;
            if let Some(compactor) = &self.inner.compaction {
                Box::pin(self.compact(compactor, &mut run, turn_tools.definition_tokens)).await?;
            }
            if !self.inner.hooks.is_empty() {
                let hooks = &self.inner.hooks;
                Box::pin(hooks.before_model(&mut run.request, &self.cancel)).await?;
            }
            let mut out = self
                .model_turn(&run.request, turn_tools.definition_tokens, summarised)
                .await?;
            run.count_request(
                self.inner.model_at(out.model).name(),
                self.inner.model_price(out.model),
                out.usage,
                turn_tools.definition_tokens,
            );
            run.turns = turn;
            if self.budget.is_some()
                && let Some(stop) = self.budget_after_turn(&run, &out)
            {
                // The turn's calls do not run: its text (and blocks) stay.
                out.calls.clear();
                push_assistant(&mut run, &out);
                return Box::pin(self.stop_for_budget(run, out.text, stop)).await;
            }
            let refused = if self.inner.hooks.is_empty() {
                None
            } else {
                Some(Box::pin(self.after_model_hooks(&mut out)).await?)
            };
            push_assistant(&mut run, &out);
            if let Some(journal) = &self.journal {
                Box::pin(self.journal_turn(journal, &run, &out.calls, refused.as_deref())).await?;
            }

            if out.calls.is_empty() {
                self.emit(AgentEvent::TurnFinished {
                    turn,
                    usage: out.usage,
                })
                .await?;
                let output = match &self.output {
                    None => None,
                    Some(check) => {
                        match self.checked(check, &mut run, &out.text, &mut output_failures)? {
                            Some(value) => Some(value),
                            // Sent back with what is wrong.
                            None => continue,
                        }
                    }
                };
                self.settle_budget(&run);
                let mut reply = run.into_reply(out.text, RunStatus::Completed);
                reply.output = output;
                return self.complete(reply).await;
            }

            let outputs = refused.unwrap_or_else(|| vec![None; out.calls.len()]);
            let calls = self
                .turn_context(&tools)
                .run_calls(&out.calls, outputs, None)
                .await;
            run.count_children(&self.child_usage);
            match calls? {
                TurnCalls::Done(outputs) => run.push_results(out.calls, outputs),
                TurnCalls::Paused { outputs, pending } => {
                    return Box::pin(self.pause(run, out, outputs, pending)).await;
                }
            }
            self.emit(AgentEvent::TurnFinished {
                turn,
                usage: out.usage,
            })
            .await?;
        }
        Err(AgentError::MaxTurnsExceeded { max_turns })
    }

    /// Stores a completed run's turn (with a journal: and ends the journal,
    /// in one transaction), then sends `Done`.
    async fn complete(&self, reply: Reply) -> Result<(), AgentError> {
        if let Some(commit) = &self.commit {
            commit.save(&reply.messages, self.journal.as_ref()).await?;
        }
        self.finish(reply).await
    }

    /// Sends `Done` with the reply, or, for a run holding its session's
    /// lease, keeps it to send once the lease is given back (see [`Run::run`]).
    async fn finish(&self, reply: Reply) -> Result<(), AgentError> {
        if self.commit.is_some() {
            *crate::sync::MutexExt::lock_unpoisoned(&self.done) = Some(Box::new(reply));
            return Ok(());
        }
        self.emit(AgentEvent::Done(Box::new(reply))).await
    }

    fn turn_context<'a>(&'a self, tools: &'a ToolSet) -> TurnContext<'a> {
        TurnContext {
            inner: &self.inner,
            tools,
            state: &self.state,
            cancel: &self.cancel,
            tx: &self.tx,
            approval_handler: self.approval_handler.as_ref(),
            tool_client: self.tool_client.as_ref(),
            journal: self.journal.as_ref(),
            interrupted: false,
            caller: CallerRun::default()
                .with(ParentRun {
                    depth: self.depth,
                    approval_handler: self.approval_handler.clone(),
                })
                .with(self.child_usage.clone()),
        }
    }
}

/// The agent's system prompt (its prompt and skills) followed by what its
/// tool sources ask the model to know (MCP servers' `instructions`).
fn system_prompt(inner: &AgentInner) -> Option<String> {
    let base = inner.system_prompt();
    let mut system = base.clone().unwrap_or_default();
    for text in inner.sources.iter().filter_map(|s| s.instructions()) {
        if !system.is_empty() {
            system.push_str("\n\n");
        }
        system.push_str(&text);
    }
    (!system.is_empty() || base.is_some()).then_some(system)
}

/// Adds a turn's assistant message: its text, the provider's blocks, its
/// tool calls.
fn push_assistant(run: &mut Progress, out: &TurnOutput) {
    let mut parts = Vec::with_capacity(out.calls.len() + 1);
    if !out.text.is_empty() {
        parts.push(Part::Text {
            text: out.text.clone(),
        });
    }
    parts.extend(out.blocks.iter().cloned().map(Part::Provider));
    parts.extend(out.calls.iter().cloned().map(Part::ToolCall));
    run.request.messages.push(Message {
        role: crate::model::Role::Assistant,
        parts,
    });
}
