//! A tool call through a managed connection: connect or reconnect first,
//! then the protocol step ([`call_on`]). A 401/403 challenge of an `oauth`
//! server is answered on its OAuth link (sign in, step up, fetch a token)
//! and the call made again, at most `MAX_AUTHORIZATIONS` times (with the
//! `oauth` feature; without it an `oauth` server never connects).

use super::Connection;
use crate::mcp::client::call::{CallFailure, ManagedCalls, call_on};
#[cfg(feature = "oauth")]
use crate::mcp::client::error::McpError;
#[cfg(feature = "oauth")]
use crate::mcp::client::oauth::{MAX_AUTHORIZATIONS, challenge_of};
use crate::tool::{ToolContext, ToolError, ToolOutput};
#[cfg(feature = "oauth")]
use rmcp::service::ServiceError;

type Arguments = serde_json::Map<String, serde_json::Value>;

#[async_trait::async_trait]
impl ManagedCalls for Connection {
    async fn call_tool(
        &self,
        tool: &str,
        arguments: Arguments,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let live = match self.live_for_call().await {
            Ok(live) => live,
            Err(e) => return Ok(ToolOutput::error(e.to_string())),
        };
        if !self.lists(tool) {
            // Offered from a manifest (or an older listing) but gone now;
            // the model's next request has the current list.
            return Ok(ToolOutput::error(format!(
                "MCP server `{}` no longer has the tool `{tool}` (it was in an older listing of its tools); the current tools are offered from the next request on",
                self.name
            )));
        }
        let timeout = self.call_timeout();
        let outcome = call_on(live.peer(), Some(&live), tool, &arguments, timeout, ctx).await;
        match outcome {
            Ok(out) => {
                // A tool that changed the server's tool list: let the new
                // list land before the model's next turn.
                live.wait_for_tool_refresh().await;
                Ok(out)
            }
            #[cfg(feature = "oauth")]
            Err(CallFailure::Service(e)) if self.oauth.is_some() && challenge_of(&e).is_some() => {
                self.retry_after_challenge(tool, arguments, ctx, e).await
            }
            Err(failure) => {
                if let (true, CallFailure::Service(e)) = (failure.is_disconnect(), &failure) {
                    live.mark_broken(&e.to_string());
                }
                failure.into_output(&self.name, tool, timeout, live.diagnostics())
            }
        }
    }
}

#[cfg(feature = "oauth")]
impl Connection {
    /// A call of an `oauth` server hit a 401 (refresh failed) or a 403
    /// `insufficient_scope`: sign in or step up when possible and call
    /// again; otherwise an error result telling the operator to sign in
    /// (the status becomes `NeedsAuth`).
    async fn retry_after_challenge(
        &self,
        tool: &str,
        arguments: Arguments,
        ctx: &ToolContext,
        mut error: ServiceError,
    ) -> Result<ToolOutput, ToolError> {
        let server = &self.name;
        for attempt in 1..=MAX_AUTHORIZATIONS + 1 {
            let (Some(link), Some(challenge)) = (&self.oauth, challenge_of(&error)) else {
                return Ok(ToolOutput::error(format!("MCP server `{server}`: {error}")));
            };
            match link.answer_call_challenge(&challenge, attempt).await {
                Ok(true) => {}
                Ok(false) => {
                    self.mark_needs_auth().await;
                    let needs = McpError::NeedsAuth {
                        server: server.clone(),
                    };
                    return Ok(ToolOutput::error(needs.to_string()));
                }
                Err(error) => {
                    let failed = McpError::OAuth {
                        server: server.clone(),
                        error,
                    };
                    return Ok(ToolOutput::error(failed.to_string()));
                }
            }
            let live = match self.live_for_call().await {
                Ok(live) => live,
                Err(e) => return Ok(ToolOutput::error(e.to_string())),
            };
            let timeout = self.call_timeout();
            match call_on(live.peer(), Some(&live), tool, &arguments, timeout, ctx).await {
                Ok(out) => return Ok(out),
                Err(CallFailure::Service(e)) if challenge_of(&e).is_some() => error = e,
                Err(failure) => return failure.into_output(server, tool, timeout, None),
            }
        }
        let needs = McpError::NeedsAuth {
            server: server.clone(),
        };
        Ok(ToolOutput::error(needs.to_string()))
    }
}
