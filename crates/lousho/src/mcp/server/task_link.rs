//! The link between a call running as a task and its task: the run's
//! status messages and questions go through it (`PeerChannel` holds one).

use super::mrtr::Unanswered;
use super::task_records::Changes;
use rmcp::model::InputRequest;
use rmcp::task_manager::TaskContext;
use serde_json::Value;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Poll;
use std::time::Duration;

/// A running task, as its run reports to it and asks through it.
#[derive(Clone)]
pub(crate) struct TaskLink {
    cx: TaskContext,
    /// The next question's number (keys must not repeat within a task).
    asked: Arc<AtomicU32>,
    /// Tells the task's copy in the session store that it changed.
    changes: Arc<Changes>,
}

impl TaskLink {
    /// The link of the task `cx` belongs to, telling `changes` of each
    /// change.
    pub(crate) fn new(cx: TaskContext, changes: Arc<Changes>) -> Self {
        Self {
            cx,
            asked: Arc::default(),
            changes,
        }
    }
}

impl fmt::Debug for TaskLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLink")
            .field("task_id", &self.cx.task_id())
            .finish_non_exhaustive()
    }
}

impl TaskLink {
    /// Sets the task's status message (what `tasks/get` shows).
    pub(crate) fn status(&self, message: String) {
        self.cx.set_status_message(message);
        self.changes.changed();
    }

    /// Asks the client through the task (`input_required` until the answer
    /// comes with `tasks/update`), waiting at most `wait`.
    pub(crate) async fn ask(
        &self,
        request: InputRequest,
        wait: Duration,
    ) -> Result<Value, Unanswered> {
        let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let asking = self.cx.request_input(format!("q{n}"), request);
        let asking = tokio::time::timeout(wait, asking);
        tokio::pin!(asking);
        // Its first poll puts the question in the task; then it changed.
        let first = std::future::poll_fn(|cx| Poll::Ready(asking.as_mut().poll(cx))).await;
        let end = match first {
            Poll::Ready(end) => end,
            Poll::Pending => {
                self.changes.changed();
                asking.await
            }
        };
        match end {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(Unanswered::Gone),
            Err(_) => Err(Unanswered::TimedOut(wait)),
        }
    }
}
