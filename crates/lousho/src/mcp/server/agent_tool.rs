//! The agent as one MCP tool: `{ "message": string }` in, the final text out.
//! Each call is a fresh run (of a stored conversation with sessions on: see
//! [`sessions`](super::sessions)); cancelling the request cancels it; progress
//! notifications keep clients with request timeouts waiting.

use super::approval;
use super::mrtr;
use super::peer_channel::PeerChannel;
use super::result::error_result;
use super::sessions::{self, Requested};
use crate::agent::{AgentEvent, Reply, RunStatus, TextProgress};
use crate::mcp::usage_meta::with_usage;
use crate::model::{Part, Role};
use crate::session::SessionStore;
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

/// A JSON value's type, as a reader would name it.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What ended a call of the agent tool.
pub(crate) enum Outcome {
    /// A result for the client (success or `isError`).
    Result(CallToolResult),
    /// The request was cancelled; nothing is sent back.
    Cancelled,
}

/// Runs one call of the agent tool; with a session store, of the
/// conversation the call names (the result then names it too).
pub(crate) async fn call(
    agent: &Agent,
    arguments: Option<Map<String, Value>>,
    request_cancel: &CancellationToken,
    run_cancel: CancellationToken,
    channel: PeerChannel,
    approver: Approver,
    store: Option<&Arc<dyn SessionStore>>,
) -> Outcome {
    let message = match arguments.as_ref().and_then(|a| a.get("message")) {
        Some(Value::String(m)) => m.clone(),
        Some(other) => {
            return Outcome::Result(error_result(format!(
                "argument `message` must be a string, not {}: call this tool with {{\"message\": \"<your request>\"}}",
                json_type(other)
            )));
        }
        None => {
            return Outcome::Result(error_result(
                "missing argument `message`: call this tool with {\"message\": \"<your request>\"}",
            ));
        }
    };
    let requested = match sessions::requested(arguments.as_ref(), store) {
        Ok(r) => r,
        Err(message) => return Outcome::Result(error_result(message)),
    };
    let (request, session) = match store {
        None => (agent.send(message), None),
        Some(store) => {
            let id = match requested {
                Requested::Continue(id) => id,
                Requested::New => match sessions::new_session_id() {
                    Ok(id) => id,
                    Err(e) => {
                        return Outcome::Result(error_result(format!(
                            "could not make a session id (reading /dev/urandom: {e})"
                        )));
                    }
                },
            };
            let opened = tokio::select! {
                biased;
                () = request_cancel.cancelled() => return Outcome::Cancelled,
                s = agent.open_session(store.clone(), id.clone()) => s,
            };
            match opened {
                Ok(session) => (session.send(message), Some(id)),
                Err(e) => {
                    tracing::warn!(error = %e, "the served agent's session store failed");
                    return Outcome::Result(error_result(sessions::store_failure(&id, &e)));
                }
            }
        }
    };
    let with_id = |result: CallToolResult| match &session {
        Some(id) => sessions::with_session(result, id),
        None => result,
    };
    let mut request = request
        .cancel(run_cancel.clone())
        .tool_client(Arc::new(channel.clone()));
    // Who could have approved, for the message of a run that paused anyway.
    let unapproved = match approver {
        Approver::Nobody => Unapproved::Off,
        Approver::Rounds(timeout, steps) => {
            request = request.approval_handler(move |question| {
                let steps = steps.clone();
                async move { mrtr::ask(&steps, question, timeout).await }
            });
            Unapproved::Off
        }
        Approver::Elicit(timeout) => match approval::cannot_ask(&channel) {
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
    let mut stream = request.stream();
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
                return Outcome::Cancelled;
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
            None => {
                return Outcome::Result(with_id(error_result("the agent stopped without a reply")));
            }
            Some(Err(AgentError::Cancelled)) => return Outcome::Cancelled,
            Some(Err(AgentError::Session(e))) => {
                tracing::warn!(error = %e, "the served agent's session store failed");
                let id = session.as_deref().unwrap_or_default();
                return Outcome::Result(with_id(error_result(sessions::store_failure(id, &e))));
            }
            Some(Err(e)) => {
                tracing::warn!(error = %e, "the served agent failed");
                return Outcome::Result(with_id(error_result(format!("the agent failed: {e}"))));
            }
            Some(Ok(event)) => event,
        };
        match event {
            AgentEvent::Done(mut reply) => {
                let requests = std::mem::take(&mut reply.requests);
                let result = with_id(reply_result(*reply, &unapproved));
                return Outcome::Result(with_usage(result, &requests));
            }
            AgentEvent::ApprovalRequested(question) => {
                channel
                    .run_step(format!("asking the user to approve {}", question.tool_name))
                    .await;
            }
            AgentEvent::ToolCallStarted(call) => {
                channel
                    .run_step(format!("calling tool {}", call.name))
                    .await;
            }
            AgentEvent::ToolCallFinished { call, output } => {
                let how = if output.is_error {
                    "failed"
                } else {
                    "finished"
                };
                channel.run_step(format!("tool {} {how}", call.name)).await;
            }
            AgentEvent::TextDelta(delta) => {
                if let Some(t) = text.push(&delta) {
                    channel.run_step(t).await;
                }
            }
            AgentEvent::TurnFinished { turn, .. } => {
                channel.run_step(format!("turn {turn} finished")).await;
            }
        }
    }
}

/// Who answers a served run's approval questions.
pub(crate) enum Approver {
    /// Nobody (`ServeApprovals::Deny` or `Allow`): the run pauses, `isError`.
    Nobody,
    /// The client's user, through `elicitation/create` (stdio, stateful HTTP).
    Elicit(Duration),
    /// The client's user, through `InputRequiredResult` rounds (2026-07-28).
    Rounds(Duration, tokio::sync::mpsc::Sender<mrtr::Step>),
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
        return CallToolResult::success(vec![ContentBlock::text(reply.text)]);
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
