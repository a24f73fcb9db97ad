//! The agent as one MCP tool: `{ "message": string }` in, the final text out
//! — or, for an agent with an output schema, its answer as
//! `structuredContent` (the schema declared as the tool's `outputSchema`),
//! the same JSON as text beside it.
//! Each call is a fresh run (of a stored conversation with sessions on: see
//! [`sessions`](super::sessions)); cancelling the request cancels it; progress
//! notifications keep clients with request timeouts waiting. The agent's
//! budget applies to each call, its session budget to the calls of one MCP
//! session together; a call stopped by either ends with an `isError` result
//! naming the limit.

use super::approval;
use super::arguments::{self, ArgumentError};
use super::limits::RunPermit;
use super::peer_channel::PeerChannel;
use super::result::error_result;
use super::sessions::{self, Conversations, Requested};
use crate::agent::{
    AgentEvent, AgentStream, BudgetScope, Reply, RunRequest, RunStatus, SessionBudget, TextProgress,
};
use crate::mcp::usage_meta::with_usage;
use crate::model::{Message, Part, Role, Usage};
use crate::session::StoreError;
use crate::{Agent, AgentError};
use futures::StreamExt;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a cancelled run gets to stop (its tools see their tokens fire)
/// before the handler stops waiting for it.
const WIND_DOWN: Duration = Duration::from_secs(3);

/// The agent tool's input schema (with `session` when the server keeps
/// sessions).
pub(crate) fn input_schema(sessions: bool) -> Value {
    let mut schema = crate::agent::message_schema();
    if sessions {
        schema["properties"]["session"] = sessions::session_property();
    }
    schema
}

/// The agent tool's `outputSchema`: the agent's output schema (its
/// answer's), and with sessions on `{reply, session}` around it (`reply`
/// plain text without one). `None`: no schema, no sessions.
pub(crate) fn output_schema(agent: &Agent, sessions: bool) -> Option<Map<String, Value>> {
    let answer = agent.inner.output.as_ref().map(|o| &o.schema.schema);
    if sessions {
        return Some(sessions::output_schema(answer));
    }
    match answer {
        Some(Value::Object(schema)) => Some(schema.clone()),
        _ => None,
    }
}

/// What ended a call of the agent tool.
pub(crate) enum AgentCallEnd {
    /// A result for the client (success or `isError`).
    Result(CallToolResult),
    /// The request was cancelled; nothing is sent back.
    Cancelled,
}

/// [`call`] detached from any request (a task's run, or one asked in
/// input-required rounds): only `run_cancel` stops it. `None` when it was
/// cancelled.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn call_detached(
    agent: Agent,
    arguments: Option<Map<String, Value>>,
    run_cancel: CancellationToken,
    channel: PeerChannel,
    approver: Approver,
    conversations: Option<Conversations>,
    permit: Option<RunPermit>,
    budget: Option<SessionBudget>,
) -> Option<CallToolResult> {
    let detached = CancellationToken::new();
    let end = call(
        &agent,
        arguments,
        &detached,
        run_cancel,
        channel,
        approver,
        conversations.as_ref(),
        permit.as_ref(),
        budget,
    )
    .await;
    match end {
        AgentCallEnd::Result(r) => Some(r),
        AgentCallEnd::Cancelled => None,
    }
}

/// Runs one call of the agent tool; with a session store, of the
/// conversation the call names (the result then names it too). The run's
/// tokens count toward its caller's day under `permit`; `budget` is the MCP
/// session's (its calls' together), over the run's own.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn call(
    agent: &Agent,
    arguments: Option<Map<String, Value>>,
    request_cancel: &CancellationToken,
    run_cancel: CancellationToken,
    channel: PeerChannel,
    approver: Approver,
    conversations: Option<&Conversations>,
    permit: Option<&RunPermit>,
    budget: Option<SessionBudget>,
) -> AgentCallEnd {
    let opened = open_run(agent, arguments.as_ref(), conversations, request_cancel).await;
    let (mut request, session) = match opened {
        Ok(opened) => opened,
        Err(end) => return end,
    };
    if budget.is_some() {
        request = request.session_budget(budget);
    }
    let request = request
        .cancel(run_cancel.clone())
        .tool_client(Arc::new(channel.clone()));
    let (request, unapproved) = with_approver(request, approver, &channel);
    let mut used = Usage::default();
    let end = drive(
        request.stream(),
        &channel,
        request_cancel,
        run_cancel,
        &mut used,
    )
    .await;
    // A reply's usage is the whole run's (its agent tools' too); a run that
    // failed or was cancelled counts what its finished turns and summaries
    // used, so runs that fail (past their turns, say) are not free.
    let spent = match &end {
        RunEnd::Reply(reply) => reply.usage.total(),
        _ => used.total(),
    };
    if let Some(permit) = permit {
        permit.spent(spent).await;
    }
    match end {
        RunEnd::Cancelled => AgentCallEnd::Cancelled,
        RunEnd::Reply(mut reply) => {
            let requests = std::mem::take(&mut reply.requests);
            let result = reply_result(*reply, &unapproved);
            AgentCallEnd::Result(with_usage(
                with_session(result, session.as_deref()),
                &requests,
            ))
        }
        RunEnd::Failed(message) => {
            AgentCallEnd::Result(with_session(error_result(message), session.as_deref()))
        }
        RunEnd::StoreFailed(e) => {
            let id = session.as_deref().unwrap_or_default();
            let message = sessions::store_failure(id, &e);
            AgentCallEnd::Result(with_session(error_result(message), session.as_deref()))
        }
    }
}

/// `result` naming the conversation `session`, when there is one.
fn with_session(result: CallToolResult, session: Option<&str>) -> CallToolResult {
    match session {
        Some(id) => sessions::with_session(result, id),
        None => result,
    }
}

/// The run the call asks for, and its session's id (sessions on): reads
/// the arguments, opens the conversation. A call that repeats the message of
/// a run of its session that stopped without finishing (the client retrying
/// after the replica running it died) goes on with that run from its
/// journal. `Err` ends the call there.
async fn open_run(
    agent: &Agent,
    arguments: Option<&Map<String, Value>>,
    conversations: Option<&Conversations>,
    request_cancel: &CancellationToken,
) -> Result<(RunRequest, Option<String>), AgentCallEnd> {
    let refused = |e: ArgumentError| AgentCallEnd::Result(error_result(e.to_string()));
    let message = arguments::message(arguments).map_err(refused)?;
    let requested =
        sessions::requested(arguments, conversations.map(|c| &c.store)).map_err(refused)?;
    let Some(conversations) = conversations else {
        return Ok((agent.send(message), None));
    };
    let (id, continued) = match requested {
        Requested::Continue(id) => (id, true),
        Requested::New => (
            sessions::new_session_id().map_err(|e| {
                AgentCallEnd::Result(error_result(format!(
                    "could not make a session id (reading /dev/urandom: {e})"
                )))
            })?,
            false,
        ),
    };
    let store_failed = |e: StoreError| {
        tracing::warn!(error = %e, "the served agent's session store failed");
        AgentCallEnd::Result(error_result(sessions::store_failure(&id, &e)))
    };
    let input = Message::from(message);
    let opened = async {
        let session = agent
            .open_session(conversations.store.clone(), id.clone())
            .await?
            .with_lease(conversations.lease);
        let unfinished = if continued {
            session.unfinished_run_of(&input).await?
        } else {
            None
        };
        Ok::<_, StoreError>((session, unfinished))
    };
    let (session, unfinished) = tokio::select! {
        biased;
        () = request_cancel.cancelled() => return Err(AgentCallEnd::Cancelled),
        s = opened => s.map_err(store_failed)?,
    };
    let request = match unfinished {
        Some(run) => {
            tracing::info!(session = %id, run = %run, "a repeated call goes on with the session's unfinished run");
            session.send_again(input, run)
        }
        None => session.send(input),
    };
    Ok((request, Some(id)))
}

/// `request` with its approval questions going to `approver`; who could have
/// approved, for the message of a run that paused anyway.
fn with_approver(
    mut request: RunRequest,
    approver: Approver,
    channel: &PeerChannel,
) -> (RunRequest, Unapproved) {
    let unapproved = match approver {
        Approver::Nobody => Unapproved::Off,
        Approver::Elicit(timeout) => match approval::cannot_ask(channel) {
            Some(why) => Unapproved::CannotAsk(why),
            None => {
                let asker = channel.clone();
                request = request.approval_handler(move |question| {
                    let asker = asker.clone();
                    async move { approval::ask(&asker, question, timeout).await }
                });
                Unapproved::Off
            }
        },
    };
    (request, unapproved)
}

/// How a served run ended.
enum RunEnd {
    /// With a reply (completed, or paused for approval).
    Reply(Box<Reply>),
    /// Cancelled: the call gets no answer.
    Cancelled,
    /// The session store failed.
    StoreFailed(StoreError),
    /// Otherwise failed: the message for the client.
    Failed(String),
}

/// Drives a served run to its end, reporting its steps (tool calls, turns,
/// text) as progress and adding what its finished turns and summaries used
/// to `used`; cancelling the request cancels the run and waits a little for
/// it to wind down.
async fn drive(
    mut stream: AgentStream,
    channel: &PeerChannel,
    request_cancel: &CancellationToken,
    run_cancel: CancellationToken,
    used: &mut Usage,
) -> RunEnd {
    let mut text = TextProgress::new();
    loop {
        let due = text.due_at();
        let event = tokio::select! {
            biased;
            () = request_cancel.cancelled() => {
                run_cancel.cancel();
                // Let the run wind down so its tools see their tokens fire and
                // stop before this call is over.
                let _ = tokio::time::timeout(WIND_DOWN, async {
                    while stream.next().await.is_some() {}
                })
                .await;
                return RunEnd::Cancelled;
            }
            () = crate::agent::sleep_until_due(due), if due.is_some() => {
                if let Some(t) = text.flush() {
                    channel.run_step(t).await;
                }
                continue;
            }
            e = stream.next() => e,
        };
        if !matches!(event, Some(Ok(AgentEvent::TextDelta(_))))
            && let Some(t) = text.flush()
        {
            channel.run_step(t).await;
        }
        let event = match event {
            None => return RunEnd::Failed("the agent stopped without a reply".to_owned()),
            Some(Err(AgentError::Cancelled)) => return RunEnd::Cancelled,
            Some(Err(AgentError::Session(e))) => {
                tracing::warn!(error = %e, "the served agent's session store failed");
                return RunEnd::StoreFailed(e);
            }
            Some(Err(e)) => {
                tracing::warn!(error = %e, "the served agent failed");
                return RunEnd::Failed(format!("the agent failed: {e}"));
            }
            Some(Ok(AgentEvent::Done(reply))) => return RunEnd::Reply(reply),
            Some(Ok(event)) => event,
        };
        if let AgentEvent::TurnFinished { usage, .. } | AgentEvent::Compacted { usage, .. } = &event
        {
            *used += *usage;
        }
        let step = match event {
            AgentEvent::TextDelta(delta) => text.push(&delta),
            other => step_message(&other),
        };
        if let Some(step) = step {
            channel.run_step(step).await;
        }
    }
}

/// The progress message for one of a run's events (text deltas aside).
fn step_message(event: &AgentEvent) -> Option<String> {
    Some(match event {
        AgentEvent::ApprovalRequested(question) => {
            format!("asking the user to approve {}", question.tool_name)
        }
        AgentEvent::ToolCallStarted(call) => format!("calling tool {}", call.name),
        AgentEvent::ToolCallFinished { call, output } => {
            let how = if output.is_error {
                "failed"
            } else {
                "finished"
            };
            format!("tool {} {how}", call.name)
        }
        AgentEvent::TurnFinished { turn, .. } => format!("turn {turn} finished"),
        AgentEvent::ModelFailover { from, to, .. } => format!("{from} failed; asking {to}"),
        AgentEvent::Throttled { model, wait } => {
            format!(
                "waiting about {} s for {model}'s rate limit",
                wait.as_secs().max(1)
            )
        }
        AgentEvent::SessionBusy { .. } => {
            "waiting for another call of this session to finish".to_owned()
        }
        AgentEvent::Compacted { summary, .. } => format!(
            "summarised {} of the conversation (by {})",
            summary.replaced(),
            summary.model
        ),
        _ => return None,
    })
}

/// Who answers a served run's approval questions.
pub(crate) enum Approver {
    /// Nobody (`ServeApprovals::Deny` or `Allow`): the run pauses, `isError`.
    Nobody,
    /// The client's user, through an elicitation form (`elicitation/create`
    /// on stdio and stateful HTTP, an input-required round on 2026-07-28).
    Elicit(Duration),
}

/// Why nobody approved a call of a run that paused.
enum Unapproved {
    /// `ServeApprovals::Deny` (or `Allow`): nobody is asked.
    Off,
    /// `ServeApprovals::Elicit`, but this client cannot be asked: why.
    CannotAsk(String),
}

/// The result for a finished run: its text, or `isError` when the run paused
/// (for approval) instead of completing.
fn reply_result(reply: Reply, unapproved: &Unapproved) -> CallToolResult {
    if reply.status == RunStatus::Completed {
        // With an output schema: the checked answer as `structuredContent`,
        // and its JSON as text for clients that read only text.
        return match reply.output {
            Some(output) => CallToolResult::structured(output),
            None => CallToolResult::success(vec![ContentBlock::text(reply.text)]),
        };
    }
    if let RunStatus::BudgetExceeded { limit, scope } = reply.status {
        let whose = match scope {
            BudgetScope::Session => "the budget of this MCP session's calls together",
            _ => "the budget of one call",
        };
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        return error_result(format!(
            "budget exceeded: the agent stopped at the `{}` limit of {whose} (this call: {}, {} \
             tokens in, {} out, {}); its partial answer: {}",
            limit.as_str(),
            plural(reply.turns, "turn"),
            reply.usage.input_tokens,
            reply.usage.output_tokens,
            plural(reply.tool_calls.len(), "tool call"),
            reply.text
        ));
    }
    let pending = pending_tools(&reply);
    let which = if pending.is_empty() {
        "a tool".to_owned()
    } else {
        pending
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    error_result(match unapproved {
        Unapproved::Off => format!(
            "approval needed: the agent paused before calling {which}, and this server does not \
             ask for approvals; ask the client's user with `ServeApprovals::Elicit` (spec: \
             `serve.approvals: elicit`), allow the tool with a permission rule, or change its \
             approval policy"
        ),
        Unapproved::CannotAsk(why) => {
            format!("approval needed: the agent paused before calling {which}, and {why}")
        }
    })
}

/// The tools the run's last assistant message called without getting results.
fn pending_tools(reply: &Reply) -> Vec<String> {
    let answered: HashSet<&str> = reply
        .tool_calls
        .iter()
        .map(|r| r.call.id.as_str())
        .collect();
    let Some(last) = reply
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
    else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for part in &last.parts {
        if let Part::ToolCall(call) = part
            && !answered.contains(call.id.as_str())
            && !names.contains(&call.name)
        {
            names.push(call.name.clone());
        }
    }
    names
}
