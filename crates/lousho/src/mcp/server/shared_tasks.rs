//! Tasks kept in the session store, so replicas of a served agent sharing
//! one store answer for each other's tasks: behind a load balancer,
//! `tasks/get`, `tasks/update` and `tasks/cancel` may reach any replica.
//!
//! The replica running a task writes its state when it starts, at once
//! whenever its status message, its questions or its end change it, and
//! otherwise every third of the stale time (its heartbeat). What other
//! replicas' clients asked of the task (a cancel, answers) the server's
//! [`RequestSweep`] finds in the store, for all its tasks at once every
//! [`POLL_INTERVAL`], and the task's mirror hands it to the task. Another
//! replica answers `tasks/get` from the store, and reports a task whose
//! replica has not written it for the stale time (the lease time, 30 s by
//! default) as failed: that replica died.

use super::caller::Caller;
use super::request_sweep::ReplicaStore;
use super::task_owners::may_see;
use super::task_records::{Changes, POLL_INTERVAL, TASK_TTL, is_round, write_record};
use crate::session::{SessionStore, SharedTask, TaskRequest, TaskRequests};
use rmcp::model::{DetailedTask, ErrorData, GetTaskResult, InputResponses, TaskPayload};
use rmcp::task_manager::TaskManager;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long the store keeps a task: it may run [`TASK_TTL`], and its end is
/// kept as long again.
const KEEP: Duration = Duration::from_secs(2 * TASK_TTL.as_secs());

/// How many times the mirror yields for rmcp to record a finished task's
/// end before it waits for its next tick instead.
const END_YIELDS: usize = 1000;

/// The tasks of one server as kept in its session store (a running task
/// not written for the stale time is reported failed).
pub(crate) struct SharedTasks(pub(crate) ReplicaStore);

impl SharedTasks {
    /// Writes task `id` (just started in `manager`) to the store, then
    /// mirrors it there until it ends or the server closes.
    pub(crate) async fn share(
        &self,
        manager: &TaskManager,
        id: &str,
        owner: Option<Arc<str>>,
        changes: Arc<Changes>,
        shutdown: &CancellationToken,
    ) {
        let mut mirror = Mirror {
            store: self.0.store.clone(),
            manager: manager.clone(),
            id: id.to_owned(),
            owner,
            heartbeat: self.0.stale_after / 3,
            last: Value::Null,
            written: Instant::now(),
        };
        // Written before the call answers, so any replica knows the task
        // by the time its client asks.
        if mirror.sync(&changes).await {
            return;
        }
        let shutdown = shutdown.clone();
        let asked = self.0.sweep.watch(id);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = changes.notified() => {}
                    () = asked.found() => {}
                    () = tokio::time::sleep(POLL_INTERVAL) => {}
                    () = shutdown.cancelled() => return,
                }
                if let Some(requests) = asked.take() {
                    mirror.hand_on(requests);
                }
                if mirror.sync(&changes).await {
                    return;
                }
            }
        });
    }

    /// `tasks/get` of a task another replica runs.
    pub(crate) async fn get(
        &self,
        id: &str,
        caller: Option<&Caller>,
        unknown: ErrorData,
    ) -> Result<GetTaskResult, ErrorData> {
        let record = self.record(id, caller, unknown).await?;
        let mut task: DetailedTask = serde_json::from_value(record.state).map_err(|e| {
            ErrorData::internal_error(format!("the stored task {id} could not be read: {e}"), None)
        })?;
        if !record.ended && record.written_ago > self.0.stale_after {
            let message = format!(
                "the server running this task stopped (no word from it for {} s); call the tool again",
                record.written_ago.as_secs()
            );
            let error = ErrorData::internal_error(message, None);
            let error = match serde_json::to_value(error) {
                Ok(Value::Object(map)) => map,
                _ => serde_json::Map::new(),
            };
            task = DetailedTask::new(task.task, TaskPayload::Failed { error });
        }
        Ok(GetTaskResult::new(task))
    }

    /// `tasks/update` of a task another replica runs: the answers wait in
    /// the store for it.
    pub(crate) async fn update(
        &self,
        id: &str,
        caller: Option<&Caller>,
        answers: InputResponses,
        unknown: ErrorData,
    ) -> Result<(), ErrorData> {
        let answers = answers.into_iter().collect();
        self.request(id, caller, TaskRequest::Answers(answers), unknown)
            .await
    }

    /// `tasks/cancel` of a task another replica runs: it cancels the task
    /// when it next looks (within [`POLL_INTERVAL`]).
    pub(crate) async fn cancel(
        &self,
        id: &str,
        caller: Option<&Caller>,
        unknown: ErrorData,
    ) -> Result<(), ErrorData> {
        self.request(id, caller, TaskRequest::Cancel, unknown).await
    }

    /// Leaves `request` for task `id`'s replica; `unknown` (rmcp's error)
    /// when `caller` may not see it or the store does not know it.
    async fn request(
        &self,
        id: &str,
        caller: Option<&Caller>,
        request: TaskRequest,
        unknown: ErrorData,
    ) -> Result<(), ErrorData> {
        self.record(id, caller, unknown.clone()).await?;
        match self.0.store.task_request(id, &request).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(unknown),
            Err(e) => Err(store_failed(&e)),
        }
    }

    /// Task `id`'s record, if `caller` may see it; else `unknown`.
    async fn record(
        &self,
        id: &str,
        caller: Option<&Caller>,
        unknown: ErrorData,
    ) -> Result<SharedTask, ErrorData> {
        // A call parked on a round is kept beside the tasks: no task.
        if is_round(id) {
            return Err(unknown);
        }
        match self.0.store.task_read(id).await {
            Ok(Some(record)) if may_see(record.owner.as_deref(), caller) => Ok(record),
            Ok(_) => Err(unknown),
            Err(e) => Err(store_failed(&e)),
        }
    }
}

fn store_failed(e: &crate::session::StoreError) -> ErrorData {
    ErrorData::internal_error(format!("the session store failed: {e}"), None)
}

/// One task of this process, written to the store as it changes.
struct Mirror {
    store: Arc<dyn SessionStore>,
    manager: TaskManager,
    id: String,
    owner: Option<Arc<str>>,
    heartbeat: Duration,
    /// The state last written.
    last: Value,
    written: Instant,
}

impl Mirror {
    /// Hands the task what other replicas asked of it (a cancel comes
    /// once).
    fn hand_on(&self, asked: TaskRequests) {
        if asked.cancel {
            let _ = self.manager.cancel_task(&self.id);
        }
        if !asked.answers.is_empty() {
            let _ = self.manager.update_task(&self.id, asked.answers);
        }
    }

    /// Writes the task's state if it changed or the heartbeat is due;
    /// `true` once the task is over (ended and written, or gone).
    async fn sync(&mut self, changes: &Changes) -> bool {
        let Ok(mut task) = self.manager.get_task(&self.id) else {
            return true;
        };
        if changes.is_finished() {
            for _ in 0..END_YIELDS {
                if task.status().is_terminal() {
                    break;
                }
                tokio::task::yield_now().await;
                match self.manager.get_task(&self.id) {
                    Ok(now) => task = now,
                    Err(_) => return true,
                }
            }
        }
        let ended = task.status().is_terminal();
        let state = match serde_json::to_value(&task) {
            Ok(state) => state,
            Err(_) => return ended,
        };
        if state == self.last && self.written.elapsed() < self.heartbeat {
            return false;
        }
        let owner = self.owner.as_deref();
        if !write_record(&*self.store, &self.id, owner, &state, ended, KEEP).await {
            return false;
        }
        self.last = state;
        self.written = Instant::now();
        ended
    }
}
