//! What served tasks and calls parked on an input-required round share,
//! here and in the session store: how long a task lives, how often
//! clients and replicas look, how a task tells its copy in the store that
//! it changed, and how a parked call's record is told from a task's.

use crate::session::SessionStore;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// How long a task may run; its result is kept for as long again after it
/// ends (rmcp's retention), then `tasks/get` no longer knows it.
pub(crate) const TASK_TTL: Duration = Duration::from_secs(3600);

/// How often clients are asked to poll, and how often a replica looks in
/// the store for what other replicas asked of its tasks and parked calls.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The store's key of the call parked under `handle` (apart from task ids,
/// which are UUIDs).
pub(crate) fn round_key(handle: &str) -> String {
    format!("{ROUND_PREFIX}{handle}")
}

/// Whether `id` names a parked call's record rather than a task.
pub(crate) fn is_round(id: &str) -> bool {
    id.starts_with(ROUND_PREFIX)
}

const ROUND_PREFIX: &str = "round/";

/// Writes record `id` (a task's, or a parked call's) with `state` to
/// `store`, kept for `keep`; `false` if the store failed (logged — without
/// a parked call's key, which is its unguessable `requestState`).
pub(crate) async fn write_record(
    store: &dyn SessionStore,
    id: &str,
    owner: Option<&str>,
    state: &Value,
    ended: bool,
    keep: Duration,
) -> bool {
    let Err(e) = store.task_write(id, owner, state, ended, keep).await else {
        return true;
    };
    if is_round(id) {
        tracing::warn!(target: "lousho::mcp", error = %e,
            "could not write a parked call to the session store");
    } else {
        tracing::warn!(target: "lousho::mcp", task = %id, error = %e,
            "could not write a shared task to the session store");
    }
    false
}

/// Tells a task's mirror that the task changed (its status message, a
/// question) or that its run finished.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    notify: Notify,
    finished: AtomicBool,
}

impl Changes {
    /// The task's state changed.
    pub(crate) fn changed(&self) {
        self.notify.notify_one();
    }

    /// The task's run returned (rmcp records its end right after).
    pub(crate) fn finished(&self) {
        self.finished.store(true, Ordering::Release);
        self.notify.notify_one();
    }

    /// Waits for the next change (or one that came since the last wait).
    pub(crate) async fn notified(&self) {
        self.notify.notified().await;
    }

    /// Whether the task's run returned.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }
}
