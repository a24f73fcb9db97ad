//! `lousho run --json` (`--output json`): the run as JSON Lines on stdout,
//! one event per line, for scripts and CI. The format (docs/cli.md has the
//! schema): every line is an object with a `type`:
//!
//! - `text`: `{"type":"text","text":…}` a piece of the answer;
//! - `tool_call`: `{"type":"tool_call","id","name","arguments"}` a call starts;
//! - `approval`: `{"type":"approval","id","name","arguments","server"}` a
//!   call needs approval (asked on the terminal, or denied without one);
//! - `tool_result`: `{"type":"tool_result","id","name","is_error","text"}`;
//! - `usage`: `{"type":"usage","turn","input_tokens","output_tokens"}` after
//!   each model turn;
//! - `compacted`: `{"type":"compacted","from","to","model","text","input_tokens","output_tokens"}`
//!   context compaction summarised messages `from..to` (positions from 0,
//!   the end excluded) before a model turn;
//! - `done`: `{"type":"done","status","text","turns","input_tokens","output_tokens","pending"}`
//!   the final answer, always the last line of a run that ended
//!   (`status`: `completed`, or `interrupted` when it paused for approval,
//!   `pending` then lists the calls waiting: `[{"id","name","arguments"}]`,
//!   or `budget_exceeded` when it reached a limit of its `budget:`, `budget`
//!   then says which: `{"limit","scope"}`, else `null`; `output`: the
//!   answer as JSON when the spec has `output:`, else `null`);
//! - `error`: `{"type":"error","message"}` the run failed (exit code 1, or
//!   as docs/cli.md lists), the last line.

use crate::progress::Activity;
use futures::StreamExt;
use lousho::agent::AgentStream;
use lousho::{AgentEvent, Reply};
use serde_json::{Value, json};
use std::io::{IsTerminal, Write};

/// Writes the stream's events as JSON Lines; returns the reply. A spinner
/// shows on stderr when it is a terminal and stdout is not (piped to a script).
/// With `thinking`, thinking pieces are `thinking` events.
pub async fn print_stream(
    mut stream: AgentStream,
    model: &str,
    thinking: bool,
) -> anyhow::Result<Reply> {
    let mut out = std::io::stdout();
    let mut activity = Activity::new(model, !std::io::stdout().is_terminal());
    activity.waiting();
    while let Some(event) = stream.next().await {
        match &event {
            Ok(AgentEvent::ToolCallStarted(call)) => activity.call_started(&call.id, &call.name),
            Ok(AgentEvent::ToolCallFinished { call, .. }) => activity.call_finished(&call.id),
            Ok(AgentEvent::TurnFinished { .. }) => activity.waiting(),
            Ok(AgentEvent::ModelFailover { to, .. }) => activity.failed_over(to),
            Ok(AgentEvent::Throttled { model, wait }) => activity.throttled(model, *wait),
            Ok(AgentEvent::SessionBusy { session, holder }) => {
                crate::progress::session_busy(session, holder);
                activity.session_busy(session);
            }
            _ => {}
        }
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                line(
                    &mut out,
                    &json!({"type": "error", "message": e.to_string()}),
                )?;
                return Err(e.into());
            }
        };
        match event {
            AgentEvent::TextDelta(text) => line(&mut out, &json!({"type": "text", "text": text}))?,
            AgentEvent::ThinkingDelta(text) if thinking => {
                line(&mut out, &json!({"type": "thinking", "text": text}))?;
            }
            AgentEvent::ToolCallStarted(call) => line(
                &mut out,
                &json!({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}),
            )?,
            AgentEvent::ApprovalRequested(request) => line(
                &mut out,
                &json!({"type": "approval", "id": request.call_id, "name": request.tool_name,
                        "arguments": request.input, "server": request.origin}),
            )?,
            AgentEvent::ToolCallFinished { call, output } => line(
                &mut out,
                &json!({"type": "tool_result", "id": call.id, "name": call.name,
                        "is_error": output.is_error, "text": output.to_model_text()}),
            )?,
            AgentEvent::ModelFailover { from, to, reason } => line(
                &mut out,
                &json!({"type": "failover", "from": from, "to": to, "reason": reason}),
            )?,
            AgentEvent::Compacted { summary, usage } => line(
                &mut out,
                &json!({"type": "compacted", "from": summary.from, "to": summary.to,
                        "model": summary.model, "text": summary.text,
                        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}),
            )?,
            AgentEvent::TurnFinished { turn, usage } => line(
                &mut out,
                &json!({"type": "usage", "turn": turn, "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens}),
            )?,
            AgentEvent::Done(reply) => {
                line(
                    &mut out,
                    &json!({"type": "done", "status": reply.status.as_str(), "budget": budget(&reply.status), "output": reply.output, "text": reply.text,
                            "turns": reply.turns, "model": reply.model, "input_tokens": reply.usage.input_tokens,
                            "output_tokens": reply.usage.output_tokens,
                            "pending": reply.pending.iter().map(|r| json!({
                                "id": r.call_id, "name": r.tool_name, "arguments": r.input,
                            })).collect::<Vec<_>>()}),
                )?;
                return Ok(*reply);
            }
            _ => {}
        }
    }
    anyhow::bail!("the run ended without a reply")
}

/// The limit a run stopped at (`null` unless `budget_exceeded`).
fn budget(status: &lousho::agent::RunStatus) -> serde_json::Value {
    match status {
        lousho::agent::RunStatus::BudgetExceeded { limit, scope } => {
            json!({"limit": limit.as_str(), "scope": scope})
        }
        _ => serde_json::Value::Null,
    }
}

fn line(out: &mut impl Write, value: &Value) -> std::io::Result<()> {
    writeln!(out, "{value}")?;
    out.flush()
}
