use super::{Agent, AgentError, AgentStream, Reply, SendOptions, run};
use crate::model::Message;
use crate::tool::ConversationState;
use std::sync::{Arc, Mutex, PoisonError};

/// A multi-turn conversation with an agent: every `send` sees the history of
/// the ones before, and tools share one [`ConversationState`].
///
/// Turns are meant to be sequential: await one before sending the next.
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

    /// Sends a message and runs to the final answer.
    pub async fn send(&self, input: impl Into<Message>) -> Result<Reply, AgentError> {
        self.send_with(input, SendOptions::default()).await
    }

    /// [`send`](Session::send) with options.
    pub async fn send_with(
        &self,
        input: impl Into<Message>,
        options: SendOptions,
    ) -> Result<Reply, AgentError> {
        self.stream_with(input, options).into_reply().await
    }

    /// Sends a message, yielding events; the history is updated when the run
    /// is done.
    pub fn stream(&self, input: impl Into<Message>) -> AgentStream {
        self.stream_with(input, SendOptions::default())
    }

    /// [`stream`](Session::stream) with options.
    pub fn stream_with(&self, input: impl Into<Message>, options: SendOptions) -> AgentStream {
        let mut messages = self.history();
        messages.push(input.into());
        run::start(
            self.agent.inner.clone(),
            messages,
            self.state.clone(),
            options,
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
