//! One read of the session store per tick for everything other replicas
//! may have asked of this process: the cancels and answers for each of its
//! running tasks (see [`shared_tasks`](super::shared_tasks)) and the
//! retries for each of its parked calls (see
//! [`shared_rounds`](super::shared_rounds)).
//!
//! Each task or parked call watches its record ([`RequestSweep::watch`]);
//! every [`POLL_INTERVAL`] the sweep takes what was asked of all the watched
//! records in one store call
//! ([`SessionStore::task_take_requests_of`]) and hands each its part. With a
//! thousand tasks running that is one query a tick, not a thousand.

use super::task_records::POLL_INTERVAL;
use crate::session::{SessionStore, TaskRequests};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// What a server's tasks and parked calls share through the session store
/// its replicas share: the store, how long a replica may stay silent before
/// it counts as dead (the lease time), and the sweep.
#[derive(Clone)]
pub(crate) struct ReplicaStore {
    pub(crate) store: Arc<dyn SessionStore>,
    /// A running task or parked call not written for this long is gone.
    pub(crate) stale_after: Duration,
    pub(crate) sweep: RequestSweep,
}

impl ReplicaStore {
    /// Starts the server's sweep of `store`; it ends with `shutdown`.
    pub(crate) fn start(
        store: Arc<dyn SessionStore>,
        stale_after: Duration,
        shutdown: &CancellationToken,
    ) -> Self {
        Self {
            sweep: RequestSweep::start(store.clone(), shutdown),
            store,
            stale_after,
        }
    }
}

/// The sweep of one server: started with it, stopped when it closes.
#[derive(Clone)]
pub(crate) struct RequestSweep {
    shared: Arc<Shared>,
}

struct Shared {
    store: Arc<dyn SessionStore>,
    /// The watched records, by key.
    watched: Mutex<HashMap<String, Slot>>,
}

/// What the sweep found for one record and its watcher has not taken yet.
#[derive(Default)]
struct Slot {
    pending: TaskRequests,
    /// A cancel was handed on already (it stays asked in the store).
    cancel_given: bool,
    woken: Arc<Notify>,
}

impl RequestSweep {
    /// Starts the sweep of `store`; it ends with `shutdown`.
    pub(crate) fn start(store: Arc<dyn SessionStore>, shutdown: &CancellationToken) -> Self {
        let sweep = Self {
            shared: Arc::new(Shared {
                store,
                watched: Mutex::new(HashMap::new()),
            }),
        };
        let shared = sweep.shared.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let mut failing = false;
            loop {
                tokio::select! {
                    () = tokio::time::sleep(POLL_INTERVAL) => {}
                    () = shutdown.cancelled() => return,
                }
                match shared.sweep().await {
                    Ok(()) => failing = false,
                    // Logged once per run of failures, not every tick.
                    Err(e) if !failing => {
                        failing = true;
                        tracing::warn!(target: "lousho::mcp", error = %e,
                            "could not read from the session store what other replicas asked of this one's tasks and parked calls; trying again every 500 ms");
                    }
                    Err(_) => {}
                }
            }
        });
        sweep
    }

    /// Watches record `key` until the returned [`Asked`] is dropped.
    pub(crate) fn watch(&self, key: &str) -> Asked {
        let woken = Arc::new(Notify::new());
        self.shared.lock().insert(
            key.to_owned(),
            Slot {
                woken: woken.clone(),
                ..Slot::default()
            },
        );
        Asked {
            key: key.to_owned(),
            shared: self.shared.clone(),
            woken,
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.watched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One tick: takes what was asked of every watched record.
    async fn sweep(&self) -> Result<(), crate::session::StoreError> {
        let keys: Vec<String> = self.lock().keys().cloned().collect();
        if keys.is_empty() {
            return Ok(());
        }
        let found = self.store.task_take_requests_of(&keys).await?;
        let mut watched = self.lock();
        for (key, asked) in found {
            // A record no longer watched: its call ended meanwhile, and
            // what was asked of it is moot.
            let Some(slot) = watched.get_mut(&key) else {
                continue;
            };
            let cancel = asked.cancel && !slot.cancel_given;
            if !cancel && asked.answers.is_empty() {
                continue;
            }
            slot.cancel_given |= cancel;
            slot.pending.cancel |= cancel;
            slot.pending.answers.extend(asked.answers);
            slot.woken.notify_one();
        }
        Ok(())
    }
}

/// A watched record: what other replicas asked of it, as the sweep finds it.
pub(crate) struct Asked {
    key: String,
    shared: Arc<Shared>,
    woken: Arc<Notify>,
}

impl Asked {
    /// What was asked since the last take (a cancel is given once), if
    /// anything.
    pub(crate) fn take(&self) -> Option<TaskRequests> {
        let mut watched = self.shared.lock();
        let slot = watched.get_mut(&self.key)?;
        if !slot.pending.cancel && slot.pending.answers.is_empty() {
            return None;
        }
        Some(std::mem::take(&mut slot.pending))
    }

    /// Waits until the sweep finds something asked (or found something
    /// since the last wait). Cancel-safe; [`take`](Self::take) it then.
    pub(crate) async fn found(&self) {
        self.woken.notified().await;
    }
}

impl Drop for Asked {
    fn drop(&mut self) {
        self.shared.lock().remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{MemoryStore, StoreError, TaskRequest};
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A memory store that counts the store calls taking requests.
    #[derive(Debug)]
    struct Counting {
        inner: MemoryStore,
        one_by_one: AtomicUsize,
        batches: AtomicUsize,
    }

    #[async_trait::async_trait]
    impl SessionStore for Counting {
        async fn create(&self, s: &str) -> Result<crate::session::SessionInfo, StoreError> {
            self.inner.create(s).await
        }
        async fn load(&self, s: &str) -> Result<Option<crate::session::StoredSession>, StoreError> {
            self.inner.load(s).await
        }
        async fn append(
            &self,
            s: &str,
            v: u64,
            m: &[crate::model::Message],
        ) -> Result<u64, StoreError> {
            self.inner.append(s, v, m).await
        }
        async fn list(&self) -> Result<Vec<crate::session::SessionInfo>, StoreError> {
            self.inner.list().await
        }
        async fn delete(&self, s: &str) -> Result<bool, StoreError> {
            self.inner.delete(s).await
        }
        async fn save_run(
            &self,
            id: &str,
            run: &crate::session::PausedRun,
        ) -> Result<(), StoreError> {
            self.inner.save_run(id, run).await
        }
        async fn load_run(
            &self,
            id: &str,
        ) -> Result<Option<crate::session::PausedRun>, StoreError> {
            self.inner.load_run(id).await
        }
        async fn delete_run(&self, id: &str) -> Result<bool, StoreError> {
            self.inner.delete_run(id).await
        }
        async fn task_take_requests(&self, task: &str) -> Result<TaskRequests, StoreError> {
            self.one_by_one.fetch_add(1, Ordering::SeqCst);
            self.inner.task_take_requests(task).await
        }
        async fn task_take_requests_of(
            &self,
            tasks: &[String],
        ) -> Result<Vec<(String, TaskRequests)>, StoreError> {
            self.batches.fetch_add(1, Ordering::SeqCst);
            let mut asked = Vec::new();
            for task in tasks {
                let r = self.inner.task_take_requests(task).await?;
                if r.cancel || !r.answers.is_empty() {
                    asked.push((task.clone(), r));
                }
            }
            Ok(asked)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn one_store_call_a_tick_for_every_watched_record_and_each_gets_its_part() {
        let store = Arc::new(Counting {
            inner: MemoryStore::new(),
            one_by_one: AtomicUsize::new(0),
            batches: AtomicUsize::new(0),
        });
        let shutdown = CancellationToken::new();
        let sweep = RequestSweep::start(store.clone(), &shutdown);
        let mut watched = Vec::new();
        for i in 0..200 {
            let key = format!("task-{i}");
            store
                .inner
                .task_write(&key, None, &json!({}), false, Duration::from_secs(600))
                .await
                .unwrap();
            watched.push(sweep.watch(&key));
        }
        let mut answers = serde_json::Map::new();
        answers.insert("q".into(), json!("yes"));
        store
            .inner
            .task_request("task-7", &TaskRequest::Answers(answers.clone()))
            .await
            .unwrap();
        store
            .inner
            .task_request("task-9", &TaskRequest::Cancel)
            .await
            .unwrap();
        tokio::time::timeout(Duration::from_secs(5), watched[7].found())
            .await
            .expect("the answer was found within a tick");
        assert_eq!(watched[7].take(), Some(TaskRequests::new(false, answers)));
        watched[9].found().await;
        assert_eq!(
            watched[9].take(),
            Some(TaskRequests::new(true, Default::default()))
        );
        assert_eq!(watched[8].take(), None);
        // Three more ticks: the cancel stays asked in the store but is
        // handed on once; the answer was taken.
        tokio::time::sleep(3 * POLL_INTERVAL).await;
        assert_eq!(watched[9].take(), None);
        assert_eq!(watched[7].take(), None);
        let ticks = store.batches.load(Ordering::SeqCst);
        assert!(ticks >= 3, "{ticks}");
        assert_eq!(store.one_by_one.load(Ordering::SeqCst), 0);
        // A dropped watch is no longer read.
        watched.clear();
        let before = store.batches.load(Ordering::SeqCst);
        tokio::time::sleep(3 * POLL_INTERVAL).await;
        assert_eq!(store.batches.load(Ordering::SeqCst), before);
        shutdown.cancel();
    }
}
