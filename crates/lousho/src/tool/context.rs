use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

/// What a tool call gets besides its input.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolContext {
    /// The model's id for this call.
    pub call_id: String,
    /// Fires when the run is cancelled (or the caller dropped the stream).
    pub cancel: CancellationToken,
    /// State kept for the whole conversation (a session's turns share it).
    pub state: ConversationState,
}

impl ToolContext {
    /// A context for calling a tool outside an agent (tests, the CLI's `call`).
    pub fn new(call_id: impl Into<String>) -> Self {
        Self {
            call_id: call_id.into(),
            cancel: CancellationToken::new(),
            state: ConversationState::default(),
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
        self.lock().get(key).cloned()
    }

    /// Sets `key` to `value`.
    pub fn set(&self, key: impl Into<String>, value: Value) {
        self.lock().insert(key.into(), value);
    }

    /// A copy of every value.
    pub fn snapshot(&self) -> Map<String, Value> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Map<String, Value>> {
        // A panicking tool cannot leave a JSON map half-written; keep going.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
