//! Calls that become tasks (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663), as a client. A server entry with `tasks` on (the default)
//! declares the extension; a server may then answer a `tools/call` with a
//! task (`resultType: "task"`) instead of the result. The call follows it:
//! `tasks/get` every `pollIntervalMs` (each poll within the call timeout),
//! the status message shown like a progress notification, input requests
//! answered through the connection's handler (as in input-required rounds)
//! and sent back with `tasks/update`, until the task ends; its result is the
//! tool result. A cancelled run (or a dropped call) sends `tasks/cancel`.
//!
//! Which calls become tasks is the server's choice (SEP-2663 has no
//! per-tool `taskSupport`): a server that requires the extension refuses
//! calls of a client without it (`-32021`), and the error says to turn
//! `tasks` on.
//!
//! The task's id is kept in the conversation state under the tool call's id
//! while it runs, so a run resumed with the same call picks the task up
//! instead of starting the work again.

use super::call_failure::{CallFailure, TaskFailure};
use super::input_rounds::{self, RoundFailure};
use super::live::Live;
use rmcp::model::{
    CallToolResult, CancelTaskParams, CancelTaskRequest, ClientRequest, CreateTaskResult,
    DetailedTask, ErrorData, GetTaskParams, GetTaskRequest, InputResponses, ServerResult,
    TaskPayload, UpdateTaskParams, UpdateTaskRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::tool::{ConversationState, ToolContext};

/// The poll interval when the server suggests none (as rmcp's servers
/// default to; its `task_manager` is server-side only).
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// Bounds on a server's suggested poll interval.
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_secs(10);
/// How long a `tasks/cancel` may take when a call is dropped.
const CANCEL_LIMIT: Duration = Duration::from_secs(5);

/// The conversation-state key holding the task of a tool call.
fn state_key(call_id: &str) -> String {
    format!("mcp.task.{call_id}")
}

/// The task this tool call started earlier (a resumed run), if any.
pub(crate) fn started_earlier(ctx: &ToolContext, tool: &str) -> Option<String> {
    let kept = ctx.state.get(&state_key(&ctx.call_id))?;
    if kept.get("tool").and_then(Value::as_str) != Some(tool) {
        return None;
    }
    kept.get("taskId")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Whether the server still runs (or kept the end of) the task a resumed
/// call started: it knows it and did not cancel it.
pub(crate) async fn still_known(peer: &Peer<RoleClient>, task_id: &str, timeout: Duration) -> bool {
    get(peer, task_id, timeout)
        .await
        .is_ok_and(|t| !matches!(t.payload, TaskPayload::Cancelled))
}

/// Follows the task `task_id` (just created, or `started_earlier`) to its
/// end; its result is the call's.
pub(crate) async fn follow(
    peer: &Peer<RoleClient>,
    live: Option<&Live>,
    tool: &str,
    created: Option<CreateTaskResult>,
    task_id: String,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<CallToolResult, CallFailure> {
    tracing::debug!(tool, task = %task_id, "the MCP server runs the call as a task");
    let key = state_key(&ctx.call_id);
    ctx.state
        .set(key.clone(), json!({"tool": tool, "taskId": task_id}));
    let mut guard = CancelTaskOnDrop {
        peer: peer.clone(),
        task_id: Some(task_id.clone()),
        state: ctx.state.clone(),
        key,
    };
    let mut poll = created
        .as_ref()
        .and_then(|c| c.task.poll_interval_ms)
        .map_or(DEFAULT_POLL, Duration::from_millis);
    let deadline = created
        .as_ref()
        .and_then(|c| c.task.ttl_ms)
        .map(|ttl| Instant::now() + Duration::from_millis(ttl));
    let mut shown: Option<String> = created.and_then(|c| c.task.status_message);
    let mut steps = 0u32;
    if let Some(message) = &shown {
        steps += 1;
        report(live, steps, message);
    }
    let mut answered: HashSet<String> = HashSet::new();
    let outcome = loop {
        tokio::select! {
            () = tokio::time::sleep(poll.clamp(MIN_POLL, MAX_POLL)) => {}
            () = ctx.cancel.cancelled() => break Err(CallFailure::Cancelled),
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break Err(CallFailure::Task(TaskFailure::Expired));
        }
        let task = tokio::select! {
            r = get(peer, &task_id, timeout) => match r {
                Ok(task) => task,
                Err(e) => break Err(CallFailure::Service(e)),
            },
            () = ctx.cancel.cancelled() => break Err(CallFailure::Cancelled),
        };
        if let Some(ms) = task.task.poll_interval_ms {
            poll = Duration::from_millis(ms);
        }
        if task.task.status_message.is_some() && task.task.status_message != shown {
            shown.clone_from(&task.task.status_message);
            steps += 1;
            report(live, steps, shown.as_deref().unwrap_or_default());
        }
        match task.payload {
            TaskPayload::Completed { result } => {
                break serde_json::from_value::<CallToolResult>(Value::Object(result))
                    .map_err(|e| CallFailure::InvalidResponse(format!("the task's result: {e}")));
            }
            TaskPayload::Failed { error } => {
                break match serde_json::from_value::<ErrorData>(Value::Object(error)) {
                    Ok(error) => Err(CallFailure::Service(ServiceError::McpError(error))),
                    Err(e) => Err(CallFailure::InvalidResponse(format!(
                        "the task's error: {e}"
                    ))),
                };
            }
            TaskPayload::Cancelled => break Err(CallFailure::Task(TaskFailure::CancelledByServer)),
            TaskPayload::InputRequired { input_requests } => {
                let Some(live) = live else {
                    break Err(CallFailure::Rounds(RoundFailure::NoHandler));
                };
                let fresh: rmcp::model::InputRequests = input_requests
                    .into_iter()
                    .filter(|(key, _)| !answered.contains(key))
                    .collect();
                if fresh.is_empty() {
                    continue;
                }
                let answers = match input_rounds::answer_all(
                    &live.handler,
                    peer,
                    fresh,
                    timeout,
                    &ctx.cancel,
                )
                .await
                {
                    Ok(answers) => answers,
                    Err(failure) => break Err(CallFailure::Rounds(failure)),
                };
                answered.extend(answers.keys().cloned());
                if let Err(e) = update(peer, &task_id, answers, timeout).await {
                    break Err(CallFailure::Service(e));
                }
            }
            // Working (or a status this rmcp knows and we do not): poll on.
            _ => {}
        }
    };
    if matches!(&outcome, Err(f) if f.is_disconnect()) {
        // The connection broke, not the task: a retry of this call (after
        // a reconnect or sign-in) picks the task up again.
        guard.task_id = None;
        return outcome;
    }
    guard.state.set(guard.key.clone(), Value::Null);
    if matches!(outcome, Err(CallFailure::Cancelled)) {
        // Cancelled with the run: tell the server, then give up.
        if let Some(id) = guard.task_id.take() {
            let _ = cancel(peer, &id, CANCEL_LIMIT.min(timeout)).await;
        }
    } else {
        guard.task_id = None;
    }
    outcome
}

/// A status message, shown like a progress notification of the call.
fn report(live: Option<&Live>, step: u32, message: &str) {
    if let Some(live) = live {
        live.handler.task_status(f64::from(step), message);
    }
}

async fn get(
    peer: &Peer<RoleClient>,
    task_id: &str,
    timeout: Duration,
) -> Result<DetailedTask, ServiceError> {
    let request = ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(task_id)));
    match send(peer, request, timeout).await? {
        ServerResult::GetTaskResult(r) => Ok(r.task),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

async fn update(
    peer: &Peer<RoleClient>,
    task_id: &str,
    answers: InputResponses,
    timeout: Duration,
) -> Result<(), ServiceError> {
    let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(UpdateTaskParams::new(
        task_id, answers,
    )));
    send(peer, request, timeout).await.map(drop)
}

async fn cancel(
    peer: &Peer<RoleClient>,
    task_id: &str,
    timeout: Duration,
) -> Result<(), ServiceError> {
    let request =
        ClientRequest::CancelTaskRequest(CancelTaskRequest::new(CancelTaskParams::new(task_id)));
    send(peer, request, timeout).await.map(drop)
}

/// One request through rmcp's service, within `timeout`.
async fn send(
    peer: &Peer<RoleClient>,
    request: ClientRequest,
    timeout: Duration,
) -> Result<ServerResult, ServiceError> {
    let options = PeerRequestOptions::with_timeout(timeout);
    peer.send_request_with_option(request, options)
        .await?
        .await_response()
        .await
}

/// Sends `tasks/cancel` when the call is dropped while its task runs (the
/// caller gave up on the call): no task outlives the run that started it.
/// Forgets the task in the conversation state then too.
struct CancelTaskOnDrop {
    peer: Peer<RoleClient>,
    task_id: Option<String>,
    state: ConversationState,
    key: String,
}

impl Drop for CancelTaskOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.task_id.take() {
            self.state.set(self.key.clone(), Value::Null);
            let peer = self.peer.clone();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = cancel(&peer, &id, CANCEL_LIMIT).await;
                });
            }
        }
    }
}
