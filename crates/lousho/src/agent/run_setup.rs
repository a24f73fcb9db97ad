//! What a run starts from, made by a [`RunRequest`](super::RunRequest) or a
//! [`Session`](super::Session) and taken by the turn loop ([`super::run`]):
//! how it begins, its options, and where a session's run hands its
//! completed conversation back.

use super::journal::{Replayed, RunJournal};
use super::{AgentError, RunState};
use crate::model::Message;
use crate::policy::{ApprovalHandler, Decisions};
use crate::session::{JournalStatus, JournaledRun, LeaseSettings, SessionStore, StoreError};
use crate::sync::MutexExt;
use crate::tool::ClientChannel;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How a run begins: with new messages, or by finishing a paused turn.
pub(crate) enum Begin {
    /// A conversation's messages, the new input last.
    Fresh(Vec<Message>),
    /// A paused run and the answers for its pending calls.
    Resume(Box<RunState>, Decisions),
    /// A stored session's interrupted run, by id: read from its journal once
    /// the run holds the session's lease.
    Journal(String),
    /// An interrupted run rebuilt from its journal.
    Replayed(Box<Replayed>),
    /// The same input asked for again after an earlier attempt (the
    /// interrupted run, by id) stopped without finishing: that run goes on
    /// from its journal once this one holds the session's lease, or, if it
    /// finished meanwhile, these messages (the new input last) run afresh.
    /// Made only by served agents.
    #[cfg_attr(not(feature = "mcp-server"), allow(dead_code))]
    Retry(Vec<Message>, String),
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
    /// Replaces the agent's output schema.
    pub(crate) output: Option<super::output::OutputCheck>,
    /// Replaces the agent's budget.
    pub(crate) budget: Option<super::Budget>,
    /// The session's budget and what it spent.
    pub(crate) session_budget: Option<super::budget::SessionBudget>,
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
    /// How the run takes the session's lease.
    pub(super) lease: LeaseSettings,
    /// The application's notes kept with the run's journal.
    pub(super) context: Value,
}

impl StoreCommit {
    /// Once the run holds the session's lease: if the session moved on since
    /// this run's history was read (another run's turn), a fresh run
    /// continues from the stored history instead (its own new messages after
    /// it).
    pub(crate) async fn rebase(
        &mut self,
        mut messages: Vec<Message>,
    ) -> Result<Vec<Message>, AgentError> {
        let stored = self.load_history().await?;
        if stored.len() != self.base {
            let new = messages.split_off(self.base.min(messages.len()));
            self.base = stored.len();
            messages = stored;
            *self.history.lock_unpoisoned() = messages.clone();
            messages.extend(new);
        }
        Ok(messages)
    }

    /// An interrupted run of this session, and the stored history it goes
    /// on from (its turn follows what is stored now).
    pub(crate) async fn load_journaled(
        &mut self,
        run: &str,
    ) -> Result<(Vec<Message>, JournaledRun), AgentError> {
        let journaled = self
            .store
            .journal_load(run)
            .await
            .map_err(AgentError::Session)?
            .filter(|j| j.session == self.id)
            .ok_or_else(|| AgentError::NoInterruptedRun {
                run: run.to_owned(),
                session: self.id.clone(),
            })?;
        if journaled.status == JournalStatus::Running {
            // Unreachable while this run holds the lease; kept for a store
            // whose lease methods grant every lease.
            return Err(AgentError::NoInterruptedRun {
                run: run.to_owned(),
                session: self.id.clone(),
            });
        }
        let stored = self.load_history().await?;
        self.base = stored.len();
        *self.history.lock_unpoisoned() = stored.clone();
        Ok((stored, journaled))
    }

    async fn load_history(&self) -> Result<Vec<Message>, AgentError> {
        Ok(self
            .store
            .load(&self.id)
            .await
            .map_err(AgentError::Session)?
            .ok_or_else(|| {
                AgentError::Session(StoreError::NotFound {
                    session: self.id.clone(),
                })
            })?
            .messages)
    }

    /// Appends the run's new messages (those past the version it started
    /// from) and updates the session's history. A conflict (another writer
    /// appended meanwhile) fails the run with [`AgentError::Session`].
    pub(crate) async fn save(
        &self,
        messages: &[Message],
        journal: Option<&RunJournal>,
    ) -> Result<(), AgentError> {
        let new = messages.get(self.base..).ok_or_else(|| {
            AgentError::Internal(format!(
                "the run's conversation has {} messages, fewer than the {} stored",
                messages.len(),
                self.base
            ))
        })?;
        match journal {
            Some(journal) => {
                self.store
                    .journal_complete(journal.run(), &self.id, self.base as u64, new)
                    .await
                    .map_err(AgentError::Session)?;
            }
            None if !new.is_empty() => {
                self.store
                    .append(&self.id, self.base as u64, new)
                    .await
                    .map_err(AgentError::Session)?;
            }
            None => {}
        }
        *self.history.lock_unpoisoned() = messages.to_vec();
        Ok(())
    }
}
