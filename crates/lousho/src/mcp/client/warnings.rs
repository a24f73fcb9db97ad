//! The warnings the product page's `logger` option receives — a skipped
//! server, a skipped tool — as `tracing` events at `WARN` with the target
//! [`LOG_TARGET`] (`lousho::mcp`) and the fields `server` (and `tool`), so any
//! subscriber gets them and a filter such as `lousho::mcp=warn` selects them.
//! Without a subscriber they go nowhere (the page's default: none).

use super::error::McpError;
use crate::policy::{PinMode, PinState, ToolDrift};

/// The `tracing` target of the skipped-server and skipped-tool warnings.
pub const LOG_TARGET: &str = "lousho::mcp";

/// `OnError::Skip` left a server out.
pub(crate) fn skipped_server(server: &str, error: &McpError) {
    tracing::warn!(
        target: LOG_TARGET,
        server,
        error = %error,
        "skipping MCP server `{server}`: {error}"
    );
}

/// A server that needs an OAuth sign-in was left without tools.
pub(crate) fn needs_sign_in(server: &str) {
    tracing::warn!(
        target: LOG_TARGET,
        server,
        "MCP server `{server}` needs an OAuth sign-in; its tools are left out"
    );
}

/// A tool of `server` was left out; `reason` says why.
pub(crate) fn skipped_tool(server: &str, tool: &str, reason: &str) {
    tracing::warn!(
        target: LOG_TARGET,
        server,
        tool,
        "skipping tool `{tool}` of MCP server `{server}`: {reason}"
    );
}

/// A tool's live definition drifted from its pin (`pin: warn | enforce`).
pub(crate) fn pin_drift(drift: &ToolDrift, mode: Option<PinMode>) {
    let (server, tool, state) = (&drift.server, &drift.tool, drift.state);
    let what = match state {
        PinState::New => "is new since pinned (not in the lock file)".to_owned(),
        PinState::Removed => "was pinned but the server no longer lists it".to_owned(),
        _ if drift.changes.is_empty() => "changed since pinned".to_owned(),
        _ => format!("changed since pinned: {}", drift.changes.join("; ")),
    };
    let held = mode == Some(PinMode::Enforce) && matches!(state, PinState::New | PinState::Changed);
    let then = if held {
        "held back (pin: enforce)"
    } else {
        "still offered (pin: warn)"
    };
    tracing::warn!(
        target: LOG_TARGET,
        server = server.as_str(),
        tool = tool.as_str(),
        state = state.as_str(),
        "tool `{tool}` of MCP server `{server}` {what}; {then}; run `lousho pin` to accept"
    );
}
