//! One `tools/call`: our timeout (restarted by progress), cancellation sent
//! as `notifications/cancelled`, and every failure turned into an error
//! result the model sees.

use super::connection::Connection;
use super::error::McpError;
use super::oauth::{MAX_AUTHORIZATIONS, answer_call_challenge, challenge_of};
use super::result::to_output;
use super::stdout_watch::StdoutNoise;
use crate::error_chain::error_chain;
use crate::tool::{ToolContext, ToolError, ToolOutput};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use std::sync::Weak;
use std::time::Duration;

/// Where a tool's calls go.
#[derive(Clone)]
pub(crate) enum CallTarget {
    /// A server we connect (and reconnect) ourselves. Weak: the
    /// [`McpClient`](super::McpClient) owns its connections (and their processes).
    Managed(Weak<Connection>),
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
            match call_on(peer, tool, arguments, *timeout, ctx, None).await {
                Ok(out) => Ok(out),
                Err(CallFailure::Cancelled) => Err(ToolError::Cancelled),
                Err(CallFailure::Oversize) => Ok(ToolOutput::error(format!(
                    "MCP server `{server}`: tool `{tool}` failed: {OVERSIZE_MESSAGE}"
                ))),
                Err(CallFailure::Service(e)) => Ok(ToolOutput::error(format!(
                    "MCP server `{server}`: tool `{tool}` failed: {}",
                    describe(&e, *timeout)
                ))),
            }
        }
        CallTarget::Managed(conn) => {
            let Some(conn) = conn.upgrade() else {
                return Ok(ToolOutput::error(format!(
                    "MCP server `{server}`: its client was dropped; keep the McpClient (or the agent) alive while its tools are in use"
                )));
            };
            let live = match conn.live_for_call().await {
                Ok(live) => live,
                Err(e) => return Ok(ToolOutput::error(e.to_string())),
            };
            let timeout = conn.call_timeout();
            match call_on(
                live.peer(),
                tool,
                arguments.clone(),
                timeout,
                ctx,
                live.noise.as_ref(),
            )
            .await
            {
                Ok(out) => {
                    // A tool that changed the server's tool list: let the new
                    // list land before the model's next turn.
                    live.wait_for_tool_refresh().await;
                    Ok(out)
                }
                Err(CallFailure::Cancelled) => Err(ToolError::Cancelled),
                Err(CallFailure::Oversize) => Ok(ToolOutput::error(format!(
                    "MCP server `{server}`: tool `{tool}` failed: {OVERSIZE_MESSAGE}"
                ))),
                Err(CallFailure::Service(e))
                    if conn.oauth().is_some() && challenge_of(&e).is_some() =>
                {
                    retry_after_challenge(&conn, server, tool, arguments, ctx, e).await
                }
                Err(CallFailure::Service(e)) => {
                    if matches!(
                        e,
                        ServiceError::TransportClosed | ServiceError::TransportSend(_)
                    ) {
                        live.mark_broken(&e.to_string());
                    }
                    let mut message = format!(
                        "MCP server `{server}`: tool `{tool}` failed: {}",
                        describe(&e, timeout)
                    );
                    if let Some(note) = live.diagnostics() {
                        message.push('\n');
                        message.push_str(&note);
                    }
                    Ok(ToolOutput::error(message))
                }
            }
        }
    }
}

/// A call of an `oauth` server hit a 401 (refresh failed) or a 403
/// `insufficient_scope`: sign in or step up when possible (at most
/// [`MAX_AUTHORIZATIONS`] times) and call again; otherwise an error result
/// telling the operator to sign in (the status becomes `NeedsAuth`).
async fn retry_after_challenge(
    conn: &Connection,
    server: &str,
    tool: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
    ctx: &ToolContext,
    mut error: ServiceError,
) -> Result<ToolOutput, ToolError> {
    for attempt in 1..=MAX_AUTHORIZATIONS + 1 {
        if let Some(output) = answer_call_challenge(conn, server, &error, attempt).await {
            return Ok(output);
        }
        let live = match conn.live_for_call().await {
            Ok(live) => live,
            Err(e) => return Ok(ToolOutput::error(e.to_string())),
        };
        let timeout = conn.call_timeout();
        match call_on(live.peer(), tool, arguments.clone(), timeout, ctx, None).await {
            Ok(out) => return Ok(out),
            Err(CallFailure::Service(e)) if challenge_of(&e).is_some() => error = e,
            Err(CallFailure::Service(e)) => {
                return Ok(ToolOutput::error(format!(
                    "MCP server `{server}`: tool `{tool}` failed: {}",
                    describe(&e, timeout)
                )));
            }
            Err(CallFailure::Cancelled) => return Err(ToolError::Cancelled),
            Err(CallFailure::Oversize) => {
                return Ok(ToolOutput::error(format!(
                    "MCP server `{server}`: tool `{tool}` failed: {OVERSIZE_MESSAGE}"
                )));
            }
        }
    }
    Ok(ToolOutput::error(
        McpError::NeedsAuth {
            server: server.to_owned(),
        }
        .to_string(),
    ))
}

enum CallFailure {
    Cancelled,
    Service(ServiceError),
    /// A message over the stdio limit was dropped; it may have been this
    /// call's result.
    Oversize,
}

/// Resolves when the server sends a message over the stdio limit (never
/// without a watcher).
async fn oversize(noise: Option<&StdoutNoise>, since: Option<u64>) {
    match (noise, since) {
        (Some(n), Some(since)) => n.oversize_after(since).await,
        _ => std::future::pending().await,
    }
}

const OVERSIZE_MESSAGE: &str = "the server sent a message larger than 16 MiB, which the stdio transport drops, so this call cannot complete; ask the tool for less data";

fn describe(e: &ServiceError, timeout: Duration) -> String {
    match e {
        ServiceError::Timeout { .. } => format!(
            "no answer within {timeout:?} (the call timeout; progress notifications restart it)"
        ),
        ServiceError::TransportClosed => {
            "the connection closed during the call (the server exited or dropped the connection); the next call reconnects".to_owned()
        }
        ServiceError::McpError(data) => format!("error {}: {}", data.code.0, data.message),
        ServiceError::UnexpectedResponse => {
            "the server answered with something other than a tool result (input requests and tasks are not supported)".to_owned()
        }
        ServiceError::TransportSend(t) => error_chain(t.error.as_ref()),
        other => error_chain(other),
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

async fn call_on(
    peer: &Peer<RoleClient>,
    tool: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
    timeout: Duration,
    ctx: &ToolContext,
    noise: Option<&StdoutNoise>,
) -> Result<ToolOutput, CallFailure> {
    if ctx.cancel.is_cancelled() {
        return Err(CallFailure::Cancelled);
    }
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
    let oversize_before = noise.map(StdoutNoise::oversize_count);
    let handle = peer
        .send_request_with_option(request, options)
        .await
        .map_err(CallFailure::Service)?;
    let mut guard = CancelOnDrop {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let response = tokio::select! {
        biased;
        r = handle.await_response() => r,
        () = ctx.cancel.cancelled() => return Err(CallFailure::Cancelled),
        () = oversize(noise, oversize_before) => return Err(CallFailure::Oversize),
    };
    // Answered, timed out (rmcp sent the cancellation) or closed: nothing to cancel.
    guard.id = None;
    match response.map_err(CallFailure::Service)? {
        ServerResult::CallToolResult(result) => Ok(to_output(&result)),
        _ => Err(CallFailure::Service(ServiceError::UnexpectedResponse)),
    }
}
