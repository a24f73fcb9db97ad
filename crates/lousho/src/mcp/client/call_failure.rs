//! Why a `tools/call` gave no result, and the words the model sees for it.

use super::error::McpError;
use super::input_rounds::RoundFailure;
use crate::error_chain::error_chain;
use crate::tool::{ToolError, ToolOutput};
use rmcp::model::ErrorCode;
use rmcp::service::ServiceError;
use std::time::Duration;

/// Why a call did not return a result.
pub(crate) enum CallFailure {
    Cancelled,
    Service(ServiceError),
    /// A message over the stdio limit was dropped; it may have been this
    /// call's result.
    Oversize,
    /// The reply could not be read; why.
    InvalidResponse(String),
    /// The server's input-required rounds could not be completed.
    Rounds(RoundFailure),
    /// The task the server ran the call as gave no result.
    Task(TaskFailure),
}

impl CallFailure {
    /// The error result the model sees (`Err` only for a cancelled call),
    /// with the server's diagnostics (stderr tail, stdout noise) appended.
    pub(crate) fn into_output(
        self,
        server: &str,
        tool: &str,
        timeout: Duration,
        diagnostics: Option<String>,
    ) -> Result<ToolOutput, ToolError> {
        let reason = match self {
            CallFailure::Cancelled => return Err(ToolError::Cancelled),
            CallFailure::InvalidResponse(reason) => {
                let error = McpError::InvalidResponse {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                    reason,
                };
                let mut message = error.to_string();
                if let Some(note) = diagnostics {
                    message.push('\n');
                    message.push_str(&note);
                }
                return Ok(ToolOutput::error(message));
            }
            CallFailure::Oversize => OVERSIZE_MESSAGE.to_owned(),
            CallFailure::Rounds(RoundFailure::Cancelled) => return Err(ToolError::Cancelled),
            CallFailure::Rounds(failure) => failure.describe(),
            CallFailure::Task(failure) => failure.describe(),
            CallFailure::Service(e) => describe(&e, timeout),
        };
        let mut message = format!("MCP server `{server}`: tool `{tool}` failed: {reason}");
        if let Some(note) = diagnostics {
            message.push('\n');
            message.push_str(&note);
        }
        Ok(ToolOutput::error(message))
    }

    /// Whether the connection is gone (the next call must reconnect).
    pub(crate) fn is_disconnect(&self) -> bool {
        matches!(
            self,
            CallFailure::Service(ServiceError::TransportClosed | ServiceError::TransportSend(_))
        )
    }
}

pub(super) const OVERSIZE_MESSAGE: &str = "the server sent a message larger than 16 MiB, which the stdio transport drops, so this call cannot complete; ask the tool for less data";

pub(super) fn describe(e: &ServiceError, timeout: Duration) -> String {
    match e {
        ServiceError::Timeout { .. } => format!(
            "no answer within {timeout:?} (the call timeout; progress notifications restart it)"
        ),
        ServiceError::TransportClosed => {
            "the connection closed during the call (the server exited or dropped the connection); the next call reconnects".to_owned()
        }
        ServiceError::McpError(data) if wants_tasks(data) => format!(
            "error {}: {}: the server runs this tool as a task (the `io.modelcontextprotocol/tasks` extension), which this entry does not declare; set `tasks` on for it (`\"tasks\": true`, `McpServer::tasks(true)`)",
            data.code.0, data.message
        ),
        ServiceError::McpError(data) => format!("error {}: {}", data.code.0, data.message),
        ServiceError::UnexpectedResponse => {
            "the server answered with something other than a tool result".to_owned()
        }
        ServiceError::TransportSend(t) => error_chain(t.error.as_ref()),
        other => error_chain(other),
    }
}

/// Whether a server's error says the call needs the tasks extension.
fn wants_tasks(data: &rmcp::ErrorData) -> bool {
    data.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        && data
            .data
            .as_ref()
            .and_then(|d| d.pointer("/requiredCapabilities/extensions"))
            .and_then(serde_json::Value::as_object)
            .is_some_and(|e| e.contains_key(rmcp::model::TASKS_EXTENSION_ID))
}

/// Why a task gave no result.
#[derive(Debug)]
pub(crate) enum TaskFailure {
    /// It outlived the time the server gave it (`ttlMs`).
    Expired,
    /// It ended `cancelled` without our asking.
    CancelledByServer,
}

impl TaskFailure {
    /// The reason, for the model's error result.
    pub(crate) fn describe(&self) -> String {
        match self {
            TaskFailure::Expired => {
                "its task was still running when the time the server gave it (ttlMs) ran out"
                    .to_owned()
            }
            TaskFailure::CancelledByServer => {
                "the server cancelled the task that ran the call".to_owned()
            }
        }
    }
}
