//! Input-required rounds (protocol 2026-07-28, SEP-2322): a server that
//! needs something from the client mid-call answers the `tools/call` with an
//! `InputRequiredResult` — elicitation, sampling or roots requests, and an
//! opaque `requestState` — and the client answers each request and calls
//! again with the answers and the state.
//!
//! Each request is answered by the connection's own rmcp `ClientHandler`,
//! through the same entry point (`Service::handle_request`) as the
//! standalone requests of 2025-11-25 servers, so a question gets the same
//! answer in both eras (a form through the
//! [`ElicitationHandler`](super::ElicitationHandler), a decline when there is
//! none, roots as declared).
//!
//! Bounds: at most [`MAX_ROUNDS`] requests per call; answering one round's
//! questions may take up to the call timeout (as a 2025-11-25 server's
//! question does inside its call); a round with state but no questions (the
//! server is still working) waits a little longer each time before the retry.

use super::handler::Handler;
use rmcp::ErrorData;
use rmcp::model::{
    ClientResult, InputRequest, InputRequests, InputRequiredResult, InputResponses, RequestId,
    ServerRequest,
};
use rmcp::service::{Peer, RequestContext, RoleClient, Service};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How many times one tool call is sent at most (the first request and its
/// retries), like rmcp's and the other SDKs' default.
pub(crate) const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// What the retry carries: the answers (`None` when there were no
/// questions) and the server's state, echoed unchanged.
pub(crate) struct Retry {
    pub(crate) responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
}

/// Why a round could not be answered.
#[derive(Debug)]
pub(crate) enum RoundFailure {
    /// The server's `InputRequiredResult` had neither questions nor state.
    Empty,
    /// The client handler refused or failed a question (which one, why).
    Refused { key: String, error: ErrorData },
    /// The answers took longer than the call timeout.
    Timeout,
    /// The run was cancelled while the user was being asked.
    Cancelled,
    /// The client was connected by its user (`load_mcp_tools`), whose
    /// handler this crate cannot reach.
    NoHandler,
    /// The server asked again and again.
    TooManyRounds,
}

impl RoundFailure {
    /// The reason, for the model's error result.
    pub(crate) fn describe(&self) -> String {
        match self {
            RoundFailure::Empty => "the server answered `input_required` with neither input requests nor a request state".to_owned(),
            RoundFailure::Refused { key, error } => format!(
                "its input request `{key}` could not be answered (error {}: {})",
                error.code.0, error.message
            ),
            RoundFailure::Timeout => {
                "its input requests were not answered within the call timeout".to_owned()
            }
            RoundFailure::Cancelled => "cancelled while answering its input requests".to_owned(),
            RoundFailure::NoHandler => "the server asked for input (elicitation, sampling or roots), which a client connected with `load_mcp_tools` cannot answer here; connect the server with `connect_mcp` (or answer its rounds with rmcp's `call_tool` on your own client)".to_owned(),
            RoundFailure::TooManyRounds => format!(
                "the server still asked for input after {MAX_ROUNDS} rounds, so the call was given up"
            ),
        }
    }
}

/// Answers one round: every input request through `handler`, all at once,
/// within `timeout`; `cancel` stops it. A round with only state waits
/// (50 ms, doubling up to 250 ms with `idle_rounds`) before the retry.
pub(crate) async fn answer(
    handler: &Handler,
    peer: &Peer<RoleClient>,
    input: InputRequiredResult,
    idle_rounds: &mut u32,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Retry, RoundFailure> {
    let requests = input.input_requests.unwrap_or_default();
    if requests.is_empty() {
        if input.request_state.is_none() {
            return Err(RoundFailure::Empty);
        }
        let wait = Duration::from_millis((50u64 << (*idle_rounds).min(3)).min(250));
        *idle_rounds += 1;
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = cancel.cancelled() => return Err(RoundFailure::Cancelled),
        }
        return Ok(Retry {
            responses: None,
            request_state: input.request_state,
        });
    }
    *idle_rounds = 0;
    let answers = answer_all(handler, peer, requests, timeout, cancel).await?;
    Ok(Retry {
        responses: Some(answers),
        request_state: input.request_state,
    })
}

/// Answers input requests (a round's, or a task's in `input_required`)
/// through `handler`, all at once, within `timeout`; `cancel` stops it.
pub(crate) async fn answer_all(
    handler: &Handler,
    peer: &Peer<RoleClient>,
    requests: InputRequests,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<InputResponses, RoundFailure> {
    let questions = requests
        .into_iter()
        .map(|(key, request)| answer_one(handler, peer, key, request));
    let answers = tokio::select! {
        r = tokio::time::timeout(timeout, futures::future::try_join_all(questions)) => {
            r.map_err(|_| RoundFailure::Timeout)??
        }
        () = cancel.cancelled() => return Err(RoundFailure::Cancelled),
    };
    Ok(answers.into_iter().collect())
}

/// One question through the handler, as if the server had sent it as a
/// request of its own (with the round's key as its id).
async fn answer_one(
    handler: &Handler,
    peer: &Peer<RoleClient>,
    key: String,
    request: InputRequest,
) -> Result<(String, serde_json::Value), RoundFailure> {
    let request = match request {
        InputRequest::CreateMessage(r) => ServerRequest::CreateMessageRequest(r),
        InputRequest::Elicitation(r) => ServerRequest::ElicitRequest(r),
        InputRequest::ListRoots(r) => ServerRequest::ListRootsRequest(r),
        // A kind this rmcp knows and we do not: refuse it.
        _ => {
            return Err(RoundFailure::Refused {
                key,
                error: ErrorData::invalid_params("an input request of an unknown kind", None),
            });
        }
    };
    let context = RequestContext::new(RequestId::String(Arc::from(key.as_str())), peer.clone());
    let refused = |error| RoundFailure::Refused {
        key: key.clone(),
        error,
    };
    let answer = handler
        .handle_request(request, context)
        .await
        .map_err(refused)?;
    let value = match answer {
        ClientResult::CreateMessageResult(r) => serde_json::to_value(r),
        ClientResult::ElicitResult(r) => serde_json::to_value(r),
        ClientResult::ListRootsResult(r) => serde_json::to_value(r),
        other => serde_json::to_value(other),
    }
    .map_err(|e| refused(ErrorData::internal_error(e.to_string(), None)))?;
    Ok((key, value))
}
