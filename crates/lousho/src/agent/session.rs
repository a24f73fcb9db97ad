use super::request::Begin;
use super::{Agent, RunRequest, RunState};
use crate::model::Message;
use crate::policy::Decisions;
use crate::tool::ConversationState;
use std::sync::{Arc, Mutex, PoisonError};

/// A multi-turn conversation with an agent: every `send` sees the history of
/// the ones before, and tools share one [`ConversationState`].
///
/// Turns are meant to be sequential: finish one before sending the next.
/// The history takes a run once it completes, whether it was awaited or
/// streamed to its [`Done`](crate::AgentEvent::Done) event; a failed,
/// cancelled or paused run leaves it as it was.
#[derive(Debug, Clone)]
pub struct Session {
    agent: Agent,
    history: Arc<Mutex<Vec<Message>>>,
    state: ConversationState,
}

impl Session {
    pub(crate) fn new(agent: Agent) -> Self {
        Self {
            agent,
            history: Arc::default(),
            state: ConversationState::default(),
        }
    }

    /// A run of the next turn: the history so far (as of this call) plus
    /// `input`. `.await` it or [`.stream()`](RunRequest::stream) it, like
    /// [`Agent::send`].
    pub fn send(&self, input: impl Into<Message>) -> RunRequest {
        let mut messages = self.history();
        messages.push(input.into());
        RunRequest::new(
            self.agent.inner.clone(),
            Begin::Fresh(messages),
            self.state.clone(),
            Some(self.history.clone()),
        )
    }

    /// Continues this session's run that paused for approval (see
    /// [`Agent::resume`]); once it completes, the session's history holds it.
    /// The session's tool state is set to the state's snapshot first.
    pub fn resume(&self, state: RunState, decisions: impl Into<Decisions>) -> RunRequest {
        for (key, value) in state.conversation_state() {
            self.state.set(key.clone(), value.clone());
        }
        RunRequest::new(
            self.agent.inner.clone(),
            Begin::Resume(Box::new(state), decisions.into()),
            self.state.clone(),
            Some(self.history.clone()),
        )
    }

    /// The conversation so far.
    pub fn history(&self) -> Vec<Message> {
        self.history
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The tools' conversation state.
    pub fn state(&self) -> &ConversationState {
        &self.state
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }
}
