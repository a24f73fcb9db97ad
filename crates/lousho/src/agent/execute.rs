//! Running one turn's tool calls: concurrently (bounded), panics and errors
//! turned into error results, cancellation passed to the tools.

use super::{AgentError, AgentEvent};
use crate::model::ToolCall;
use crate::telemetry::span::record_error;
use crate::tool::{CallerRun, ClientChannel, ConversationState, ToolContext, ToolOutput, ToolSet};
use futures::{FutureExt, StreamExt};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

/// How long tools get to notice a cancellation and return before they are dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// Runs `calls` with at most `limit` at once, each in its span of `spans`
/// (`execute_tool`); results come back in call order.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_tool_calls(
    tools: &ToolSet,
    calls: &[ToolCall],
    spans: Vec<Span>,
    record_content: bool,
    state: &ConversationState,
    cancel: &CancellationToken,
    limit: usize,
    tx: &mpsc::Sender<Result<AgentEvent, AgentError>>,
    client: Option<&Arc<dyn ClientChannel>>,
    caller: &CallerRun,
    hooks: &super::hooks::Hooks,
    journal: Option<&super::journal::RunJournal>,
) -> Result<Vec<ToolOutput>, AgentError> {
    let mut outputs: Vec<Option<ToolOutput>> = vec![None; calls.len()];
    let pending: Vec<_> = calls
        .iter()
        .zip(spans)
        .enumerate()
        .map(|(i, (call, span))| {
            let ctx = ToolContext::new(call.id.clone())
                .with_cancel(cancel.child_token())
                .with_state(state.clone())
                .with_client(client.cloned())
                .with_caller(caller.clone())
                .with_idempotency_key(journal.map(|j| format!("{}/{}", j.run(), call.id)));
            call_one(tools, call, ctx, span, record_content).map(move |out| (i, out))
        })
        .collect();
    let mut running = futures::stream::iter(pending).buffer_unordered(limit);

    loop {
        let next = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            n = running.next() => Some(n),
        };
        // A result that comes back once the run is cancelled (even within
        // the poll that saw the cancel) is most likely the tool giving up:
        // it is neither reported nor journaled, so a resumed run treats the
        // call as in flight instead of taking "cancelled" for its answer.
        if next.is_none() || cancel.is_cancelled() {
            // The tools' tokens have fired; let them wind down, then stop.
            let _ = tokio::time::timeout(CANCEL_GRACE, async {
                while running.next().await.is_some() {}
            })
            .await;
            return Err(AgentError::Cancelled);
        }
        let Some((i, mut output)) = next.flatten() else {
            break;
        };
        if !hooks.is_empty() {
            hooks.after_tool(&calls[i], &mut output, cancel).await?;
        }
        let event = AgentEvent::ToolCallFinished {
            call: calls[i].clone(),
            output: output.clone(),
        };
        tx.send(Ok(event))
            .await
            .map_err(|_| AgentError::Cancelled)?;
        if let Some(journal) = journal {
            journal.result(&calls[i], &output).await?;
        }
        outputs[i] = Some(output);
    }
    Ok(outputs.into_iter().map(Option::unwrap_or_default).collect())
}

/// Runs one call in `span` (its `execute_tool` span, which gets the error
/// or, with `record_content`, the arguments and result); never fails: what
/// goes wrong becomes an error result.
pub(crate) async fn call_one(
    tools: &ToolSet,
    call: &ToolCall,
    ctx: ToolContext,
    span: Span,
    record_content: bool,
) -> ToolOutput {
    let traced = !span.is_disabled();
    if traced && record_content {
        span.record(
            "gen_ai.tool.call.arguments",
            call.arguments.to_string().as_str(),
        );
    }
    let (output, kind) = run_one(tools, call, ctx).instrument(span.clone()).await;
    if traced {
        if output.is_error {
            record_error(&span, kind, &output.to_model_text());
        } else if record_content {
            span.record(
                "gen_ai.tool.call.result",
                crate::telemetry::content_tool_result(&output).as_str(),
            );
        }
    }
    output
}

/// Runs one call; the output and, for an error result, its `error.type`.
async fn run_one(tools: &ToolSet, call: &ToolCall, ctx: ToolContext) -> (ToolOutput, &'static str) {
    let Some(tool) = tools.get(&call.name) else {
        let available: Vec<&str> = tools.names().collect();
        let output = ToolOutput::error(format!(
            "unknown tool `{}`; available tools: {}",
            call.name,
            if available.is_empty() {
                "none".to_owned()
            } else {
                available.join(", ")
            }
        ));
        return (output, "unknown_tool");
    };
    let fut = tool.call(call.arguments.clone(), ctx);
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(Ok(output)) => (output, "tool_error"),
        Ok(Err(e)) => (ToolOutput::error(e.to_string()), "tool_error"),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            tracing::error!(tool = %call.name, %message, "tool panicked");
            (
                ToolOutput::error(format!("tool `{}` panicked: {message}", call.name)),
                "panic",
            )
        }
    }
}
