//! Calls as tasks (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663): when the calling client declares the extension, a call of an
//! agent tool (or of a direct tool that opted in with
//! [`serve_as_task`](crate::tool::DefinedTool::serve_as_task)) answers at
//! once with a task (`resultType: "task"`) and the run
//! goes on in the server; the client polls `tasks/get` for its status (the
//! run's steps as status messages) and, at the end, its result;
//! `tasks/cancel` cancels the run. The tasks live in rmcp's `TaskManager`,
//! in memory: a task may run [`TASK_TTL`], and its result is kept for as
//! long again after it ends. With a session store, each task is also kept
//! there ([`shared_tasks`](super::shared_tasks)), so replicas sharing the
//! store answer for each other's tasks.
//!
//! A run in a task asks its client (approvals, `ToolContext` elicit and
//! sample, `model: sampling` turns) through the task: the question shows as
//! `input_required` with `inputRequests` in `tasks/get`, and the answer
//! comes with `tasks/update`.

use super::caller::Caller;
use super::peer_channel::{Asking, PeerChannel, ProgressTo};
use super::request_sweep::ReplicaStore;
use super::shared_tasks::SharedTasks;
use super::task_link::TaskLink;
use super::task_owners::TaskOwners;
use super::task_records::{Changes, POLL_INTERVAL, TASK_TTL};
use rmcp::model::{CallToolResult, CreateTaskResult, ErrorData, GetTaskResult, InputResponses};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use std::future::Future;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// Whether the call's client takes a task for an answer (it declared the
/// extension).
pub(crate) fn client_takes_tasks(caps: Option<&rmcp::model::ClientCapabilities>) -> bool {
    caps.is_some_and(rmcp::model::ClientCapabilities::supports_tasks)
}

/// The tasks of one server: run here (rmcp's `TaskManager`), owned by their
/// callers, and kept in the session store when there is one.
pub(crate) struct ServedTasks {
    manager: TaskManager,
    owners: TaskOwners,
    shared: Option<SharedTasks>,
}

impl ServedTasks {
    /// Tasks kept in memory, and in the replicas' store when given; a task
    /// whose replica has not written it for the stale time is reported
    /// failed.
    pub(crate) fn new(replicas: Option<ReplicaStore>) -> Self {
        Self {
            manager: TaskManager::new(),
            owners: TaskOwners::default(),
            shared: replicas.map(SharedTasks),
        }
    }

    /// Starts a call as a task of `caller` and returns the task for the
    /// call's answer. `call` gets the call's channel (reporting to and
    /// asking through the task) and the run's cancellation token, which
    /// `tasks/cancel` or the server closing (`shutdown`) fires; it returns
    /// `None` when it stopped for that, and the task then ends `cancelled`.
    pub(crate) async fn spawn_call<F, Fut>(
        &self,
        caller: Option<&Caller>,
        mut channel: PeerChannel,
        shutdown: &CancellationToken,
        status: &str,
        call: F,
    ) -> CreateTaskResult
    where
        F: FnOnce(PeerChannel, CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = Option<CallToolResult>> + Send + 'static,
    {
        let options = TaskOptions::new()
            .with_ttl_ms(u64::try_from(TASK_TTL.as_millis()).unwrap_or(u64::MAX))
            .with_poll_interval_ms(u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(500))
            .with_status_message(status);
        // The call's spans stay children of its server span.
        let span = tracing::Span::current();
        let run_cancel = shutdown.child_token();
        let changes = Arc::new(Changes::default());
        let seen = changes.clone();
        let task = self.manager.spawn(options, move |cx| {
            let link = TaskLink::new(cx.clone(), changes.clone());
            channel.progress = ProgressTo::Task(link.clone());
            if matches!(channel.asking, Asking::Modern) && (channel.elicitation || channel.sampling)
            {
                channel.asking = Asking::Task(link);
            }
            Box::pin(
                async move {
                    let running = call(channel, run_cancel.clone());
                    tokio::pin!(running);
                    let end = tokio::select! {
                        end = &mut running => end,
                        () = cx.cancelled() => {
                            run_cancel.cancel();
                            running.await
                        }
                    };
                    changes.finished();
                    end.ok_or(TaskExit::Cancelled)
                }
                .instrument(span),
            )
        });
        let manager = &self.manager;
        self.owners
            .record(&task.task_id, caller, |id| manager.get_task(id).is_ok());
        if let Some(shared) = &self.shared {
            let owner = caller.map(Caller::key);
            shared
                .share(manager, &task.task_id, owner, seen, shutdown)
                .await;
        }
        CreateTaskResult::new(task)
    }

    /// `tasks/get`: a task of this process, else one the store keeps.
    pub(crate) async fn get(
        &self,
        id: &str,
        caller: Option<&Caller>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.owners.check(id, caller)?;
        match self.manager.get_task(id) {
            Ok(task) => Ok(GetTaskResult::new(task)),
            Err(unknown) => match &self.shared {
                Some(shared) => shared.get(id, caller, unknown).await,
                None => Err(unknown),
            },
        }
    }

    /// `tasks/update`: answers for a task of this process, else left in
    /// the store for the replica running it.
    pub(crate) async fn update(
        &self,
        id: &str,
        caller: Option<&Caller>,
        answers: InputResponses,
    ) -> Result<(), ErrorData> {
        self.owners.check(id, caller)?;
        let Some(shared) = &self.shared else {
            return self.manager.update_task(id, answers);
        };
        // rmcp's only error here is an unknown task: perhaps another
        // replica's, which the store knows (so the answers are kept for it).
        let local = answers.iter().map(|(k, v)| (k.clone(), v.clone()));
        match self.manager.update_task(id, local) {
            Err(unknown) => shared.update(id, caller, answers, unknown).await,
            here => here,
        }
    }

    /// `tasks/cancel`: cancels a task of this process, else asks the
    /// replica running it through the store.
    pub(crate) async fn cancel(&self, id: &str, caller: Option<&Caller>) -> Result<(), ErrorData> {
        self.owners.check(id, caller)?;
        // As in `update`.
        match (self.manager.cancel_task(id), &self.shared) {
            (Err(unknown), Some(shared)) => shared.cancel(id, caller, unknown).await,
            (here, _) => here,
        }
    }
}
