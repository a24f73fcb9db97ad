//! The audit trail of served calls: one `tracing` event per `tools/call`
//! (target `lousho::audit`, level INFO) naming who called (issuer and
//! subject of the access token, when there is one), which tool, the
//! decision (`allowed`, or why not), the outcome and how long it took —
//! never the token nor the arguments. The call's server span carries the
//! subject too (`enduser.id`).

use super::caller::Caller;
use std::time::Instant;
use tracing::Span;

/// The target audit events use (filter on it: `RUST_LOG=lousho::audit=info`).
pub(crate) const TARGET: &str = "lousho::audit";

/// Why a call was or was not let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// It ran.
    Allowed,
    /// The token lacks a scope the tool needs (`403`).
    InsufficientScope,
    /// The server was too busy (`503`).
    Shed,
    /// A per-caller limit refused the run (`429`, or `isError` on stdio).
    RateLimited,
}

impl Decision {
    fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::InsufficientScope => "insufficient_scope",
            Decision::Shed => "shed",
            Decision::RateLimited => "rate_limited",
        }
    }
}

/// Logs one call: `outcome` is `ok`, `tool_error`, `error`, `task`, or the
/// HTTP status of a refusal.
pub(crate) fn call(
    caller: Option<&Caller>,
    tool: &str,
    decision: Decision,
    outcome: &str,
    started: Instant,
) {
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (issuer, subject) = caller.map_or(("", ""), |c| (&*c.issuer, &*c.subject));
    tracing::info!(
        target: TARGET,
        issuer,
        subject,
        tool,
        decision = decision.as_str(),
        outcome,
        duration_ms,
        "tools/call"
    );
}

/// Names the caller on the call's server span.
pub(crate) fn mark_span(span: &Span, caller: Option<&Caller>) {
    if let Some(caller) = caller {
        span.record("enduser.id", &*caller.key());
    }
}
