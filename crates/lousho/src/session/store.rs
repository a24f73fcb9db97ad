//! The store trait and the records it keeps.

use super::StoreError;
use super::journal::{JournalStart, JournalStep, JournaledRun, RunSummary};
use super::lease::LeaseState;
use super::run_state::RunState;
use super::shared_task::{SharedTask, TaskRequest, TaskRequests};
use super::window::WindowCount;
use crate::model::Message;
use serde_json::Value;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest session or run id, in characters.
pub(crate) const MAX_ID_LEN: usize = 256;

/// Where sessions and paused runs are kept.
///
/// A session is an ordered list of messages with a **version**: the number
/// of messages stored. [`append`](SessionStore::append) names the version
/// it expects and fails with [`StoreError::Conflict`] (writing nothing) if
/// the session has moved on, so concurrent writers never lose each other's
/// messages; the one that lost reloads and retries or reports. Appends are
/// atomic: after a crash a session holds every append that returned `Ok`,
/// and no part of one that did not.
///
/// Implementations: [`MemoryStore`](super::MemoryStore), `SqliteStore`
/// (feature `sqlite`), `PostgresStore` (feature `postgres`).
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync + fmt::Debug {
    /// Creates an empty session (version 0); fails with
    /// [`StoreError::AlreadyExists`] if the id is taken.
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError>;

    /// A session's messages and version, or `None` if there is no such session.
    async fn load(&self, session: &str) -> Result<Option<StoredSession>, StoreError>;

    /// Appends `messages` if the session is at `expected_version`, and
    /// returns the new version (`expected_version + messages.len()`).
    /// Fails with [`StoreError::Conflict`] if the session is at another
    /// version, [`StoreError::NotFound`] if it does not exist.
    async fn append(
        &self,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError>;

    /// Every session, most recently updated first (without messages).
    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError>;

    /// Deletes a session, its messages, its paused and journaled runs and its lease; `false` if there
    /// was no such session.
    async fn delete(&self, session: &str) -> Result<bool, StoreError>;

    /// Saves a paused run under `id` (replacing one saved under that id).
    async fn save_run(&self, id: &str, run: &PausedRun) -> Result<(), StoreError>;

    /// The paused run saved under `id`, if any.
    async fn load_run(&self, id: &str) -> Result<Option<PausedRun>, StoreError>;

    /// Deletes the paused run saved under `id`; `false` if there was none.
    async fn delete_run(&self, id: &str) -> Result<bool, StoreError>;

    /// Takes the run lease of `session` for `holder` (a run id) for `ttl`,
    /// if it is free, has run out, or is `holder`'s already; otherwise says
    /// who holds it. The session need not exist. See [`LeaseSettings`](super::LeaseSettings).
    ///
    /// The default keeps no leases (every caller gets the lease): a store
    /// without them lets runs of one session overlap, and the later one to
    /// finish fails with [`StoreError::Conflict`].
    async fn acquire_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<LeaseState, StoreError> {
        let _ = (session, holder, ttl);
        Ok(LeaseState::Acquired)
    }

    /// Renews `holder`'s lease of `session` for `ttl` from now (its
    /// heartbeat); `false` if `holder` no longer holds it (it ran out and
    /// another run took it over).
    async fn renew_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let _ = (session, holder, ttl);
        Ok(true)
    }

    /// Gives back `holder`'s lease of `session` (nothing if `holder` does
    /// not hold it).
    async fn release_lease(&self, session: &str, holder: &str) -> Result<(), StoreError> {
        let _ = (session, holder);
        Ok(())
    }

    /// Starts the step journal of a run (see [`JournalStep`]), or hands an
    /// existing run's journal to a new holder (a resumed run: its steps are
    /// kept, its status is running again).
    ///
    /// The default keeps no journal: such a store's runs are not resumable
    /// after a crash.
    async fn journal_begin(&self, start: &JournalStart) -> Result<(), StoreError> {
        let _ = start;
        Ok(())
    }

    /// Commits step `seq` (from 0) of `run`, in one transaction.
    async fn journal_step(
        &self,
        run: &str,
        seq: u64,
        step: &JournalStep,
    ) -> Result<(), StoreError> {
        let _ = (run, seq, step);
        Ok(())
    }

    /// A run completed: appends `messages` to `session` as
    /// [`append`](SessionStore::append) does and removes the run's journal,
    /// in one transaction.
    async fn journal_complete(
        &self,
        run: &str,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        let _ = run;
        self.append(session, expected_version, messages).await
    }

    /// Marks `run` interrupted (it failed or was cancelled): resumable.
    async fn journal_interrupt(&self, run: &str) -> Result<(), StoreError> {
        let _ = run;
        Ok(())
    }

    /// Removes a run's journal; `false` if there was none.
    async fn journal_delete(&self, run: &str) -> Result<bool, StoreError> {
        let _ = run;
        Ok(false)
    }

    /// A run's journal with its steps, if the store has it.
    async fn journal_load(&self, run: &str) -> Result<Option<JournaledRun>, StoreError> {
        let _ = run;
        Ok(None)
    }

    /// The journaled runs of `session` (`None`: of every session), most
    /// recently updated first.
    async fn journal_list(&self, session: Option<&str>) -> Result<Vec<RunSummary>, StoreError> {
        let _ = session;
        Ok(Vec::new())
    }

    /// Adds `amount` to the counter `key` if its count in the current
    /// window is below `limit`, in one transaction, and returns the counter
    /// (see [`WindowCount`]). A window starts with the first count after the
    /// previous one ended and lasts `window`; then the count starts from 0
    /// again. Per-caller limits of served agents keep their counts here, so
    /// replicas sharing a store count together.
    ///
    /// The default keeps no counters (`Ok(None)`): the caller then counts
    /// in its own memory, per process.
    async fn count_in_window(
        &self,
        key: &str,
        window: Duration,
        amount: u64,
        limit: u64,
    ) -> Result<Option<WindowCount>, StoreError> {
        let _ = (key, window, amount, limit);
        Ok(None)
    }

    /// Writes the state of served task `task` (see [`SharedTask`]): its
    /// replica does when the task starts, whenever it changes, and as a
    /// heartbeat. `owner` is kept from the first write; the record is kept
    /// for `keep` from now. Replicas of a served agent sharing the store
    /// then answer for each other's tasks.
    ///
    /// The default keeps no tasks: each is known to its own process only.
    async fn task_write(
        &self,
        task: &str,
        owner: Option<&str>,
        state: &Value,
        ended: bool,
        keep: Duration,
    ) -> Result<(), StoreError> {
        let _ = (task, owner, state, ended, keep);
        Ok(())
    }

    /// Served task `task`'s record, unless the store does not know it (or
    /// no longer keeps it).
    async fn task_read(&self, task: &str) -> Result<Option<SharedTask>, StoreError> {
        let _ = task;
        Ok(None)
    }

    /// Leaves `request` for the replica running `task` to take
    /// ([`task_take_requests`](SessionStore::task_take_requests)); `false`
    /// if the store does not know the task.
    async fn task_request(&self, task: &str, request: &TaskRequest) -> Result<bool, StoreError> {
        let _ = (task, request);
        Ok(false)
    }

    /// What other replicas asked of `task`: whether it was cancelled, and
    /// the answers not taken yet (taking them removes them).
    async fn task_take_requests(&self, task: &str) -> Result<TaskRequests, StoreError> {
        let _ = task;
        Ok(TaskRequests::default())
    }

    /// What other replicas asked of each of `tasks`, in one go: the tasks
    /// with something asked (a cancel, or answers not taken yet, which are
    /// taken), each with what. A replica reads for all its running tasks
    /// and parked calls at once with this, every 500 ms. The default asks
    /// [`task_take_requests`](SessionStore::task_take_requests) for each;
    /// a store over a network answers in one round trip instead.
    async fn task_take_requests_of(
        &self,
        tasks: &[String],
    ) -> Result<Vec<(String, TaskRequests)>, StoreError> {
        let mut asked = Vec::new();
        for task in tasks {
            let requests = self.task_take_requests(task).await?;
            if requests.cancel || !requests.answers.is_empty() {
                asked.push((task.clone(), requests));
            }
        }
        Ok(asked)
    }

    /// Loads a session, creating it empty if it does not exist (two callers
    /// racing to create it both end with the one session).
    async fn open(&self, session: &str) -> Result<StoredSession, StoreError> {
        if let Some(found) = self.load(session).await? {
            return Ok(found);
        }
        match self.create(session).await {
            Ok(info) => Ok(StoredSession {
                info,
                messages: Vec::new(),
            }),
            Err(StoreError::AlreadyExists { .. }) => {
                self.load(session)
                    .await?
                    .ok_or_else(|| StoreError::NotFound {
                        session: session.to_owned(),
                    })
            }
            Err(e) => Err(e),
        }
    }
}

/// What a store knows about a session, without its messages.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The session's id.
    pub id: String,
    /// The number of messages stored (what the next append expects).
    pub version: u64,
    /// When it was created (millisecond precision).
    pub created_at: SystemTime,
    /// When it was last appended to (or created).
    pub updated_at: SystemTime,
}

impl SessionInfo {
    #[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
    pub(crate) fn from_millis(id: String, version: i64, created: i64, updated: i64) -> Self {
        Self {
            id,
            version: u64::try_from(version).unwrap_or(0),
            created_at: from_unix_millis(created),
            updated_at: from_unix_millis(updated),
        }
    }
}

/// A session's messages with its version.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredSession {
    /// The session (its `version` is `messages.len()`).
    pub info: SessionInfo,
    /// Every message, oldest first.
    pub messages: Vec<Message>,
}

/// A run paused for approval, as stored: its state, the session it belongs
/// to (if any), and what the application needs to resume it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PausedRun {
    /// The run's state ([`Agent::resume`](crate::Agent::resume) takes it).
    pub state: RunState,
    /// The session the run continues, if it was a session's turn.
    pub session: Option<String>,
    /// The application's own notes (the CLI keeps the spec file's path
    /// here); `Value::Null` if none.
    pub context: Value,
}

impl PausedRun {
    /// A paused run of no session, without notes.
    pub fn new(state: RunState) -> Self {
        Self {
            state,
            session: None,
            context: Value::Null,
        }
    }

    /// The session this run belongs to.
    #[must_use]
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// The application's notes.
    #[must_use]
    pub fn context(mut self, context: Value) -> Self {
        self.context = context;
        self
    }
}

/// A new random id for a paused run (16 lowercase hex digits).
pub fn new_run_id() -> String {
    format!("{:016x}", fastrand::u64(..))
}

/// Checks a session or run id: 1 to 256 characters, no control characters.
pub(crate) fn check_id(what: &'static str, id: &str) -> Result<(), StoreError> {
    let n = id.chars().count();
    if n == 0 || n > MAX_ID_LEN || id.chars().any(char::is_control) {
        return Err(StoreError::InvalidId {
            what,
            id: id.chars().take(MAX_ID_LEN + 1).collect(),
        });
    }
    Ok(())
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

pub(crate) fn from_unix_millis(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// A message as stored (JSON text).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn encode_message(message: &Message) -> String {
    // A Message is plain data (strings, JSON values): it always serialises.
    serde_json::to_string(message).unwrap_or_default()
}

#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn decode_message(session: &str, seq: i64, text: &str) -> Result<Message, StoreError> {
    serde_json::from_str(text).map_err(|source| StoreError::Corrupt {
        what: format!("message {seq} of session {session:?}"),
        source,
    })
}

/// A paused run's state and context as stored (JSON text each).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn encode_run(run: &PausedRun) -> Result<(String, String), StoreError> {
    let state = serde_json::to_string(&run.state).map_err(|source| StoreError::Corrupt {
        what: "paused run (writing)".into(),
        source,
    })?;
    let context = serde_json::to_string(&run.context).map_err(|source| StoreError::Corrupt {
        what: "paused run context (writing)".into(),
        source,
    })?;
    Ok((state, context))
}

#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn decode_run(
    id: &str,
    state: &str,
    session: Option<String>,
    context: &str,
) -> Result<PausedRun, StoreError> {
    let corrupt = |source| StoreError::Corrupt {
        what: format!("paused run {id:?}"),
        source,
    };
    Ok(PausedRun {
        state: serde_json::from_str(state).map_err(corrupt)?,
        session,
        context: serde_json::from_str(context).map_err(corrupt)?,
    })
}
