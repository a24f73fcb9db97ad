//! What a tool call gets besides its input: its id, cancellation, the
//! conversation's state and, when it runs for an MCP client, a way to talk
//! back to that client.

mod client;

pub(crate) use client::ClientChannel;
pub use client::{
    ClientError, Elicitation, LogLevel, SamplingMessage, SamplingReply, SamplingRequest,
    SamplingRole,
};

use crate::sync::MutexExt;
use serde_json::{Map, Value};
use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What a tool call gets besides its input.
///
/// When the call comes from an MCP client — a direct tool of
/// [`serve_mcp`](crate::serve_mcp), or any tool the served agent calls — the
/// tool can talk back to that client: [`report_progress`](Self::report_progress),
/// [`log`](Self::log), [`elicit`](Self::elicit) (ask the user through a form)
/// and [`sample`](Self::sample) (ask the client's model). Each fails with a
/// [`ClientError`] when there is no MCP client or it lacks the capability.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolContext {
    /// The model's id for this call.
    pub call_id: String,
    /// Fires when the run is cancelled (or the caller dropped the stream).
    pub cancel: CancellationToken,
    /// State kept for the whole conversation (a session's turns share it).
    pub state: ConversationState,
    /// The MCP client the call runs for, if any.
    pub(crate) client: Option<Arc<dyn ClientChannel>>,
    /// What the run that made the call hands on to it.
    pub(crate) caller: CallerRun,
    /// The call's stable id across a crash and resume (a stored session's
    /// run: `<run id>/<call id>`).
    pub(crate) idempotency_key: Option<String>,
}

/// What the run that made a call hands on to the tool, for the layers above
/// this one: the agent puts its run's depth and approval handler here (agent
/// tools read them) and where child runs add their token usage (agent tools
/// and MCP calls to served lousho agents add to it). The tool layer only
/// carries them, one value per type.
#[derive(Clone, Default)]
pub(crate) struct CallerRun(Vec<Arc<dyn Any + Send + Sync>>);

impl CallerRun {
    /// With `part` (replacing one of the same type).
    #[must_use]
    pub(crate) fn with<T: Any + Send + Sync>(mut self, part: T) -> Self {
        self.0.retain(|p| !p.as_ref().is::<T>());
        self.0.push(Arc::new(part));
        self
    }

    /// The part of type `T`, if the run handed one on.
    pub(crate) fn get<T: Any>(&self) -> Option<&T> {
        self.0.iter().find_map(|p| p.as_ref().downcast_ref::<T>())
    }
}

impl std::fmt::Debug for CallerRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CallerRun({} parts)", self.0.len())
    }
}

impl ToolContext {
    /// A context for calling a tool outside an agent (tests, the CLI's `call`).
    pub fn new(call_id: impl Into<String>) -> Self {
        Self {
            call_id: call_id.into(),
            cancel: CancellationToken::new(),
            state: ConversationState::default(),
            client: None,
            caller: CallerRun::default(),
            idempotency_key: None,
        }
    }

    /// A stable id for this call, the same when the run is resumed after a
    /// crash and the call runs again: `<run id>/<call id>`. Use it as an
    /// idempotency key with services that take one. Only a stored
    /// session's run has one (its step journal keeps the run's id); `None`
    /// otherwise.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.idempotency_key.as_deref()
    }

    /// Sets the call's idempotency key.
    #[must_use]
    pub(crate) fn with_idempotency_key(mut self, key: Option<String>) -> Self {
        self.idempotency_key = key;
        self
    }

    /// Ties the call to the run that made it.
    #[must_use]
    pub(crate) fn with_caller(mut self, caller: CallerRun) -> Self {
        self.caller = caller;
        self
    }

    /// Talks back to this MCP client.
    #[must_use]
    pub(crate) fn with_client(mut self, client: Option<Arc<dyn ClientChannel>>) -> Self {
        self.client = client;
        self
    }

    /// Whether the call runs for an MCP client (so the methods below can
    /// reach one).
    pub fn has_client(&self) -> bool {
        self.client.is_some()
    }

    /// Whether the MCP client can answer [`elicit`](Self::elicit).
    pub fn can_elicit(&self) -> bool {
        self.client.as_ref().is_some_and(|c| c.can_elicit())
    }

    /// Whether the MCP client can answer [`sample`](Self::sample).
    pub fn can_sample(&self) -> bool {
        self.client.as_ref().is_some_and(|c| c.can_sample())
    }

    fn client(&self, action: &'static str) -> Result<&Arc<dyn ClientChannel>, ClientError> {
        self.client
            .as_ref()
            .ok_or(ClientError::NotUnderMcp { action })
    }

    /// Reports progress to the MCP client (`notifications/progress`):
    /// `progress` should grow with each report; `total` when known.
    /// [`ClientError::ProgressNotRequested`] when the client did not ask for
    /// progress on this call (progress is optional: ignoring that error is fine).
    pub async fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ClientError> {
        self.client("report progress")?
            .progress(progress, total, message.map(str::to_owned))
            .await
    }

    /// Sends a log message to the MCP client (`notifications/message`);
    /// `data` is any JSON (a string for plain text). Messages below the level
    /// the client set with `logging/setLevel` are dropped (not an error).
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) -> Result<(), ClientError> {
        self.client("send a log message")?
            .log(level, None, data.into())
            .await
    }

    /// [`log`](Self::log) with a logger name.
    pub async fn log_as(
        &self,
        level: LogLevel,
        logger: impl Into<String>,
        data: impl Into<Value>,
    ) -> Result<(), ClientError> {
        self.client("send a log message")?
            .log(level, Some(logger.into()), data.into())
            .await
    }

    /// Asks the user through the client (`elicitation/create`, form mode):
    /// `message` says what and why; `schema` is a flat JSON object schema of
    /// strings, numbers, booleans and enums (MCP's elicitation schema). Waits
    /// until the user answers or the call is cancelled.
    pub async fn elicit(
        &self,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicitation, ClientError> {
        self.elicit_inner(message.into(), schema, None).await
    }

    /// [`elicit`](Self::elicit), giving up with [`ClientError::TimedOut`]
    /// after `timeout`.
    pub async fn elicit_with_timeout(
        &self,
        message: impl Into<String>,
        schema: Value,
        timeout: Duration,
    ) -> Result<Elicitation, ClientError> {
        self.elicit_inner(message.into(), schema, Some(timeout))
            .await
    }

    async fn elicit_inner(
        &self,
        message: String,
        schema: Value,
        timeout: Option<Duration>,
    ) -> Result<Elicitation, ClientError> {
        let client = self.client("ask the user (elicitation)")?;
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(ClientError::Cancelled),
            r = client.elicit(message, schema, timeout) => r,
        }
    }

    /// Asks the client's model (`sampling/createMessage`). Waits until the
    /// client answers or the call is cancelled.
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingReply, ClientError> {
        self.sample_inner(request, None).await
    }

    /// [`sample`](Self::sample), giving up with [`ClientError::TimedOut`]
    /// after `timeout`.
    pub async fn sample_with_timeout(
        &self,
        request: SamplingRequest,
        timeout: Duration,
    ) -> Result<SamplingReply, ClientError> {
        self.sample_inner(request, Some(timeout)).await
    }

    async fn sample_inner(
        &self,
        request: SamplingRequest,
        timeout: Option<Duration>,
    ) -> Result<SamplingReply, ClientError> {
        let client = self.client("ask the client's model (sampling)")?;
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(ClientError::Cancelled),
            r = client.sample(request, timeout) => r,
        }
    }

    /// Uses this cancellation token.
    #[must_use]
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Uses this conversation state.
    #[must_use]
    pub fn with_state(mut self, state: ConversationState) -> Self {
        self.state = state;
        self
    }
}

/// A conversation's tool state: JSON values by key, shared by every call in
/// one conversation (a [`Session`](crate::Session)'s turns see the same
/// state; two sessions never share). It is serialisable, so it survives a
/// paused run.
#[derive(Debug, Clone, Default)]
pub struct ConversationState {
    inner: Arc<Mutex<Map<String, Value>>>,
}

impl ConversationState {
    /// State starting from a snapshot.
    pub fn from_snapshot(values: Map<String, Value>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(values)),
        }
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.inner.lock_unpoisoned().get(key).cloned()
    }

    /// Sets `key` to `value`.
    pub fn set(&self, key: impl Into<String>, value: Value) {
        self.inner.lock_unpoisoned().insert(key.into(), value);
    }

    /// A copy of every value.
    pub fn snapshot(&self) -> Map<String, Value> {
        self.inner.lock_unpoisoned().clone()
    }
}
