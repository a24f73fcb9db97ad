//! One model turn: the request streamed from the model (or, with a model
//! list, from the first model of it that answers), its text forwarded.

use super::{Run, TurnOutput, budgeted};
use crate::agent::{AgentError, AgentEvent};
use crate::model::{ModelEvent, ModelRequest, Usage};
use crate::telemetry;
use futures::StreamExt;

impl Run {
    /// Streams one model turn, forwarding text deltas (`model: sampling`
    /// asks the run's MCP client). `summarised`: the conversation may hold
    /// a summary ([`crate::agent::context::fit`]).
    pub(super) async fn model_turn(
        &self,
        request: &ModelRequest,
        tool_tokens: usize,
        summarised: bool,
    ) -> Result<TurnOutput, AgentError> {
        crate::model::with_sampling_client(
            self.tool_client.clone(),
            self.model_turn_inner(request, tool_tokens, summarised),
        )
        .await
    }

    async fn model_turn_inner(
        &self,
        request: &ModelRequest,
        tool_tokens: usize,
        summarised: bool,
    ) -> Result<TurnOutput, AgentError> {
        let trim = self.inner.compaction.as_ref().map(|c| c.tool_result_bytes);
        let trimmed = crate::agent::context::fit(
            request,
            self.inner.context_budget,
            tool_tokens,
            trim,
            summarised,
        );
        let request = trimmed.as_ref().unwrap_or(request);
        if self.inner.fallbacks.is_empty() {
            return self
                .stream_turn(0, request, false)
                .await
                .map_err(|f| f.error);
        }
        // Boxed: a model list is the rare case, and its future (a turn of
        // each model) would double the common turn's state.
        Box::pin(self.fail_over(request)).await
    }

    /// Streams one turn of the list's model number `model` (`fail_fast`:
    /// another model follows it, see [`Model::stream_with_fallback`]).
    ///
    /// [`Model::stream_with_fallback`]: crate::Model::stream_with_fallback
    pub(super) async fn stream_turn(
        &self,
        model: usize,
        request: &ModelRequest,
        fail_fast: bool,
    ) -> Result<TurnOutput, TurnFailure> {
        let index = model;
        let model = self.inner.model_at(index);
        let stream = if fail_fast {
            model.stream_with_fallback(request)
        } else {
            model.stream(request)
        };
        let mut stream = telemetry::traced_stream(
            model.name(),
            request,
            self.inner.record_content,
            self.inner.model_price(index),
            stream,
        );
        let mut out = TurnOutput {
            text: String::new(),
            blocks: Vec::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            cut: false,
            model: index,
        };
        // Whether some of the turn's output reached the caller (no failover
        // after that).
        let mut emitted = false;
        let deadline = self.budget.as_ref().and_then(|b| b.deadline);
        loop {
            let event = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Err(AgentError::Cancelled.into()),
                () = budgeted::wait_until(deadline), if deadline.is_some() => {
                    out.cut = true;
                    break;
                }
                e = stream.next() => e,
            };
            match event {
                None => break,
                Some(Err(e)) => {
                    return Err(TurnFailure {
                        error: e.into(),
                        emitted,
                    });
                }
                Some(Ok(ModelEvent::TextDelta(t))) => {
                    emitted = true;
                    out.text.push_str(&t);
                    self.emit(AgentEvent::TextDelta(t)).await?;
                }
                Some(Ok(ModelEvent::ThinkingDelta(t))) => {
                    emitted = true;
                    self.emit(AgentEvent::ThinkingDelta(t)).await?;
                }
                Some(Ok(ModelEvent::ToolCall(c))) => out.calls.push(c),
                Some(Ok(ModelEvent::Usage(u))) => out.usage += u,
                Some(Ok(ModelEvent::Provider(block))) => out.blocks.push(block),
                Some(Ok(ModelEvent::Throttled(wait))) => {
                    let model = model.name().to_owned();
                    self.emit(AgentEvent::Throttled { model, wait }).await?;
                }
                Some(Ok(_)) => {}
            }
        }
        Ok(out)
    }
}

/// Why a model turn failed, and whether some of its output had reached the
/// caller.
pub(super) struct TurnFailure {
    pub(super) error: AgentError,
    pub(super) emitted: bool,
}

impl From<AgentError> for TurnFailure {
    /// A failure of the run itself (the caller went away, a cancel): never
    /// failed over.
    fn from(error: AgentError) -> Self {
        Self {
            error,
            emitted: true,
        }
    }
}
