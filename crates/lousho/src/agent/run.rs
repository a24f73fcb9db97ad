//! The turn loop: model → tool calls (concurrent, bounded) → results → model.

use super::builder::{definitions, validate_tool};
use super::execute::run_tool_calls;
use super::{
    AgentError, AgentEvent, AgentInner, AgentStream, Reply, RunStatus, SendOptions, ToolCallRecord,
};
use crate::model::{
    Message, ModelEvent, ModelRequest, Part, ToolCall, ToolDefinition, ToolResult, Usage,
};
use crate::tool::{ConversationState, ToolSet};
use futures::StreamExt;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const EVENT_BUFFER: usize = 64;

/// Spawns a run and returns its event stream.
pub(crate) fn start(
    inner: Arc<AgentInner>,
    messages: Vec<Message>,
    state: ConversationState,
    options: SendOptions,
    history: Option<Arc<Mutex<Vec<Message>>>>,
) -> AgentStream {
    let cancel = match &options.cancel {
        Some(parent) => parent.child_token(),
        None => CancellationToken::new(),
    };
    let (tx, rx) = mpsc::channel(EVENT_BUFFER);
    let guard = cancel.clone().drop_guard();
    tokio::spawn(async move {
        let result = Run {
            inner,
            state,
            cancel,
            tx: tx.clone(),
        }
        .run(messages)
        .await;
        if let Err(e) = result {
            let _ = tx.send(Err(e)).await;
        }
    });
    AgentStream::new(rx, guard, history)
}

/// Connects every tool source, in parallel.
pub(crate) async fn ready_sources(inner: &AgentInner) -> Result<(), AgentError> {
    if inner.sources.is_empty() {
        return Ok(());
    }
    let results = futures::future::join_all(inner.sources.iter().map(|s| s.ready())).await;
    for r in results {
        r?;
    }
    Ok(())
}

/// The tools of this turn: the agent's own plus its sources'.
pub(crate) fn snapshot_tools(
    inner: &AgentInner,
) -> Result<(ToolSet, Arc<[ToolDefinition]>), AgentError> {
    if inner.sources.is_empty() {
        return Ok((inner.tools.clone(), inner.tool_definitions.clone()));
    }
    let mut set = inner.tools.clone();
    for source in &inner.sources {
        for tool in source.tools() {
            if let Err(e) = validate_tool(tool.as_ref()) {
                tracing::warn!(source = source.name(), error = %e, "skipping a tool");
                continue;
            }
            set.insert(tool)?;
        }
    }
    let defs = definitions(&set);
    Ok((set, defs))
}

struct Run {
    inner: Arc<AgentInner>,
    state: ConversationState,
    cancel: CancellationToken,
    tx: mpsc::Sender<Result<AgentEvent, AgentError>>,
}

/// One model turn's output.
struct TurnOutput {
    text: String,
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

    async fn run(self, messages: Vec<Message>) -> Result<(), AgentError> {
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err(AgentError::Cancelled),
            r = ready_sources(&self.inner) => r?,
        }
        let mut request = ModelRequest::new(messages).settings(self.inner.settings.clone());
        request.system.clone_from(&self.inner.prompt);
        let mut records = Vec::new();
        let mut usage = Usage::default();
        let max_turns = self.inner.max_turns;
        for turn in 1..=max_turns {
            let (tools, defs) = snapshot_tools(&self.inner)?;
            request.tools = defs;
            let out = self.model_turn(&request).await?;
            usage += out.usage;
            let mut parts = Vec::with_capacity(out.calls.len() + 1);
            if !out.text.is_empty() {
                parts.push(Part::Text {
                    text: out.text.clone(),
                });
            }
            parts.extend(out.calls.iter().cloned().map(Part::ToolCall));
            request.messages.push(Message {
                role: crate::model::Role::Assistant,
                parts,
            });

            if out.calls.is_empty() {
                self.emit(AgentEvent::TurnFinished {
                    turn,
                    usage: out.usage,
                })
                .await?;
                let reply = Reply {
                    text: out.text,
                    messages: request.messages,
                    tool_calls: records,
                    usage,
                    turns: turn,
                    status: RunStatus::Completed,
                };
                return self.emit(AgentEvent::Done(Box::new(reply))).await;
            }

            for call in &out.calls {
                self.emit(AgentEvent::ToolCallStarted(call.clone())).await?;
            }
            let outputs = run_tool_calls(
                &tools,
                &out.calls,
                &self.state,
                &self.cancel,
                self.inner.max_parallel_tools,
                &self.tx,
            )
            .await?;
            let mut results = Vec::with_capacity(outputs.len());
            for (call, output) in out.calls.into_iter().zip(outputs) {
                results.push(ToolResult {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    output: output.clone(),
                });
                records.push(ToolCallRecord { call, output });
            }
            request.messages.push(Message::tool_results(results));
            self.emit(AgentEvent::TurnFinished {
                turn,
                usage: out.usage,
            })
            .await?;
        }
        Err(AgentError::MaxTurnsExceeded { max_turns })
    }

    /// Streams one model turn, forwarding text deltas.
    async fn model_turn(&self, request: &ModelRequest) -> Result<TurnOutput, AgentError> {
        let mut stream = self.inner.model.stream(request);
        let mut out = TurnOutput {
            text: String::new(),
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
                Some(Ok(ModelEvent::ToolCall(c))) => out.calls.push(c),
                Some(Ok(ModelEvent::Usage(u))) => out.usage += u,
                Some(Ok(ModelEvent::Finished(_))) => {}
            }
        }
        Ok(out)
    }
}
