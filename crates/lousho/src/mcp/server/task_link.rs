//! The link between a call running as a task and its task: the run's
//! status messages and questions go through it (`PeerChannel` holds one).

use super::mrtr::Unanswered;
use rmcp::model::InputRequest;
use rmcp::task_manager::TaskContext;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A running task, as its run reports to it and asks through it.
#[derive(Clone)]
pub(crate) struct TaskLink {
    cx: TaskContext,
    /// The next question's number (keys must not repeat within a task).
    asked: Arc<AtomicU32>,
}

impl TaskLink {
    /// The link of the task `cx` belongs to.
    pub(crate) fn new(cx: TaskContext) -> Self {
        Self {
            cx,
            asked: Arc::default(),
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
        match tokio::time::timeout(wait, asking).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(Unanswered::Gone),
            Err(_) => Err(Unanswered::TimedOut(wait)),
        }
    }
}
