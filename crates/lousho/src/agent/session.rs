use super::run_setup::{Begin, SessionLink, StoreCommit};
use super::{Agent, RunRequest, RunState};
use crate::model::Message;
use crate::policy::Decisions;
use crate::session::{SessionStore, StoreError};
use crate::sync::MutexExt;
use crate::tool::ConversationState;
use std::fmt;
use std::sync::{Arc, Mutex};

/// A multi-turn conversation with an agent: every `send` sees the history of
/// the ones before, and tools share one [`ConversationState`].
///
/// Made by [`Agent::session`] (in memory) or [`Agent::open_session`] (kept
/// in a [`SessionStore`]: each completed turn is appended to the store
/// before the run's [`Done`](crate::AgentEvent::Done) event).
///
/// Turns are meant to be sequential: finish one before sending the next.
/// The history takes a run once it completes, whether it was awaited or
/// streamed to its [`Done`](crate::AgentEvent::Done) event; a failed,
/// cancelled or paused run leaves it as it was.
#[derive(Clone)]
pub struct Session {
    agent: Agent,
    history: Arc<Mutex<Vec<Message>>>,
    state: ConversationState,
    stored: Option<Stored>,
}

/// Where a stored session lives.
#[derive(Clone)]
struct Stored {
    store: Arc<dyn SessionStore>,
    id: String,
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
            agent,
            history: Arc::new(Mutex::new(found.messages)),
            state: ConversationState::default(),
            stored: Some(Stored { store, id }),
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
            }),
        }
    }

    /// A run of the next turn: the history so far (as of this call) plus
    /// `input`. `.await` it or [`.stream()`](RunRequest::stream) it, like
    /// [`Agent::send`].
    ///
    /// In a stored session, the run fails with [`AgentError::Session`](crate::AgentError::Session) if
    /// its messages cannot be appended, e.g. because another writer appended
    /// to the session meanwhile ([`StoreError::Conflict`]);
    /// [`reload`](Session::reload) and send again.
    pub fn send(&self, input: impl Into<Message>) -> RunRequest {
        let mut messages = self.history();
        messages.push(input.into());
        RunRequest::new(
            self.agent.inner.clone(),
            Begin::Fresh(messages),
            self.state.clone(),
            Some(self.link()),
        )
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
