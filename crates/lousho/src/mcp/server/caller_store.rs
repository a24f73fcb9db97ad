//! A caller's own view of the served session store: with OAuth, every
//! session id (and paused-run id) a caller names is stored under a prefix
//! made of its issuer and subject, so one caller cannot read, continue or
//! resume another's conversation even knowing its id — the same id from two
//! callers names two conversations. Without a caller (no auth, a static
//! bearer token) ids are stored as given, as before.

use super::caller::Caller;
use crate::model::Message;
use crate::session::{
    JournalStart, JournalStep, JournaledRun, LeaseState, PausedRun, RunSummary, SessionInfo,
    SessionStore, StoreError, StoredSession, WindowCount,
};
use std::sync::Arc;
use std::time::Duration;

/// `inner` as `caller` sees it (itself when there is no caller).
pub(crate) fn for_caller(
    inner: Option<Arc<dyn SessionStore>>,
    caller: Option<&Caller>,
) -> Option<Arc<dyn SessionStore>> {
    let key = caller.map(|c| CallerKey(c.key()));
    Some(for_key(inner?, key.as_ref()))
}

/// The key of the caller a request came from (its issuer and subject),
/// handed to what serves the request when there is one: the session
/// resources read the store through [`for_key`] with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallerKey(pub(crate) std::sync::Arc<str>);

/// `inner` as the caller with `key` sees it (itself without a key).
pub(crate) fn for_key(
    inner: Arc<dyn SessionStore>,
    key: Option<&CallerKey>,
) -> Arc<dyn SessionStore> {
    match key {
        Some(key) => Arc::new(CallerStore {
            inner,
            prefix: prefix(&key.0),
        }),
        None => inner,
    }
}

/// The stored-id prefix of a caller key: its length first, so no caller key
/// and id can add up to another's (`a/b` + `c` vs `a` + `b/c`).
fn prefix(key: &str) -> String {
    format!("caller:{}:{key}/", key.len())
}

/// One caller's sessions in a shared store.
#[derive(Debug)]
struct CallerStore {
    inner: Arc<dyn SessionStore>,
    prefix: String,
}

impl CallerStore {
    fn id(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    fn info(&self, mut info: SessionInfo) -> SessionInfo {
        info.id = self.own(info.id);
        info
    }

    /// `id` without this caller's prefix (as given when it has none).
    fn own(&self, id: String) -> String {
        match id.strip_prefix(&self.prefix) {
            Some(own) => own.to_owned(),
            None => id,
        }
    }

    fn stored(&self, mut s: StoredSession) -> StoredSession {
        s.info = self.info(s.info);
        s
    }
}

#[async_trait::async_trait]
impl SessionStore for CallerStore {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        Ok(self.info(self.inner.create(&self.id(session)).await?))
    }

    async fn load(&self, session: &str) -> Result<Option<StoredSession>, StoreError> {
        let found = self.inner.load(&self.id(session)).await?;
        Ok(found.map(|s| self.stored(s)))
    }

    async fn append(
        &self,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        self.inner
            .append(&self.id(session), expected_version, messages)
            .await
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let all = self.inner.list().await?;
        Ok(all
            .into_iter()
            .filter(|i| i.id.starts_with(&self.prefix))
            .map(|i| self.info(i))
            .collect())
    }

    async fn delete(&self, session: &str) -> Result<bool, StoreError> {
        self.inner.delete(&self.id(session)).await
    }

    async fn save_run(&self, id: &str, run: &PausedRun) -> Result<(), StoreError> {
        self.inner.save_run(&self.id(id), run).await
    }

    async fn load_run(&self, id: &str) -> Result<Option<PausedRun>, StoreError> {
        self.inner.load_run(&self.id(id)).await
    }

    async fn delete_run(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_run(&self.id(id)).await
    }

    async fn acquire_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<LeaseState, StoreError> {
        self.inner
            .acquire_lease(&self.id(session), holder, ttl)
            .await
    }

    async fn renew_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        self.inner.renew_lease(&self.id(session), holder, ttl).await
    }

    async fn release_lease(&self, session: &str, holder: &str) -> Result<(), StoreError> {
        self.inner.release_lease(&self.id(session), holder).await
    }

    async fn journal_begin(&self, start: &JournalStart) -> Result<(), StoreError> {
        let mut start = start.clone();
        start.run = self.id(&start.run);
        start.session = self.id(&start.session);
        self.inner.journal_begin(&start).await
    }

    async fn journal_step(
        &self,
        run: &str,
        seq: u64,
        step: &JournalStep,
    ) -> Result<(), StoreError> {
        self.inner.journal_step(&self.id(run), seq, step).await
    }

    async fn journal_complete(
        &self,
        run: &str,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        self.inner
            .journal_complete(&self.id(run), &self.id(session), expected_version, messages)
            .await
    }

    async fn journal_interrupt(&self, run: &str) -> Result<(), StoreError> {
        self.inner.journal_interrupt(&self.id(run)).await
    }

    async fn journal_delete(&self, run: &str) -> Result<bool, StoreError> {
        self.inner.journal_delete(&self.id(run)).await
    }

    async fn journal_load(&self, run: &str) -> Result<Option<JournaledRun>, StoreError> {
        let found = self.inner.journal_load(&self.id(run)).await?;
        Ok(found.map(|mut r| {
            r.id = self.own(r.id);
            r.session = self.own(r.session);
            r
        }))
    }

    async fn journal_list(&self, session: Option<&str>) -> Result<Vec<RunSummary>, StoreError> {
        let session = session.map(|s| self.id(s));
        let all = self.inner.journal_list(session.as_deref()).await?;
        Ok(all
            .into_iter()
            .filter(|r| r.session.starts_with(&self.prefix))
            .map(|mut r| {
                r.id = self.own(r.id);
                r.session = self.own(r.session);
                r
            })
            .collect())
    }

    async fn count_in_window(
        &self,
        key: &str,
        window: Duration,
        amount: u64,
        limit: u64,
    ) -> Result<Option<WindowCount>, StoreError> {
        self.inner
            .count_in_window(&self.id(key), window, amount, limit)
            .await
    }

    async fn open(&self, session: &str) -> Result<StoredSession, StoreError> {
        Ok(self.stored(self.inner.open(&self.id(session)).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::MemoryStore;

    fn store(inner: &Arc<dyn SessionStore>, key: &str) -> CallerStore {
        CallerStore {
            inner: inner.clone(),
            prefix: prefix(key),
        }
    }

    #[tokio::test]
    async fn callers_see_only_their_own_sessions() {
        let inner: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
        let alice = store(&inner, "i#a/b");
        let bob = store(&inner, "i#a");
        alice.create("c").await.unwrap();
        assert!(bob.load("b/c").await.unwrap().is_none());
        assert!(bob.load("c").await.unwrap().is_none());
        assert_eq!(alice.load("c").await.unwrap().unwrap().info.id, "c");
        bob.create("c").await.unwrap();
        assert_eq!(alice.list().await.unwrap().len(), 1);
        assert_eq!(inner.list().await.unwrap().len(), 2);
    }
}
