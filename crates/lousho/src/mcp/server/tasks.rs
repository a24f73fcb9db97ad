//! Agent tools as tasks (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663): when the calling client declares the extension, a call of an
//! agent tool answers at once with a task (`resultType: "task"`) and the run
//! goes on in the server; the client polls `tasks/get` for its status (the
//! run's steps as status messages) and, at the end, its result;
//! `tasks/cancel` cancels the run. The tasks live in rmcp's `TaskManager`,
//! in memory: a task may run [`TASK_TTL`], and its result is kept for as
//! long again after it ends.
//!
//! A run in a task asks its client (approvals, `ToolContext` elicit and
//! sample, `model: sampling` turns) through the task: the question shows as
//! `input_required` with `inputRequests` in `tasks/get`, and the answer
//! comes with `tasks/update`.

use super::agent_tool::{self, AgentCallEnd, Approver};
use super::mrtr::Unanswered;
use super::peer_channel::{Asking, PeerChannel, ProgressTo};
use crate::Agent;
use crate::session::SessionStore;
use rmcp::model::{CreateTaskResult, InputRequest, JsonObject};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a task may run; its result is kept for as long again after it
/// ends (rmcp's retention), then `tasks/get` no longer knows it.
pub(crate) const TASK_TTL: Duration = Duration::from_secs(3600);

/// How often clients are asked to poll.
const POLL_INTERVAL_MS: u64 = 500;

/// A running task, as its run reports to it and asks through it.
#[derive(Clone)]
pub(crate) struct TaskLink {
    cx: TaskContext,
    /// The next question's number (keys must not repeat within a task).
    asked: Arc<AtomicU32>,
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

/// Whether the call's client takes a task for an answer (it declared the
/// extension).
pub(crate) fn client_takes_tasks(caps: Option<&rmcp::model::ClientCapabilities>) -> bool {
    caps.is_some_and(rmcp::model::ClientCapabilities::supports_tasks)
}

/// What an agent-tool call runs in its task.
pub(crate) struct AgentTask {
    pub(crate) agent: Agent,
    pub(crate) arguments: Option<JsonObject>,
    pub(crate) channel: PeerChannel,
    pub(crate) approver: Approver,
    pub(crate) store: Option<Arc<dyn SessionStore>>,
    /// Fires when the server closes.
    pub(crate) shutdown: CancellationToken,
}

/// Starts the run as a task of `tasks` and returns the task for the call's
/// answer. `tasks/cancel` (or the server closing) cancels the run; the task
/// then ends `cancelled`.
pub(crate) fn spawn_agent_task(tasks: &TaskManager, run: AgentTask) -> CreateTaskResult {
    let options = TaskOptions::new()
        .with_ttl_ms(u64::try_from(TASK_TTL.as_millis()).unwrap_or(u64::MAX))
        .with_poll_interval_ms(POLL_INTERVAL_MS)
        .with_status_message("the agent is working");
    let task = tasks.spawn(options, move |cx| {
        Box::pin(async move {
            let AgentTask {
                agent,
                arguments,
                mut channel,
                approver,
                store,
                shutdown,
            } = run;
            let link = TaskLink {
                cx: cx.clone(),
                asked: Arc::default(),
            };
            channel.progress = ProgressTo::Task(link.clone());
            if matches!(channel.asking, Asking::Modern) && (channel.elicitation || channel.sampling)
            {
                channel.asking = Asking::Task(link);
            }
            let run_cancel = shutdown.child_token();
            // The task is not the request: only `tasks/cancel` and the
            // server's close stop it.
            let detached = CancellationToken::new();
            let running = agent_tool::call(
                &agent,
                arguments,
                &detached,
                run_cancel.clone(),
                channel,
                approver,
                store.as_ref(),
            );
            tokio::pin!(running);
            let end = tokio::select! {
                end = &mut running => end,
                () = cx.cancelled() => {
                    run_cancel.cancel();
                    running.await
                }
            };
            match end {
                AgentCallEnd::Result(result) => Ok(result),
                AgentCallEnd::Cancelled => Err(TaskExit::Cancelled),
            }
        })
    });
    CreateTaskResult::new(task)
}
