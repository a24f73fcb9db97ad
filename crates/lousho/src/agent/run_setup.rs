//! What a run starts from, made by a [`RunRequest`](super::RunRequest) or a
//! [`Session`](super::Session) and taken by the turn loop ([`super::run`]):
//! how it begins, its options, and where a session's run hands its
//! completed conversation back.

use super::{AgentError, RunState};
use crate::model::Message;
use crate::policy::{ApprovalHandler, Decisions};
use crate::session::SessionStore;
use crate::sync::MutexExt;
use crate::tool::ClientChannel;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How a run begins: with new messages, or by finishing a paused turn.
pub(crate) enum Begin {
    /// A conversation's messages, the new input last.
    Fresh(Vec<Message>),
    /// A paused run and the answers for its pending calls.
    Resume(Box<RunState>, Decisions),
}

/// The options of one run.
#[derive(Clone, Default)]
pub(crate) struct RunOptions {
    /// Cancels the run when it fires.
    pub(crate) cancel: Option<CancellationToken>,
    /// Overrides the agent's `max_turns`.
    pub(crate) max_turns: Option<usize>,
    /// The run fails with [`AgentError::TimedOut`] once this has passed.
    pub(crate) timeout: Option<Duration>,
    /// Overrides the agent's approval handler.
    pub(crate) approval_handler: Option<ApprovalHandler>,
    /// The MCP client the run serves: its tools can talk back to it.
    pub(crate) tool_client: Option<Arc<dyn ClientChannel>>,
    /// How many agent tools deep this run is (the top run: 0).
    pub(crate) depth: usize,
}

/// How a session's run hands its completed conversation back.
pub(crate) enum SessionLink {
    /// In memory: the stream sets the history when it yields `Done`.
    Memory(Arc<Mutex<Vec<Message>>>),
    /// In a store: the run appends before it sends `Done`.
    Stored(StoreCommit),
}

/// A stored session's pending commit: what the run appends once it completes.
pub(crate) struct StoreCommit {
    pub(super) store: Arc<dyn SessionStore>,
    pub(super) id: String,
    pub(super) history: Arc<Mutex<Vec<Message>>>,
    /// The stored version (= messages) the run started from.
    pub(super) base: usize,
}

impl StoreCommit {
    /// Appends the run's new messages (those past the version it started
    /// from) and updates the session's history. A conflict (another writer
    /// appended meanwhile) fails the run with [`AgentError::Session`].
    pub(crate) async fn save(&self, messages: &[Message]) -> Result<(), AgentError> {
        let new = messages.get(self.base..).ok_or_else(|| {
            AgentError::Internal(format!(
                "the run's conversation has {} messages, fewer than the {} stored",
                messages.len(),
                self.base
            ))
        })?;
        if !new.is_empty() {
            self.store
                .append(&self.id, self.base as u64, new)
                .await
                .map_err(AgentError::Session)?;
        }
        *self.history.lock_unpoisoned() = messages.to_vec();
        Ok(())
    }
}
