//! A store in memory: for tests and single-process programs.

use super::store::{check_id, from_unix_millis, now_millis};
use super::{PausedRun, SessionInfo, SessionStore, StoreError, StoredSession};
use crate::model::Message;
use crate::sync::MutexExt;
use std::collections::HashMap;
use std::sync::Mutex;

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
}
