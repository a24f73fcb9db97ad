//! The turn loop: model → tool calls (concurrent, bounded) → results → model.

use super::approval::{TurnCalls, TurnContext};
use super::run_setup::{Begin, RunOptions, SessionLink, StoreCommit};
use super::{
    AgentError, AgentEvent, AgentInner, AgentStream, ParentRun, Reply, RequestUsage, RunState,
    RunStatus, ToolCallRecord,
};
use crate::model::run_record::UsageSink;
use crate::model::{Message, ModelEvent, ModelRequest, Part, ToolCall, ToolResult, Usage};
use crate::policy::{ApprovalHandler, ApprovalRequest, Decisions};
use crate::session::run_state::{PausedCall, PausedTurn};
use crate::telemetry;
use crate::tool::{CallerRun, ClientChannel, ConversationState, ToolOutput, ToolSet};
use futures::StreamExt;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

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
        let run = Run {
            inner,
            state,
            cancel: cancel.clone(),
            tx: tx.clone(),
            max_turns,
            approval_handler,
            commit,
            tool_client: options.tool_client,
            depth: options.depth,
            child_usage: UsageSink::default(),
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
    tokio::spawn(task.instrument(span));
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
    tool_client: Option<Arc<dyn ClientChannel>>,
    /// How many agent tools deep this run is (the top run: 0).
    depth: usize,
    /// The usage of the agents this run's tools ran ([`Agent::as_tool`](crate::Agent::as_tool)).
    child_usage: UsageSink,
}

/// A run's progress between turns.
struct Progress {
    request: ModelRequest,
    records: Vec<ToolCallRecord>,
    usage: Usage,
    requests: Vec<RequestUsage>,
    turns: usize,
}

impl Progress {
    /// Counts one model request's tokens (and cost, when priced).
    fn count_request(&mut self, inner: &AgentInner, usage: Usage, definition_tokens: usize) {
        let model = inner.model.name();
        self.usage += usage;
        self.requests.push(RequestUsage {
            model: model.to_owned(),
            usage,
            cost_usd: inner.prices.price(model).map(|p| p.cost(usage)),
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
        let reply = Reply {
            text,
            messages: self.request.messages,
            tool_calls: self.records,
            usage: self.usage,
            requests: self.requests,
            cost_usd,
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
}

impl Run {
    async fn emit(&self, event: AgentEvent) -> Result<(), AgentError> {
        // The receiver is gone: the caller dropped the stream, so stop.
        self.tx
            .send(Ok(event))
            .await
            .map_err(|_| AgentError::Cancelled)
    }

    async fn run(self, begin: Begin) -> Result<(), AgentError> {
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err(AgentError::Cancelled),
            r = ready_sources(&self.inner) => r?,
        }
        let mut run = match begin {
            Begin::Fresh(messages) => Progress {
                request: ModelRequest::new(messages),
                records: Vec::new(),
                usage: Usage::default(),
                requests: Vec::new(),
                turns: 0,
            },
            Begin::Resume(paused, decisions) => {
                self.finish_paused_turn(*paused, &decisions).await?
            }
        };
        run.request = run.request.settings(self.inner.settings.clone());
        run.request.system = system_prompt(&self.inner);
        let max_turns = self.max_turns;
        for turn in run.turns + 1..=max_turns {
            let offer = super::offer::current(&self.inner)?;
            let turn_tools = super::deferral::plan(&self.inner, &offer, &run.request.messages);
            let tools = turn_tools.tools;
            run.request.tools = turn_tools.definitions;
            let out = self
                .model_turn(&run.request, turn_tools.definition_tokens)
                .await?;
            run.count_request(&self.inner, out.usage, turn_tools.definition_tokens);
            run.turns = turn;
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

            if out.calls.is_empty() {
                self.emit(AgentEvent::TurnFinished {
                    turn,
                    usage: out.usage,
                })
                .await?;
                let reply = run.into_reply(out.text, RunStatus::Completed);
                if let Some(commit) = &self.commit {
                    commit.save(&reply.messages).await?;
                }
                return self.emit(AgentEvent::Done(Box::new(reply))).await;
            }

            let outputs = vec![None; out.calls.len()];
            let calls = self
                .turn_context(&tools)
                .run_calls(&out.calls, outputs, None)
                .await;
            run.count_children(&self.child_usage);
            match calls? {
                TurnCalls::Done(outputs) => run.push_results(out.calls, outputs),
                TurnCalls::Paused { outputs, pending } => {
                    return self.pause(run, out, outputs, pending).await;
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

    fn turn_context<'a>(&'a self, tools: &'a ToolSet) -> TurnContext<'a> {
        TurnContext {
            inner: &self.inner,
            tools,
            state: &self.state,
            cancel: &self.cancel,
            tx: &self.tx,
            approval_handler: self.approval_handler.as_ref(),
            tool_client: self.tool_client.as_ref(),
            caller: CallerRun::default()
                .with(ParentRun {
                    depth: self.depth,
                    approval_handler: self.approval_handler.clone(),
                })
                .with(self.child_usage.clone()),
        }
    }

    /// Ends the run with an interrupted reply carrying its [`RunState`].
    async fn pause(
        &self,
        run: Progress,
        out: TurnOutput,
        outputs: Vec<Option<ToolOutput>>,
        pending: Vec<ApprovalRequest>,
    ) -> Result<(), AgentError> {
        let mut questions: std::collections::HashMap<String, ApprovalRequest> = pending
            .iter()
            .map(|r| (r.call_id.clone(), r.clone()))
            .collect();
        let calls: Vec<PausedCall> = out
            .calls
            .into_iter()
            .zip(outputs)
            .map(|(call, output)| {
                let approval = if output.is_none() {
                    questions.remove(&call.id)
                } else {
                    None
                };
                PausedCall {
                    call,
                    output,
                    approval,
                }
            })
            .collect();
        let (messages, records, usage, requests, turns) = (
            run.request.messages.clone(),
            run.records.clone(),
            run.usage,
            run.requests.clone(),
            run.turns,
        );
        let mut reply = run.into_reply(out.text.clone(), RunStatus::Interrupted);
        // The interrupted reply also shows the paused turn's finished calls.
        reply.tool_calls.extend(calls.iter().filter_map(|c| {
            c.output.clone().map(|output| ToolCallRecord {
                call: c.call.clone(),
                output,
            })
        }));
        let paused = PausedTurn {
            text: out.text,
            usage: out.usage,
            calls,
        };
        let mut state = RunState::new(
            messages,
            records,
            paused,
            usage,
            turns,
            self.state.snapshot(),
        );
        state.requests = requests;
        reply.pending = pending;
        reply.state = Some(state);
        self.emit(AgentEvent::Done(Box::new(reply))).await
    }

    /// Runs or denies a paused turn's pending calls by their answers, and
    /// picks the run up after that turn.
    async fn finish_paused_turn(
        &self,
        paused: RunState,
        decisions: &Decisions,
    ) -> Result<Progress, AgentError> {
        paused.check()?;
        let offer = super::offer::current(&self.inner)?;
        let tools = super::deferral::plan(&self.inner, &offer, &paused.messages).tools;
        let (calls, outputs): (Vec<_>, Vec<_>) = paused
            .turn
            .calls
            .into_iter()
            .map(|c| (c.call, c.output))
            .unzip();
        let mut run = Progress {
            request: ModelRequest::new(paused.messages),
            records: paused.tool_calls,
            usage: paused.usage,
            requests: paused.requests,
            turns: paused.turns,
        };
        let done = self
            .turn_context(&tools)
            .run_calls(&calls, outputs, Some(decisions))
            .await;
        run.count_children(&self.child_usage);
        match done? {
            TurnCalls::Done(outputs) => run.push_results(calls, outputs),
            TurnCalls::Paused { .. } => {
                return Err(AgentError::Internal(
                    "a resumed turn asked for approval again".into(),
                ));
            }
        }
        self.emit(AgentEvent::TurnFinished {
            turn: run.turns,
            usage: paused.turn.usage,
        })
        .await?;
        Ok(run)
    }

    /// Streams one model turn, forwarding text deltas (`model: sampling`
    /// asks the run's MCP client).
    async fn model_turn(
        &self,
        request: &ModelRequest,
        tool_tokens: usize,
    ) -> Result<TurnOutput, AgentError> {
        crate::model::with_sampling_client(
            self.tool_client.clone(),
            self.model_turn_inner(request, tool_tokens),
        )
        .await
    }

    async fn model_turn_inner(
        &self,
        request: &ModelRequest,
        tool_tokens: usize,
    ) -> Result<TurnOutput, AgentError> {
        let trimmed = super::context::fit(request, self.inner.context_budget, tool_tokens);
        let request = trimmed.as_ref().unwrap_or(request);
        let model = &self.inner.model;
        let mut stream = telemetry::traced_stream(
            model.name(),
            request,
            self.inner.record_content,
            self.inner.prices.price(model.name()),
            model.stream(request),
        );
        let mut out = TurnOutput {
            text: String::new(),
            blocks: Vec::new(),
            calls: Vec::new(),
            usage: Usage::default(),
        };
        loop {
            let event = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Err(AgentError::Cancelled),
                e = stream.next() => e,
            };
            match event {
                None => break,
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(ModelEvent::TextDelta(t))) => {
                    out.text.push_str(&t);
                    self.emit(AgentEvent::TextDelta(t)).await?;
                }
                Some(Ok(ModelEvent::ThinkingDelta(t))) => {
                    self.emit(AgentEvent::ThinkingDelta(t)).await?;
                }
                Some(Ok(ModelEvent::ToolCall(c))) => out.calls.push(c),
                Some(Ok(ModelEvent::Usage(u))) => out.usage += u,
                Some(Ok(ModelEvent::Provider(block))) => out.blocks.push(block),
                Some(Ok(_)) => {}
            }
        }
        Ok(out)
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
