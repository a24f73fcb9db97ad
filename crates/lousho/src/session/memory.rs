//! A store in memory: for tests and single-process programs.

use super::store::{check_id, from_unix_millis, now_millis};
use super::{
    JournalStart, JournalStatus, JournalStep, JournaledRun, LeaseState, PausedRun, RunSummary,
    SessionInfo, SessionStore, SharedTask, StoreError, StoredSession, TaskRequest, TaskRequests,
    WindowCount,
};
use crate::model::Message;
use crate::sync::MutexExt;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A [`SessionStore`] in memory: gone when the process ends. Cheap; share
/// it in an `Arc`.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    sessions: HashMap<String, Entry>,
    runs: HashMap<String, PausedRun>,
    /// Each session's lease: its holder and when it runs out.
    leases: HashMap<String, (String, Instant)>,
    /// Journaled runs by id.
    journals: HashMap<String, Journal>,
    /// Counters of per-caller limits: when each window started, its count.
    windows: HashMap<String, (Instant, u64)>,
    /// Served tasks by id.
    tasks: HashMap<String, Task>,
}

/// A served task's record.
#[derive(Debug)]
struct Task {
    owner: Option<String>,
    state: serde_json::Value,
    ended: bool,
    written: Instant,
    keep_until: Instant,
    cancel: bool,
    answers: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug)]
struct Journal {
    start: JournalStart,
    interrupted: bool,
    steps: Vec<JournalStep>,
    updated: i64,
}

impl Inner {
    /// Running while its holder's lease is live; else interrupted.
    fn status(&self, journal: &Journal) -> JournalStatus {
        let live = self
            .leases
            .get(&journal.start.session)
            .is_some_and(|(h, until)| *h == journal.start.holder && *until > Instant::now());
        if live && !journal.interrupted {
            JournalStatus::Running
        } else {
            JournalStatus::Interrupted
        }
    }
}

#[derive(Debug)]
struct Entry {
    messages: Vec<Message>,
    created: i64,
    updated: i64,
}

impl Entry {
    fn info(&self, id: &str) -> SessionInfo {
        SessionInfo {
            id: id.to_owned(),
            version: self.messages.len() as u64,
            created_at: from_unix_millis(self.created),
            updated_at: from_unix_millis(self.updated),
        }
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait::async_trait]
impl SessionStore for MemoryStore {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        check_id("session id", session)?;
        let mut inner = self.inner.lock_unpoisoned();
        if inner.sessions.contains_key(session) {
            return Err(StoreError::AlreadyExists {
                session: session.to_owned(),
            });
        }
        let now = now_millis();
        let entry = Entry {
            messages: Vec::new(),
            created: now,
            updated: now,
        };
        let info = entry.info(session);
        inner.sessions.insert(session.to_owned(), entry);
        Ok(info)
    }

    async fn load(&self, session: &str) -> Result<Option<StoredSession>, StoreError> {
        Ok(self
            .inner
            .lock_unpoisoned()
            .sessions
            .get(session)
            .map(|e| StoredSession {
                info: e.info(session),
                messages: e.messages.clone(),
            }))
    }

    async fn append(
        &self,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        let mut inner = self.inner.lock_unpoisoned();
        let entry = inner
            .sessions
            .get_mut(session)
            .ok_or_else(|| StoreError::NotFound {
                session: session.to_owned(),
            })?;
        let found = entry.messages.len() as u64;
        if found != expected_version {
            return Err(StoreError::Conflict {
                session: session.to_owned(),
                expected: expected_version,
                found,
            });
        }
        entry.messages.extend_from_slice(messages);
        entry.updated = now_millis();
        Ok(entry.messages.len() as u64)
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let mut all: Vec<SessionInfo> = self
            .inner
            .lock_unpoisoned()
            .sessions
            .iter()
            .map(|(id, e)| e.info(id))
            .collect();
        all.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
        Ok(all)
    }

    async fn delete(&self, session: &str) -> Result<bool, StoreError> {
        let mut inner = self.inner.lock_unpoisoned();
        inner
            .runs
            .retain(|_, r| r.session.as_deref() != Some(session));
        inner.leases.remove(session);
        inner.journals.retain(|_, j| j.start.session != session);
        Ok(inner.sessions.remove(session).is_some())
    }

    async fn save_run(&self, id: &str, run: &PausedRun) -> Result<(), StoreError> {
        check_id("run id", id)?;
        self.inner
            .lock_unpoisoned()
            .runs
            .insert(id.to_owned(), run.clone());
        Ok(())
    }

    async fn load_run(&self, id: &str) -> Result<Option<PausedRun>, StoreError> {
        Ok(self.inner.lock_unpoisoned().runs.get(id).cloned())
    }

    async fn delete_run(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.inner.lock_unpoisoned().runs.remove(id).is_some())
    }

    async fn acquire_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<LeaseState, StoreError> {
        check_id("session id", session)?;
        let now = Instant::now();
        let mut inner = self.inner.lock_unpoisoned();
        if let Some((held_by, until)) = inner.leases.get(session)
            && held_by != holder
            && *until > now
        {
            return Ok(LeaseState::Held {
                holder: held_by.clone(),
                expires_in: *until - now,
            });
        }
        inner
            .leases
            .insert(session.to_owned(), (holder.to_owned(), now + ttl));
        Ok(LeaseState::Acquired)
    }

    async fn renew_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let mut inner = self.inner.lock_unpoisoned();
        match inner.leases.get_mut(session) {
            Some((held_by, until)) if held_by == holder => {
                *until = Instant::now() + ttl;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn release_lease(&self, session: &str, holder: &str) -> Result<(), StoreError> {
        let mut inner = self.inner.lock_unpoisoned();
        if inner.leases.get(session).is_some_and(|(h, _)| h == holder) {
            inner.leases.remove(session);
        }
        Ok(())
    }

    async fn count_in_window(
        &self,
        key: &str,
        window: Duration,
        amount: u64,
        limit: u64,
    ) -> Result<Option<WindowCount>, StoreError> {
        let now = Instant::now();
        let mut inner = self.inner.lock_unpoisoned();
        let (started, count) = inner.windows.entry(key.to_owned()).or_insert((now, 0));
        if now >= *started + window {
            *started = now;
            *count = 0;
        }
        let added = *count < limit;
        if added {
            *count = count.saturating_add(amount);
        }
        let resets_in = (*started + window).saturating_duration_since(now);
        Ok(Some(WindowCount::new(added, *count, resets_in)))
    }

    async fn task_write(
        &self,
        task: &str,
        owner: Option<&str>,
        state: &serde_json::Value,
        ended: bool,
        keep: Duration,
    ) -> Result<(), StoreError> {
        check_id("task id", task)?;
        let now = Instant::now();
        let keep_until = now
            .checked_add(keep)
            .unwrap_or(now + Duration::from_secs(86_400 * 365));
        let mut inner = self.inner.lock_unpoisoned();
        inner.tasks.retain(|_, t| t.keep_until > now);
        let entry = inner.tasks.entry(task.to_owned()).or_insert_with(|| Task {
            owner: owner.map(str::to_owned),
            state: serde_json::Value::Null,
            ended: false,
            written: now,
            keep_until,
            cancel: false,
            answers: serde_json::Map::new(),
        });
        entry.state = state.clone();
        entry.ended = ended;
        entry.written = now;
        entry.keep_until = keep_until;
        Ok(())
    }

    async fn task_read(&self, task: &str) -> Result<Option<SharedTask>, StoreError> {
        let now = Instant::now();
        let inner = self.inner.lock_unpoisoned();
        Ok(inner
            .tasks
            .get(task)
            .filter(|t| t.keep_until > now)
            .map(|t| {
                SharedTask::new(
                    t.owner.clone(),
                    t.state.clone(),
                    t.ended,
                    now.saturating_duration_since(t.written),
                )
            }))
    }

    async fn task_request(&self, task: &str, request: &TaskRequest) -> Result<bool, StoreError> {
        let now = Instant::now();
        let mut inner = self.inner.lock_unpoisoned();
        let Some(t) = inner.tasks.get_mut(task).filter(|t| t.keep_until > now) else {
            return Ok(false);
        };
        match request {
            TaskRequest::Cancel => t.cancel = true,
            TaskRequest::Answers(answers) => t.answers.extend(answers.clone()),
        }
        Ok(true)
    }

    async fn task_take_requests(&self, task: &str) -> Result<TaskRequests, StoreError> {
        let mut inner = self.inner.lock_unpoisoned();
        Ok(inner
            .tasks
            .get_mut(task)
            .map_or_else(TaskRequests::default, |t| {
                TaskRequests::new(t.cancel, std::mem::take(&mut t.answers))
            }))
    }

    async fn journal_begin(&self, start: &JournalStart) -> Result<(), StoreError> {
        check_id("run id", &start.run)?;
        let mut inner = self.inner.lock_unpoisoned();
        let now = now_millis();
        match inner.journals.get_mut(&start.run) {
            Some(journal) => {
                journal.start.holder = start.holder.clone();
                journal.start.base_version = start.base_version;
                journal.interrupted = false;
                journal.updated = now;
            }
            None => {
                let journal = Journal {
                    start: start.clone(),
                    interrupted: false,
                    steps: Vec::new(),
                    updated: now,
                };
                inner.journals.insert(start.run.clone(), journal);
            }
        }
        Ok(())
    }

    async fn journal_step(
        &self,
        run: &str,
        seq: u64,
        step: &JournalStep,
    ) -> Result<(), StoreError> {
        let mut inner = self.inner.lock_unpoisoned();
        let journal = inner
            .journals
            .get_mut(run)
            .ok_or_else(|| StoreError::Backend {
                backend: "memory",
                source: format!("no journal of run {run:?}").into(),
            })?;
        if journal.steps.len() as u64 != seq {
            return Err(StoreError::Backend {
                backend: "memory",
                source: format!("step {seq} of run {run:?} is out of order").into(),
            });
        }
        journal.steps.push(step.clone());
        journal.updated = now_millis();
        Ok(())
    }

    async fn journal_complete(
        &self,
        run: &str,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        let version = self.append(session, expected_version, messages).await?;
        self.inner.lock_unpoisoned().journals.remove(run);
        Ok(version)
    }

    async fn journal_interrupt(&self, run: &str) -> Result<(), StoreError> {
        if let Some(journal) = self.inner.lock_unpoisoned().journals.get_mut(run) {
            journal.interrupted = true;
        }
        Ok(())
    }

    async fn journal_delete(&self, run: &str) -> Result<bool, StoreError> {
        Ok(self.inner.lock_unpoisoned().journals.remove(run).is_some())
    }

    async fn journal_load(&self, run: &str) -> Result<Option<JournaledRun>, StoreError> {
        let inner = self.inner.lock_unpoisoned();
        Ok(inner.journals.get(run).map(|j| JournaledRun {
            id: run.to_owned(),
            session: j.start.session.clone(),
            status: inner.status(j),
            base_version: j.start.base_version,
            input: j.start.input.clone(),
            steps: j.steps.clone(),
            context: j.start.context.clone(),
            updated_at: from_unix_millis(j.updated),
        }))
    }

    async fn journal_list(&self, session: Option<&str>) -> Result<Vec<RunSummary>, StoreError> {
        let inner = self.inner.lock_unpoisoned();
        let mut all: Vec<RunSummary> = inner
            .journals
            .values()
            .filter(|j| session.is_none_or(|s| s == j.start.session))
            .map(|j| RunSummary {
                id: j.start.run.clone(),
                session: j.start.session.clone(),
                status: inner.status(j),
                steps: j.steps.len() as u64,
                updated_at: from_unix_millis(j.updated),
            })
            .collect();
        all.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
        Ok(all)
    }
}
