//! One `tools/call` on a peer — the stateless protocol step: our timeout
//! (restarted by progress), cancellation sent as `notifications/cancelled`,
//! and every failure put in words the model sees. Reconnects and OAuth
//! retries belong to the connection ([`ManagedCalls`]).

pub(crate) use super::call_failure::CallFailure;
use super::call_failure::{OVERSIZE_MESSAGE, describe};
use super::input_rounds::{self, MAX_ROUNDS, RoundFailure};
use super::live::Live;
use super::replies::InvalidReply;
use super::result::to_output;
use super::tasks;
use crate::mcp::protocol::carries_request_meta;
use crate::telemetry::{propagate, span as spans};
use crate::tool::{ToolContext, ToolError, ToolOutput};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, CreateTaskResult, InputRequiredResult, RequestId,
    RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use std::sync::Arc;
use std::time::Duration;
use tracing::{Instrument, Span};

/// The `_meta` key of a call's idempotency key
/// ([`ToolContext::idempotency_key`]): `<run id>/<call id>`, the same when a
/// resumed run calls the tool again after a crash.
pub const IDEMPOTENCY_KEY_META: &str = "dev.lousho/idempotency-key";

/// A server whose calls go through a managed connection (which connects,
/// reconnects and answers OAuth challenges itself).
#[async_trait::async_trait]
pub(crate) trait ManagedCalls: Send + Sync {
    /// Calls `tool`; failures come back as error results naming the server.
    async fn call_tool(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError>;
}

/// Where a tool's calls go.
#[derive(Clone)]
pub(crate) enum CallTarget {
    /// A server we connect (and reconnect) ourselves. The tool holds the
    /// connection, so it outlives a dropped [`McpClient`](super::McpClient)
    /// handle; the server stops on `close()` or when the last holder drops.
    Managed(Arc<dyn ManagedCalls>),
    /// A client the user connected (`load_mcp_tools`).
    Peer {
        peer: Peer<RoleClient>,
        timeout: Duration,
    },
}

/// Calls `tool` of `server`; protocol errors, timeouts and disconnects come
/// back as error results naming the server and the reason.
pub(crate) async fn call_remote(
    target: &CallTarget,
    server: &str,
    tool: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    match target {
        CallTarget::Peer { peer, timeout } => {
            let outcome = call_on(peer, None, tool, &arguments, *timeout, ctx).await;
            outcome.or_else(|failure| failure.into_output(server, tool, *timeout, None))
        }
        CallTarget::Managed(conn) => conn.call_tool(tool, arguments, ctx).await,
    }
}

/// Sends `notifications/cancelled` for a request when dropped armed (the run
/// was cancelled, or the caller dropped the call).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let peer = self.peer.clone();
            let notification = CancelledNotification::new(CancelledNotificationParam::new(
                Some(id),
                Some("cancelled by the caller".into()),
            ));
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = peer.send_notification(notification.into()).await;
                });
            }
        }
    }
}

/// One `tools/call` in its MCP client span (`tools/call {tool}`), which
/// carries the outcome and whose trace context goes in the request's `_meta`.
/// With the connection's `live` state, a reply its transport could not read
/// (or an over-limit message) fails the call with that reason.
pub(crate) async fn call_on(
    peer: &Peer<RoleClient>,
    live: Option<&Live>,
    tool: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<ToolOutput, CallFailure> {
    let span = spans::mcp_client_call(tool);
    let result = async {
        if ctx.cancel.is_cancelled() {
            return Err(CallFailure::Cancelled);
        }
        let result = call_in_rounds(peer, live, tool, arguments, timeout, ctx, &span).await?;
        // A served lousho agent's model requests count in the caller's reply.
        if let Some(sink) = ctx.caller.get::<crate::model::run_record::UsageSink>() {
            sink.add(crate::mcp::usage_meta::usage_of(&result));
        }
        Ok(to_output(result))
    }
    .instrument(span.clone())
    .await;
    if !span.is_disabled() {
        record_outcome(&span, &result, timeout);
    }
    result
}

/// The client span's `error.type` (and JSON-RPC code) for a failed call.
fn record_outcome(span: &Span, result: &Result<ToolOutput, CallFailure>, timeout: Duration) {
    match result {
        Ok(output) if output.is_error => {
            spans::record_error(span, "tool_error", &output.to_model_text());
        }
        Ok(_) => {}
        Err(CallFailure::Cancelled) => spans::record_error(span, "cancelled", &"cancelled"),
        Err(CallFailure::Oversize) => spans::record_error(span, "oversize", &OVERSIZE_MESSAGE),
        Err(CallFailure::InvalidResponse(reason)) => {
            spans::record_error(span, "invalid_response", reason);
        }
        Err(CallFailure::Rounds(failure)) => {
            spans::record_error(span, "input_required", &failure.describe());
        }
        Err(CallFailure::Task(failure)) => {
            spans::record_error(span, "task", &failure.describe());
        }
        Err(CallFailure::Service(e)) => {
            let code;
            let kind = match e {
                ServiceError::McpError(data) => {
                    code = data.code.0.to_string();
                    span.record("rpc.response.status_code", code.as_str());
                    code.as_str()
                }
                ServiceError::Timeout { .. } => "timeout",
                ServiceError::TransportClosed => "transport_closed",
                _ => "_OTHER",
            };
            spans::record_error(span, kind, &describe(e, timeout));
        }
    }
}

/// What one `tools/call` request brought back.
enum Reply {
    /// The tool's result.
    Done(CallToolResult),
    /// A 2026-07-28 server's questions: answer them and call again.
    Input(InputRequiredResult),
    /// A task the server runs the call as: follow it to its result.
    Task(CreateTaskResult),
}

/// The call, with as many input-required rounds as the server needs (up to
/// [`MAX_ROUNDS`]); each question is answered by the connection's handler.
async fn call_in_rounds(
    peer: &Peer<RoleClient>,
    live: Option<&Live>,
    tool: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
    timeout: Duration,
    ctx: &ToolContext,
    span: &Span,
) -> Result<CallToolResult, CallFailure> {
    if let Some(task_id) = tasks::started_earlier(ctx, tool)
        && tasks::still_known(peer, &task_id, timeout).await
    {
        return tasks::follow(peer, live, tool, None, task_id, timeout, ctx).await;
    }
    let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments.clone());
    let mut idle_rounds = 0;
    for _ in 0..MAX_ROUNDS {
        let input = match send_call(peer, live, params.clone(), timeout, ctx, span).await? {
            Reply::Done(result) => return Ok(result),
            Reply::Input(input) => input,
            Reply::Task(task) => {
                let id = task.task.task_id.clone();
                return Box::pin(tasks::follow(
                    peer,
                    live,
                    tool,
                    Some(task),
                    id,
                    timeout,
                    ctx,
                ))
                .await;
            }
        };
        let Some(live) = live else {
            return Err(CallFailure::Rounds(RoundFailure::NoHandler));
        };
        tracing::debug!(
            tool,
            questions = input.input_requests.as_ref().map_or(0, |r| r.len()),
            "the MCP server asks for input before it answers the call"
        );
        let retry = input_rounds::answer(
            &live.handler,
            peer,
            input,
            &mut idle_rounds,
            timeout,
            &ctx.cancel,
        )
        .await
        .map_err(CallFailure::Rounds)?;
        params.input_responses = retry.responses;
        params.request_state = retry.request_state;
    }
    Err(CallFailure::Rounds(RoundFailure::TooManyRounds))
}

/// One request through rmcp's service: its timeout (restarted by progress),
/// `notifications/cancelled` when the run is cancelled or the caller drops
/// the call.
async fn send_call(
    peer: &Peer<RoleClient>,
    live: Option<&Live>,
    params: CallToolRequestParams,
    timeout: Duration,
    ctx: &ToolContext,
    span: &Span,
) -> Result<Reply, CallFailure> {
    let replies = live.map(Live::replies);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let mut options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
    options.meta = propagate::inject(span);
    if let Some(level) = live.and_then(|l| l.handler.log_level)
        && peer
            .peer_info()
            .is_some_and(|i| carries_request_meta(&i.protocol_version))
    {
        // 2026-07-28: log messages are asked for per request.
        options
            .meta
            .get_or_insert_with(RequestMetaObject::new)
            .set_log_level(crate::mcp::log_level::to_rmcp_level(level));
    }
    if let Some(key) = ctx.idempotency_key() {
        let meta = options.meta.get_or_insert_with(RequestMetaObject::new);
        meta.0
            .0
            .insert(IDEMPOTENCY_KEY_META.into(), serde_json::Value::from(key));
    }
    let handle = peer
        .send_request_with_option(request, options)
        .await
        .map_err(CallFailure::Service)?;
    if !span.is_disabled() {
        span.record("jsonrpc.request.id", handle.id.to_string().as_str());
    }
    let id = handle.id.clone();
    let mut guard = CancelOnDrop {
        peer: peer.clone(),
        id: Some(id.clone()),
    };
    let response = tokio::select! {
        biased;
        r = handle.await_response() => r,
        () = ctx.cancel.cancelled() => {
            if let Some(replies) = replies {
                replies.take_invalid(&id);
            }
            return Err(CallFailure::Cancelled);
        }
    };
    // Answered, timed out (rmcp sent the cancellation) or closed: nothing to cancel.
    guard.id = None;
    let invalid = replies.and_then(|r| r.take_invalid(&id));
    let response = match (response, invalid) {
        (Err(ServiceError::McpError(_)), Some(InvalidReply::Unreadable(reason))) => {
            return Err(CallFailure::InvalidResponse(reason));
        }
        (Err(ServiceError::McpError(_)), Some(InvalidReply::Oversize)) => {
            return Err(CallFailure::Oversize);
        }
        (response, _) => response,
    };
    match response.map_err(CallFailure::Service)? {
        ServerResult::CallToolResult(result) => Ok(Reply::Done(result)),
        ServerResult::InputRequiredResult(input) => Ok(Reply::Input(input)),
        ServerResult::CreateTaskResult(task) => Ok(Reply::Task(task)),
        _ => Err(CallFailure::Service(ServiceError::UnexpectedResponse)),
    }
}
