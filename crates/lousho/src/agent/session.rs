use super::SessionBudget;
use super::run_setup::{Begin, SessionLink, StoreCommit};
use super::{Agent, RunRequest, RunState};
use crate::model::Message;
use crate::policy::Decisions;
use crate::session::{LeaseSettings, RunSummary, SessionStore, StoreError};
use crate::sync::MutexExt;
use crate::tool::ConversationState;
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, Mutex};

/// A multi-turn conversation with an agent: every `send` sees the history of
/// the ones before, and tools share one [`ConversationState`].
///
/// Made by [`Agent::session`] (in memory) or [`Agent::open_session`] (kept
/// in a [`SessionStore`]: each completed turn is appended to the store
/// before the run's [`Done`](crate::AgentEvent::Done) event).
///
/// Turns are meant to be sequential: finish one before sending the next. In
/// a stored session they are, also across processes: a run waits for the
/// session's lease while another run of it goes on.
/// The history takes a run once it completes, whether it was awaited or
/// streamed to its [`Done`](crate::AgentEvent::Done) event; a failed,
/// cancelled or paused run leaves it as it was.
#[derive(Clone)]
pub struct Session {
    agent: Agent,
    history: Arc<Mutex<Vec<Message>>>,
    state: ConversationState,
    stored: Option<Stored>,
    /// The session's budget over all its runs.
    budget: Option<super::budget::SessionBudget>,
}

/// Where a stored session lives.
#[derive(Clone)]
struct Stored {
    store: Arc<dyn SessionStore>,
    id: String,
    lease: LeaseSettings,
    /// The application's notes kept with each run's journal.
    context: Value,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("agent", &self.agent)
            .field("id", &self.id())
            .field("messages", &self.history_len())
            .finish_non_exhaustive()
    }
}

impl Session {
    pub(crate) fn new(agent: Agent) -> Self {
        Self {
            budget: agent.inner.session_budget.map(SessionBudget::new),
            agent,
            history: Arc::default(),
            state: ConversationState::default(),
            stored: None,
        }
    }

    /// The session `id` from `store` (created empty if it does not exist).
    pub(crate) async fn open(
        agent: Agent,
        store: Arc<dyn SessionStore>,
        id: String,
    ) -> Result<Self, StoreError> {
        let found = store.open(&id).await?;
        Ok(Self {
            budget: agent.inner.session_budget.map(SessionBudget::new),
            agent,
            history: Arc::new(Mutex::new(found.messages)),
            state: ConversationState::default(),
            stored: Some(Stored {
                store,
                id,
                lease: LeaseSettings::default(),
                context: Value::Null,
            }),
        })
    }

    fn link(&self) -> SessionLink {
        match &self.stored {
            None => SessionLink::Memory(self.history.clone()),
            Some(stored) => SessionLink::Stored(StoreCommit {
                store: stored.store.clone(),
                id: stored.id.clone(),
                history: self.history.clone(),
                base: self.history_len(),
                lease: stored.lease,
                context: stored.context.clone(),
            }),
        }
    }

    /// A run of the next turn: the history so far (as of this call) plus
    /// `input`. `.await` it or [`.stream()`](RunRequest::stream) it, like
    /// [`Agent::send`].
    ///
    /// In a stored session, the run first takes the session's lease (one
    /// run at a time per session, also across processes): while another run
    /// holds it, this one waits (sending
    /// [`AgentEvent::SessionBusy`](crate::AgentEvent::SessionBusy)), then
    /// continues from the stored history, that run's turn included. It
    /// fails with [`AgentError::Session`](crate::AgentError::Session) if the
    /// wait runs past [`LeaseSettings::wait`] ([`StoreError::Busy`]) or its
    /// messages cannot be appended (e.g. a writer outside runs appended
    /// meanwhile: [`StoreError::Conflict`]; [`reload`](Session::reload) and
    /// send again).
    pub fn send(&self, input: impl Into<Message>) -> RunRequest {
        let mut messages = self.history();
        messages.push(input.into());
        RunRequest::new(
            self.agent.inner.clone(),
            Begin::Fresh(messages),
            self.state.clone(),
            Some(self.link()),
        )
        .session_budget(self.budget.clone())
    }

    /// A run of the next turn that adds several messages (user and
    /// assistant turns, e.g. an MCP prompt's
    /// [`PromptConversation`](crate::mcp::PromptConversation) messages) to
    /// the history; the model answers after the last one. Otherwise as
    /// [`send`](Session::send).
    pub fn send_messages(&self, messages: impl IntoIterator<Item = Message>) -> RunRequest {
        let mut all = self.history();
        all.extend(messages);
        RunRequest::new(
            self.agent.inner.clone(),
            Begin::Fresh(all),
            self.state.clone(),
            Some(self.link()),
        )
        .session_budget(self.budget.clone())
    }

    /// Continues this session's run that paused for approval (see
    /// [`Agent::resume`]); once it completes, the session's history holds it
    /// (and, in a stored session, the store). The session's tool state is set
    /// to the state's snapshot first.
    pub fn resume(&self, state: RunState, decisions: impl Into<Decisions>) -> RunRequest {
        for (key, value) in state.conversation_state() {
            self.state.set(key.clone(), value.clone());
        }
        RunRequest::new(
            self.agent.inner.clone(),
            Begin::Resume(Box::new(state), decisions.into()),
            self.state.clone(),
            Some(self.link()),
        )
        .session_budget(self.budget.clone())
    }

    /// Limits on what all of this session's runs together may spend from
    /// now on (see [`Budget`](super::Budget)); a run that reaches one ends
    /// with [`RunStatus::BudgetExceeded`](super::RunStatus::BudgetExceeded)
    /// and scope [`BudgetScope::Session`](super::BudgetScope::Session).
    /// Runs count once they end with a reply. Kept in memory (by this
    /// session and its clones), not in the store.
    #[must_use]
    pub fn budget(mut self, budget: super::Budget) -> Self {
        self.budget = Some(super::budget::SessionBudget {
            budget,
            spent: Arc::default(),
        });
        self
    }

    /// What this session's runs have spent since [`budget`](Session::budget)
    /// was set (nothing without a budget).
    pub fn spent(&self) -> super::Spent {
        self.budget
            .as_ref()
            .map(|b| *b.spent.lock_unpoisoned())
            .unwrap_or_default()
    }

    /// Sets how this session's runs take its lease (a stored session's
    /// runs; default [`LeaseSettings::default`]).
    #[must_use]
    pub fn with_lease(mut self, settings: LeaseSettings) -> Self {
        if let Some(stored) = &mut self.stored {
            stored.lease = settings;
        }
        self
    }

    /// Sets the application's notes kept with each run's step journal
    /// ([`JournaledRun::context`](crate::session::JournaledRun); the CLI
    /// keeps the spec file's path there, to build the agent again when it
    /// resumes an interrupted run).
    #[must_use]
    pub fn with_run_context(mut self, context: Value) -> Self {
        if let Some(stored) = &mut self.stored {
            stored.context = context;
        }
        self
    }

    /// This stored session's journaled runs, most recent first: those still
    /// running, and those [interrupted](crate::session::JournalStatus::Interrupted)
    /// (their process was killed, or they failed), which
    /// [`resume_interrupted`](Session::resume_interrupted) goes on with. Empty
    /// for an in-memory session.
    pub async fn runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        match &self.stored {
            None => Ok(Vec::new()),
            Some(stored) => stored.store.journal_list(Some(&stored.id)).await,
        }
    }

    /// Goes on with this session's interrupted run `run` from its last
    /// committed step: committed model turns are not asked again; the
    /// calls that were in flight when it stopped run again if their tool is
    /// read-only or idempotent (by its annotations), and otherwise only once
    /// approved (the approval handler is asked; without one the run pauses,
    /// and a denied call's result tells the model it was interrupted). Once
    /// it completes, the session holds its turn. Fails with
    /// [`AgentError::NoInterruptedRun`](crate::AgentError::NoInterruptedRun)
    /// if there is no such run (an in-memory session has none).
    pub fn resume_interrupted(&self, run: impl Into<String>) -> RunRequest {
        RunRequest::new(
            self.agent.inner.clone(),
            Begin::Journal(run.into()),
            self.state.clone(),
            Some(self.link()),
        )
    }

    /// The newest of this session's runs that stopped without finishing
    /// (or still run, perhaps in a process that died within its lease time)
    /// and whose input was `input` alone: what a client asks for again when
    /// it retries a call whose replica died. `None` for an in-memory session.
    #[cfg_attr(not(feature = "mcp-server"), allow(dead_code))]
    pub(crate) async fn unfinished_run_of(
        &self,
        input: &Message,
    ) -> Result<Option<String>, StoreError> {
        let Some(stored) = &self.stored else {
            return Ok(None);
        };
        for run in stored.store.journal_list(Some(&stored.id)).await? {
            let Some(journaled) = stored.store.journal_load(&run.id).await? else {
                continue;
            };
            if journaled.input.as_slice() == std::slice::from_ref(input) {
                return Ok(Some(run.id));
            }
        }
        Ok(None)
    }

    /// A run of `input` that is a retry of the unfinished run `run` (see
    /// [`unfinished_run_of`](Session::unfinished_run_of)): once it holds the
    /// session's lease it goes on with `run` from its journal, as
    /// [`resume_interrupted`](Session::resume_interrupted) does; if `run`
    /// finished meanwhile (its process was alive after all), `input` runs
    /// as a new turn, as [`send`](Session::send) makes it.
    #[cfg_attr(not(feature = "mcp-server"), allow(dead_code))]
    pub(crate) fn send_again(&self, input: Message, run: String) -> RunRequest {
        let mut messages = self.history();
        messages.push(input);
        RunRequest::new(
            self.agent.inner.clone(),
            Begin::Retry(messages, run),
            self.state.clone(),
            Some(self.link()),
        )
        .session_budget(self.budget.clone())
    }

    /// The conversation so far.
    pub fn history(&self) -> Vec<Message> {
        self.history.lock_unpoisoned().clone()
    }

    fn history_len(&self) -> usize {
        self.history.lock_unpoisoned().len()
    }

    /// The session's id in its store (`None` for an in-memory session).
    pub fn id(&self) -> Option<&str> {
        self.stored.as_ref().map(|s| s.id.as_str())
    }

    /// The store this session is kept in (`None` for an in-memory session).
    pub fn store(&self) -> Option<&Arc<dyn SessionStore>> {
        self.stored.as_ref().map(|s| &s.store)
    }

    /// Reads the history again from the store (after another writer
    /// appended). A no-op for an in-memory session.
    pub async fn reload(&self) -> Result<(), StoreError> {
        let Some(stored) = &self.stored else {
            return Ok(());
        };
        let found = stored
            .store
            .load(&stored.id)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                session: stored.id.clone(),
            })?;
        *self.history.lock_unpoisoned() = found.messages;
        Ok(())
    }

    /// The tools' conversation state (kept in memory only, also for a stored
    /// session).
    pub fn state(&self) -> &ConversationState {
        &self.state
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }
}
