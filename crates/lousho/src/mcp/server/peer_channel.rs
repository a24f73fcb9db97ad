//! The MCP client, as a served tool sees it ([`ToolContext`](crate::ToolContext)'s
//! progress, log, elicitation and sampling methods): rmcp's server-side
//! `Peer`, and for 2026-07-28 clients the call's input-required rounds
//! ([`mrtr`](super::mrtr)) for the questions.

// Logging and sampling are deprecated by SEP-2577 (2026-07-28) but are what
// 2025-11-25 clients speak.
#![allow(deprecated)]

use super::mrtr::{DEFAULT_WAIT, Rounds, Unanswered};
use super::task_link::TaskLink;
pub(crate) use crate::mcp::log_level::from_rmcp_level;
use crate::mcp::log_level::to_rmcp_level;
use crate::tool::{
    ClientChannel, ClientError, Elicitation, LogLevel, SamplingReply, SamplingRequest, SamplingRole,
};
use rmcp::ServiceError;
use rmcp::model::{
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};
use std::time::Duration;

/// The least severe level the client wants (`logging/setLevel`); until it
/// sets one, every message is sent. One per connection (stdio) or session
/// (stateful HTTP).
#[derive(Debug, Clone, Default)]
pub(crate) struct LogFilter(Arc<AtomicU8>);

const UNSET: u8 = 0;

impl LogFilter {
    pub(crate) fn set(&self, level: LogLevel) {
        self.0.store(level as u8 + 1, Ordering::Relaxed);
    }

    fn allows(&self, level: LogLevel) -> bool {
        match self.0.load(Ordering::Relaxed) {
            UNSET => true,
            min => level as u8 + 1 >= min,
        }
    }
}

/// Where a call's progress goes.
#[derive(Debug, Clone)]
pub(crate) enum ProgressTo {
    /// The client did not ask.
    Nowhere,
    /// A direct tool's call: its numbers as given.
    Direct(ProgressToken),
    /// A served agent's run: one counter for the run's own reports and its
    /// tools' (MCP wants progress to grow), the tools' numbers in the message.
    Run(ProgressToken, Arc<AtomicU32>),
    /// A run in a task: its steps become the task's status message.
    Task(TaskLink),
}

/// How a served call can put questions (elicitation, sampling) to its client.
#[derive(Clone, Debug)]
pub(crate) enum Asking {
    /// As server requests on the connection (2025-11-25 over stdio or
    /// stateful HTTP).
    Requests,
    /// Not at all: 2025-11-25 over stateless HTTP, where the client's
    /// answer could not reach the call.
    Stateless,
    /// Protocol 2026-07-28 (no server requests), outside rounds: the client
    /// declared neither elicitation nor sampling.
    Modern,
    /// Protocol 2026-07-28, in the call's input-required rounds.
    Rounds(Rounds),
    /// In a task: `input_required` in `tasks/get`, answered by `tasks/update`.
    Task(TaskLink),
}

/// What a served call's tools talk back through.
#[derive(Clone)]
pub(crate) struct PeerChannel {
    /// rmcp's peer of the connection or request.
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) progress: ProgressTo,
    pub(crate) log: LogFilter,
    /// How questions reach the client.
    pub(crate) asking: Asking,
    /// The client's capabilities for this request.
    pub(crate) elicitation: bool,
    pub(crate) sampling: bool,
    /// Whether its model can call tools in sampling (`sampling.tools`).
    pub(crate) sampling_tools: bool,
}

impl fmt::Debug for PeerChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeerChannel")
            .field("progress", &self.progress)
            .field("asking", &self.asking)
            .field("elicitation", &self.elicitation)
            .field("sampling", &self.sampling)
            .finish_non_exhaustive()
    }
}

/// The error for a request the client cannot answer on this transport.
fn cannot_answer(action: &'static str) -> ClientError {
    ClientError::Failed {
        action,
        reason: "the client cannot answer server requests on this connection (stateless \
                 Streamable HTTP with protocol 2025-11-25); serve HTTP with sessions \
                 (`HttpOptions::stateful(true)`, spec `serve.stateful: true`), use stdio, or \
                 use a client of protocol 2026-07-28 (asked in input-required rounds)"
            .to_owned(),
    }
}

/// The error for a question a round got no answer to.
fn unanswered(action: &'static str, e: Unanswered) -> ClientError {
    match e {
        Unanswered::Gone => ClientError::Cancelled,
        Unanswered::TimedOut(d) => ClientError::TimedOut(d),
        Unanswered::NoAnswer => ClientError::Failed {
            action,
            reason: "the client retried the call without an answer to the question".to_owned(),
        },
    }
}

/// The elicitation outcome of a client's `ElicitResult`.
fn elicitation_of(result: ElicitResult) -> Elicitation {
    match result.action {
        ElicitationAction::Accept => Elicitation::Accepted(match result.content {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        }),
        ElicitationAction::Decline => Elicitation::Declined,
        _ => Elicitation::Cancelled,
    }
}

fn service_error(action: &'static str, e: ServiceError) -> ClientError {
    match e {
        ServiceError::Timeout { timeout } => ClientError::TimedOut(timeout),
        ServiceError::Cancelled { .. } => ClientError::Cancelled,
        ServiceError::McpError(e) => ClientError::Failed {
            action,
            reason: e.message.to_string(),
        },
        other => ClientError::Failed {
            action,
            reason: other.to_string(),
        },
    }
}

impl PeerChannel {
    /// Sends one step of a served run's progress.
    pub(crate) async fn run_step(&self, message: String) {
        if let ProgressTo::Task(link) = &self.progress {
            link.status(message);
        } else if let ProgressTo::Run(token, step) = &self.progress {
            let n = step.fetch_add(1, Ordering::Relaxed) + 1;
            let param =
                ProgressNotificationParam::new(token.clone(), f64::from(n)).with_message(message);
            if let Err(e) = self.peer.notify_progress(param).await {
                tracing::debug!(error = %e, "could not send a progress notification");
            }
        }
    }

    /// Asks the user through a form, with an optional timeout.
    pub(crate) async fn elicit_form(
        &self,
        message: String,
        schema: Value,
        timeout: Option<Duration>,
    ) -> Result<Elicitation, ClientError> {
        const ACTION: &str = "ask the user (elicitation)";
        if matches!(self.asking, Asking::Stateless) {
            return Err(cannot_answer(ACTION));
        }
        if !self.elicitation || matches!(self.asking, Asking::Modern) {
            return Err(ClientError::Unsupported {
                action: ACTION,
                capability: "elicitation",
            });
        }
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form",
            "message": message,
            "requestedSchema": schema,
        }))
        .map_err(|e| ClientError::InvalidRequest {
            what: "elicitation schema (use a flat object of string, number, integer, boolean and enum properties)",
            reason: e.to_string(),
        })?;
        let result = match &self.asking {
            Asking::Rounds(_) | Asking::Task(_) => {
                let question = InputRequest::Elicitation(ElicitRequest::new(params));
                let answer = self
                    .ask_in_band(question, timeout)
                    .await
                    .map_err(|e| unanswered(ACTION, e))?;
                serde_json::from_value::<ElicitResult>(answer).map_err(|e| ClientError::Failed {
                    action: ACTION,
                    reason: format!("its answer is not an elicitation result: {e}"),
                })?
            }
            _ => self
                .peer
                .create_elicitation_with_timeout(params, timeout)
                .await
                .map_err(|e| service_error(ACTION, e))?,
        };
        Ok(elicitation_of(result))
    }

    /// Whether the client can be asked at all on this call (capabilities
    /// aside).
    fn can_ask(&self) -> bool {
        matches!(
            self.asking,
            Asking::Requests | Asking::Rounds(_) | Asking::Task(_)
        )
    }

    /// A question inside the call's own messages (a round, or the task),
    /// waiting `timeout` (or [`DEFAULT_WAIT`]) for the answer.
    async fn ask_in_band(
        &self,
        question: InputRequest,
        timeout: Option<Duration>,
    ) -> Result<Value, Unanswered> {
        let wait = timeout.unwrap_or(DEFAULT_WAIT);
        match &self.asking {
            Asking::Rounds(rounds) => rounds.ask(question, wait).await,
            Asking::Task(link) => link.ask(question, wait).await,
            _ => Err(Unanswered::Gone),
        }
    }
}

#[async_trait::async_trait]
impl ClientChannel for PeerChannel {
    fn can_elicit(&self) -> bool {
        self.elicitation && self.can_ask()
    }

    fn can_sample(&self) -> bool {
        self.sampling && self.can_ask()
    }

    async fn step(&self, message: String) {
        self.run_step(message).await;
    }

    fn can_sample_tools(&self) -> bool {
        self.sampling_tools
    }

    async fn create_message(
        &self,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, ClientError> {
        const ACTION: &str = "ask the client's model (sampling)";
        if matches!(self.asking, Asking::Stateless) {
            return Err(cannot_answer(ACTION));
        }
        if !self.sampling || matches!(self.asking, Asking::Modern) {
            return Err(ClientError::Unsupported {
                action: ACTION,
                capability: "sampling",
            });
        }
        let params: CreateMessageRequestParams =
            serde_json::from_value(params).map_err(|e| ClientError::InvalidRequest {
                what: "sampling request",
                reason: e.to_string(),
            })?;
        let result = match &self.asking {
            Asking::Rounds(_) | Asking::Task(_) => {
                let question = InputRequest::CreateMessage(CreateMessageRequest::new(params));
                let answer = self
                    .ask_in_band(question, timeout)
                    .await
                    .map_err(|e| unanswered(ACTION, e))?;
                serde_json::from_value::<CreateMessageResult>(answer).map_err(|e| {
                    ClientError::Failed {
                        action: ACTION,
                        reason: format!("its answer is not a sampling result: {e}"),
                    }
                })?
            }
            _ => {
                let call = self.peer.create_message(params);
                match timeout {
                    None => call.await,
                    Some(d) => match tokio::time::timeout(d, call).await {
                        Ok(r) => r,
                        Err(_) => return Err(ClientError::TimedOut(d)),
                    },
                }
                .map_err(|e| service_error(ACTION, e))?
            }
        };
        serde_json::to_value(&result).map_err(|e| ClientError::Failed {
            action: ACTION,
            reason: e.to_string(),
        })
    }

    async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), ClientError> {
        let param = match &self.progress {
            ProgressTo::Nowhere => return Err(ClientError::ProgressNotRequested),
            ProgressTo::Direct(token) => {
                let mut p = ProgressNotificationParam::new(token.clone(), progress);
                if let Some(total) = total {
                    p = p.with_total(total);
                }
                if let Some(message) = message {
                    p = p.with_message(message);
                }
                p
            }
            ProgressTo::Run(token, step) => {
                let n = step.fetch_add(1, Ordering::Relaxed) + 1;
                ProgressNotificationParam::new(token.clone(), f64::from(n))
                    .with_message(progress_text(progress, total, message))
            }
            ProgressTo::Task(link) => {
                link.status(progress_text(progress, total, message));
                return Ok(());
            }
        };
        self.peer
            .notify_progress(param)
            .await
            .map_err(|e| service_error("report progress", e))
    }

    async fn log(
        &self,
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    ) -> Result<(), ClientError> {
        if !self.log.allows(level) {
            return Ok(());
        }
        let mut param = LoggingMessageNotificationParam::new(to_rmcp_level(level), data);
        param.logger = logger;
        self.peer
            .notify_logging_message(param)
            .await
            .map_err(|e| service_error("send a log message", e))
    }

    async fn elicit(
        &self,
        message: String,
        schema: Value,
        timeout: Option<Duration>,
    ) -> Result<Elicitation, ClientError> {
        self.elicit_form(message, schema, timeout).await
    }

    async fn sample(
        &self,
        request: SamplingRequest,
        timeout: Option<Duration>,
    ) -> Result<SamplingReply, ClientError> {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| {
                json!({
                    "role": match m.role { SamplingRole::User => "user", SamplingRole::Assistant => "assistant" },
                    "content": { "type": "text", "text": m.text },
                })
            })
            .collect();
        let mut wire = json!({ "messages": messages, "maxTokens": request.max_tokens });
        if let Some(system) = request.system_prompt {
            wire["systemPrompt"] = Value::String(system);
        }
        if let Some(t) = request.temperature {
            wire["temperature"] = json!(t);
        }
        // One path for both: capability checks, the request, its timeout.
        let raw = self.create_message(wire, timeout).await?;
        let content = raw.get("content").cloned().unwrap_or(Value::Null);
        let text = text_of(&content);
        Ok(SamplingReply {
            model: raw
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            text,
            stop_reason: raw
                .get("stopReason")
                .and_then(Value::as_str)
                .map(str::to_owned),
            content,
        })
    }
}

/// A tool's progress as one message: `message (progress/total)`.
fn progress_text(progress: f64, total: Option<f64>, message: Option<String>) -> String {
    let numbers = match total {
        Some(total) => format!("{progress}/{total}"),
        None => progress.to_string(),
    };
    match message {
        Some(m) => format!("{m} ({numbers})"),
        None => numbers,
    }
}

/// The text parts of sampling content (one block or an array), joined.
fn text_of(content: &Value) -> String {
    let blocks: Vec<&Value> = match content {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_filter_passes_the_set_level_and_above() {
        let f = LogFilter::default();
        assert!(f.allows(LogLevel::Debug), "unset: everything");
        f.set(LogLevel::Warning);
        assert!(!f.allows(LogLevel::Info));
        assert!(f.allows(LogLevel::Warning) && f.allows(LogLevel::Emergency));
    }

    #[test]
    fn sampling_text_joins_text_blocks() {
        assert_eq!(text_of(&json!({"type": "text", "text": "hi"})), "hi");
        assert_eq!(
            text_of(
                &json!([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}])
            ),
            "ab"
        );
    }
}
