use super::{AgentError, AgentEvent, RunStatus};
use crate::model::Message;
use crate::sync::MutexExt;
use futures::Stream;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::mpsc;
use tokio_util::sync::DropGuard;

/// The events of a run. Dropping it cancels the run.
#[must_use = "a run does nothing unless its stream is polled; dropping it cancels the run"]
pub struct AgentStream {
    rx: mpsc::Receiver<Result<AgentEvent, AgentError>>,
    _cancel_on_drop: DropGuard,
    history: Option<Arc<Mutex<Vec<Message>>>>,
}

impl std::fmt::Debug for AgentStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentStream").finish_non_exhaustive()
    }
}

impl AgentStream {
    pub(crate) fn new(
        rx: mpsc::Receiver<Result<AgentEvent, AgentError>>,
        cancel_on_drop: DropGuard,
        history: Option<Arc<Mutex<Vec<Message>>>>,
    ) -> Self {
        Self {
            rx,
            _cancel_on_drop: cancel_on_drop,
            history,
        }
    }
}

impl Stream for AgentStream {
    type Item = Result<AgentEvent, AgentError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(Ok(AgentEvent::Done(reply)))) = &polled {
            // A session keeps the conversation for its next turn; a paused
            // run's calls have no results yet, so it joins once resumed.
            // A run stopped by its budget keeps a valid conversation too.
            if let Some(history) = &self.history
                && matches!(
                    reply.status,
                    RunStatus::Completed | RunStatus::BudgetExceeded { .. }
                )
            {
                *history.lock_unpoisoned() = reply.messages.clone();
            }
        }
        polled
    }
}
