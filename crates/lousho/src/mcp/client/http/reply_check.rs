//! Replies over Streamable HTTP that rmcp could not read. An SSE event
//! whose data does not parse is dropped by rmcp at debug level (the call then
//! waits its whole timeout); here such an event that answers a request in
//! flight has its data replaced by a JSON-RPC error for that request
//! ([`Replies::invalid`]). (A JSON response body that does not parse already
//! fails its POST, and so the call, at once.)

use crate::mcp::client::replies::{Replies, request_id, trace_received};
use futures::StreamExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::StreamableHttpPostResponse;

/// Whether an SSE event of this type carries a JSON-RPC message (others,
/// like `endpoint` or `ping`, are control frames).
fn is_message_event(event: Option<&str>) -> bool {
    matches!(event, None | Some("" | "message"))
}

/// A request is about to be POSTed.
pub(super) fn before_post(replies: &Replies, message: &ClientJsonRpcMessage) {
    if let Some(id) = request_id(message) {
        replies.sent(id);
    }
}

/// Checks what a POST returned: a JSON reply settles its request, an SSE
/// stream is checked event by event.
pub(super) fn after_post(
    replies: &Replies,
    response: StreamableHttpPostResponse,
) -> StreamableHttpPostResponse {
    match response {
        StreamableHttpPostResponse::Json(message, session) => {
            trace_received("http", &message);
            replies.received(&message);
            StreamableHttpPostResponse::Json(message, session)
        }
        StreamableHttpPostResponse::Sse(stream, session) => {
            StreamableHttpPostResponse::Sse(checked(stream, replies.clone()), session)
        }
        other => other,
    }
}

/// The stream with each unreadable reply to a request in flight turned into
/// an error for it.
pub(super) fn checked(stream: BoxedSseResponse, replies: Replies) -> BoxedSseResponse {
    stream
        .map(move |event| {
            event.map(|mut sse| {
                let is_message = is_message_event(sse.event.as_deref());
                if let (true, Some(data)) = (is_message, &sse.data)
                    && !data.trim().is_empty()
                {
                    match serde_json::from_str::<ServerJsonRpcMessage>(data) {
                        Ok(message) => {
                            trace_received("http", &message);
                            replies.received(&message);
                        }
                        Err(e) => {
                            if let Some(error) = replies.invalid(data.as_bytes(), &e)
                                && let Ok(text) = serde_json::to_string(&error)
                            {
                                sse.data = Some(text);
                            }
                        }
                    }
                }
                sse
            })
        })
        .boxed()
}
