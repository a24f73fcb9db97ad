//! One request other than `tools/call` (resources, prompts, completions)
//! through a live connection's rmcp service: the entry's call timeout, and a
//! reply the transport could not read (or a message over the stdio limit)
//! failing the request at once with a typed reason — the bounds a tool
//! result has.

use super::error::McpError;
use super::live::Live;
use super::replies::InvalidReply;
use rmcp::model::{ClientRequest, ServerResult};
use rmcp::service::{PeerRequestOptions, ServiceError};
use std::sync::Arc;
use std::time::Duration;

/// Sends `request` (`method` names it in errors) and waits for its result.
pub(crate) async fn send(
    server: &str,
    live: &Live,
    method: &'static str,
    request: ClientRequest,
    timeout: Duration,
) -> Result<ServerResult, McpError> {
    let failed = |source: ServiceError| McpError::Request {
        server: server.to_owned(),
        method,
        timeout,
        source: Arc::new(source),
    };
    let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
    let handle = live
        .peer()
        .send_request_with_option(request, options)
        .await
        .map_err(failed)?;
    let id = handle.id.clone();
    let response = handle.await_response().await;
    let invalid = live.replies().take_invalid(&id);
    match (response, invalid) {
        (Err(ServiceError::McpError(_)), Some(InvalidReply::Unreadable(reason))) => {
            Err(McpError::InvalidReply {
                server: server.to_owned(),
                method,
                reason,
            })
        }
        (Err(ServiceError::McpError(_)), Some(InvalidReply::Oversize)) => {
            Err(McpError::ReplyTooLarge {
                server: server.to_owned(),
                method,
            })
        }
        (Err(e), _) => {
            if matches!(
                e,
                ServiceError::TransportClosed | ServiceError::TransportSend(_)
            ) {
                live.mark_broken(&e.to_string());
            }
            Err(failed(e))
        }
        (Ok(result), _) => Ok(result),
    }
}

/// The result a request expected was something else.
pub(crate) fn unexpected(server: &str, method: &'static str, timeout: Duration) -> McpError {
    McpError::Request {
        server: server.to_owned(),
        method,
        timeout,
        source: Arc::new(ServiceError::UnexpectedResponse),
    }
}
