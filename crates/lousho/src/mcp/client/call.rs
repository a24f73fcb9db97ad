//! One `tools/call`: our timeout (restarted by progress), cancellation sent
//! as `notifications/cancelled`, and every failure turned into an error
//! result the model sees.

use super::connection::Connection;
use super::result::to_output;
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
            match call_on(peer, tool, arguments, *timeout, ctx).await {
                Ok(out) => Ok(out),
                Err(CallFailure::Cancelled) => Err(ToolError::Cancelled),
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
            match call_on(live.peer(), tool, arguments, timeout, ctx).await {
                Ok(out) => Ok(out),
                Err(CallFailure::Cancelled) => Err(ToolError::Cancelled),
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
                        message.push_str("\n");
                        message.push_str(&note);
                    }
                    Ok(ToolOutput::error(message))
                }
            }
        }
    }
}

enum CallFailure {
    Cancelled,
    Service(ServiceError),
}

fn describe(e: &ServiceError, timeout: Duration) -> String {
    match e {
        ServiceError::Timeout { .. } => format!(
            "no answer within {timeout:?} (the call timeout; progress notifications restart it). A result over 16 MiB is dropped by the stdio transport and also ends here"
        ),
        ServiceError::TransportClosed => {
            "the connection closed during the call (the server exited or dropped the connection); the next call reconnects".to_owned()
        }
        ServiceError::McpError(data) => format!("error {}: {}", data.code.0, data.message),
        ServiceError::UnexpectedResponse => {
            "the server answered with something other than a tool result (input requests and tasks are not supported)".to_owned()
        }
        other => error_chain(other),
    }
}

/// An error and its sources, joined with `: `.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = inner.source();
    }
    s
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
) -> Result<ToolOutput, CallFailure> {
    if ctx.cancel.is_cancelled() {
        return Err(CallFailure::Cancelled);
    }
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
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
    };
    // Answered, timed out (rmcp sent the cancellation) or closed: nothing to cancel.
    guard.id = None;
    match response.map_err(CallFailure::Service)? {
        ServerResult::CallToolResult(result) => Ok(to_output(&result)),
        _ => Err(CallFailure::Service(ServiceError::UnexpectedResponse)),
    }
}
