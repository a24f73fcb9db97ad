//! The SQLite store: one file, WAL, the embedded default.

use super::journal::encode_step;
use super::store::{check_id, decode_message, decode_run, encode_message, encode_run, now_millis};
use super::{
    JournalStart, JournalStep, JournaledRun, LeaseState, PausedRun, RunSummary, SessionInfo,
    SessionStore, SharedTask, StoreError, StoredSession, TaskRequest, TaskRequests, WindowCount,
};
use crate::model::Message;
use crate::sync::MutexExt;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod journal;
mod lease;
mod shared_task;
mod window;

const BACKEND: &str = "sqlite";

/// How long a write waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The schema, one step per version (`PRAGMA user_version` is the number
/// of steps applied). Append steps; never edit one that shipped.
const MIGRATIONS: &[&str] = &[
    // 1: sessions, their messages, paused runs.
    "CREATE TABLE sessions (
        id TEXT PRIMARY KEY NOT NULL,
        version INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE TABLE messages (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE paused_runs (
        id TEXT PRIMARY KEY NOT NULL,
        session_id TEXT,
        state TEXT NOT NULL,
        context TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX paused_runs_by_session ON paused_runs (session_id);",
    // 2: run leases (one run at a time per session).
    "CREATE TABLE leases (
        session_id TEXT PRIMARY KEY NOT NULL,
        holder TEXT NOT NULL,
        heartbeat_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
    );",
    // 3: the step journal of runs (resumable after a crash).
    "CREATE TABLE runs (
        id TEXT PRIMARY KEY NOT NULL,
        session_id TEXT NOT NULL,
        holder TEXT NOT NULL,
        status TEXT NOT NULL,
        base_version INTEGER NOT NULL,
        input TEXT NOT NULL,
        context TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX runs_by_session ON runs (session_id);
    CREATE TABLE run_steps (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );",
    // 4: counters of per-caller limits (runs a minute, tokens a day).
    "CREATE TABLE limit_windows (
        key TEXT PRIMARY KEY NOT NULL,
        window_start INTEGER NOT NULL,
        count INTEGER NOT NULL
    );",
    // 5: served tasks, shared by replicas on one file.
    "CREATE TABLE tasks (
        id TEXT PRIMARY KEY NOT NULL,
        owner TEXT,
        state TEXT NOT NULL,
        ended INTEGER NOT NULL,
        written_at INTEGER NOT NULL,
        keep_until INTEGER NOT NULL,
        cancel INTEGER NOT NULL DEFAULT 0,
        answers TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX tasks_by_keep ON tasks (keep_until);",
];

/// A [`SessionStore`] in a SQLite file (feature `sqlite`).
///
/// The file is in WAL mode with `synchronous = NORMAL`: readers never block
/// the writer, and a process killed at any point (even mid-append) leaves
/// every committed append in the file (a power loss may lose the last
/// ones). Several processes may open one file; a writer waits up to 30 s
/// for another's write to finish. Calls run on tokio's blocking pool.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (or creates) the database at `path`, creating its folder, and
    /// brings its schema up to date.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let opened = path.clone();
        let conn = tokio::task::spawn_blocking(move || open_blocking(&opened))
            .await
            .map_err(|e| StoreError::backend(BACKEND, e))??;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` with the connection on the blocking pool.
    async fn with<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock_unpoisoned();
            f(&mut conn)
        })
        .await
        .map_err(|e| StoreError::backend(BACKEND, e))?
    }
}

fn db(e: rusqlite::Error) -> StoreError {
    StoreError::backend(BACKEND, e)
}

fn open_blocking(path: &Path) -> Result<Connection, StoreError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| StoreError::backend(BACKEND, e))?;
    }
    let mut conn = Connection::open(path).map_err(db)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(db)?;
    // WAL: readers and one writer at once; NORMAL: durable against a
    // crashed process (not against a power loss), far fewer fsyncs.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(db)?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(target: "lousho::session", mode, "SQLite did not switch to WAL");
    }
    conn.execute_batch("PRAGMA synchronous = NORMAL;")
        .map_err(db)?;
    migrate(&mut conn)?;
    Ok(conn)
}

/// Applies the missing migrations in one write transaction (so two
/// processes opening a new file at once apply them once).
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let supported = MIGRATIONS.len() as i64;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let found: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(db)?;
    if found > supported {
        return Err(StoreError::SchemaTooNew { found, supported });
    }
    for (i, step) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.execute_batch(step).map_err(db)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))
            .map_err(db)?;
    }
    tx.commit().map_err(db)
}

fn session_info(conn: &Connection, session: &str) -> Result<Option<SessionInfo>, StoreError> {
    conn.prepare_cached("SELECT version, created_at, updated_at FROM sessions WHERE id = ?1")
        .map_err(db)?
        .query_row([session], |r| {
            Ok(SessionInfo::from_millis(
                session.to_owned(),
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
            ))
        })
        .optional()
        .map_err(db)
}

/// Appends `bodies` inside `tx` if the session is at `expected`; the new version.
fn append_in(
    tx: &Connection,
    session: String,
    expected: u64,
    bodies: &[String],
) -> Result<u64, StoreError> {
    let found: Option<i64> = tx
        .prepare_cached("SELECT version FROM sessions WHERE id = ?1")
        .map_err(db)?
        .query_row([&session], |r| r.get(0))
        .optional()
        .map_err(db)?;
    let Some(found) = found else {
        return Err(StoreError::NotFound { session });
    };
    let found = found as u64;
    if found != expected {
        return Err(StoreError::Conflict {
            session,
            expected,
            found,
        });
    }
    {
        let mut insert = tx
            .prepare_cached("INSERT INTO messages (session_id, seq, body) VALUES (?1, ?2, ?3)")
            .map_err(db)?;
        for (i, body) in bodies.iter().enumerate() {
            insert
                .execute(params![session, (found + i as u64) as i64, body])
                .map_err(db)?;
        }
    }
    let version = found + bodies.len() as u64;
    tx.prepare_cached("UPDATE sessions SET version = ?2, updated_at = ?3 WHERE id = ?1")
        .map_err(db)?
        .execute(params![session, version as i64, now_millis()])
        .map_err(db)?;
    Ok(version)
}

#[async_trait::async_trait]
impl SessionStore for SqliteStore {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        check_id("session id", session)?;
        let session = session.to_owned();
        self.with(move |conn| {
            let now = now_millis();
            let inserted = conn
                .prepare_cached(
                    "INSERT INTO sessions (id, version, created_at, updated_at)
                     VALUES (?1, 0, ?2, ?2) ON CONFLICT (id) DO NOTHING",
                )
                .map_err(db)?
                .execute(params![session, now])
                .map_err(db)?;
            if inserted == 0 {
                return Err(StoreError::AlreadyExists { session });
            }
            Ok(SessionInfo::from_millis(session, 0, now, now))
        })
        .await
    }

    async fn load(&self, session: &str) -> Result<Option<StoredSession>, StoreError> {
        let session = session.to_owned();
        self.with(move |conn| {
            // One read transaction: the version and the messages agree.
            let tx = conn.transaction().map_err(db)?;
            let Some(info) = session_info(&tx, &session)? else {
                return Ok(None);
            };
            let mut messages = Vec::with_capacity(info.version as usize);
            {
                let mut stmt = tx
                    .prepare_cached(
                        "SELECT seq, body FROM messages WHERE session_id = ?1 ORDER BY seq",
                    )
                    .map_err(db)?;
                let mut rows = stmt.query([&session]).map_err(db)?;
                while let Some(row) = rows.next().map_err(db)? {
                    let seq: i64 = row.get(0).map_err(db)?;
                    let body = row
                        .get_ref(1)
                        .map_err(db)?
                        .as_str()
                        .map_err(|e| db(e.into()))?;
                    messages.push(decode_message(&session, seq, body)?);
                }
            }
            tx.commit().map_err(db)?;
            Ok(Some(StoredSession { info, messages }))
        })
        .await
    }

    async fn append(
        &self,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        let session = session.to_owned();
        let bodies: Vec<String> = messages.iter().map(encode_message).collect();
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let version = append_in(&tx, session, expected_version, &bodies)?;
            tx.commit().map_err(db)?;
            Ok(version)
        })
        .await
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError> {
        self.with(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT id, version, created_at, updated_at FROM sessions
                     ORDER BY updated_at DESC, id",
                )
                .map_err(db)?;
            let rows = stmt
                .query_map([], |r| {
                    Ok(SessionInfo::from_millis(
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                    ))
                })
                .map_err(db)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(db)
        })
        .await
    }

    async fn delete(&self, session: &str) -> Result<bool, StoreError> {
        let session = session.to_owned();
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            tx.execute("DELETE FROM messages WHERE session_id = ?1", [&session])
                .map_err(db)?;
            tx.execute("DELETE FROM paused_runs WHERE session_id = ?1", [&session])
                .map_err(db)?;
            tx.execute("DELETE FROM leases WHERE session_id = ?1", [&session])
                .map_err(db)?;
            journal::delete_session_runs(&tx, &session)?;
            let n = tx
                .execute("DELETE FROM sessions WHERE id = ?1", [&session])
                .map_err(db)?;
            tx.commit().map_err(db)?;
            Ok(n > 0)
        })
        .await
    }

    async fn save_run(&self, id: &str, run: &PausedRun) -> Result<(), StoreError> {
        check_id("run id", id)?;
        let (state, context) = encode_run(run)?;
        let (id, session) = (id.to_owned(), run.session.clone());
        self.with(move |conn| {
            conn.execute(
                "INSERT INTO paused_runs (id, session_id, state, context, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id,
                   state = excluded.state, context = excluded.context",
                params![id, session, state, context, now_millis()],
            )
            .map_err(db)?;
            Ok(())
        })
        .await
    }

    async fn load_run(&self, id: &str) -> Result<Option<PausedRun>, StoreError> {
        let id = id.to_owned();
        self.with(move |conn| {
            let row: Option<(Option<String>, String, String)> = conn
                .query_row(
                    "SELECT session_id, state, context FROM paused_runs WHERE id = ?1",
                    [&id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()
                .map_err(db)?;
            row.map(|(session, state, context)| decode_run(&id, &state, session, &context))
                .transpose()
        })
        .await
    }

    async fn delete_run(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.with(move |conn| {
            let n = conn
                .execute("DELETE FROM paused_runs WHERE id = ?1", [&id])
                .map_err(db)?;
            Ok(n > 0)
        })
        .await
    }

    async fn acquire_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<LeaseState, StoreError> {
        check_id("session id", session)?;
        let (session, holder) = (session.to_owned(), holder.to_owned());
        self.with(move |conn| lease::acquire(conn, &session, &holder, ttl))
            .await
    }

    async fn renew_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let (session, holder) = (session.to_owned(), holder.to_owned());
        self.with(move |conn| lease::renew(conn, &session, &holder, ttl))
            .await
    }

    async fn release_lease(&self, session: &str, holder: &str) -> Result<(), StoreError> {
        let (session, holder) = (session.to_owned(), holder.to_owned());
        self.with(move |conn| lease::release(conn, &session, &holder))
            .await
    }

    async fn count_in_window(
        &self,
        key: &str,
        window: Duration,
        amount: u64,
        limit: u64,
    ) -> Result<Option<WindowCount>, StoreError> {
        let key = key.to_owned();
        self.with(move |conn| window::count(conn, &key, window, amount, limit))
            .await
            .map(Some)
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
        let (task, owner, state) = (task.to_owned(), owner.map(str::to_owned), state.to_string());
        self.with(move |conn| {
            shared_task::write(conn, &task, owner.as_deref(), &state, ended, keep)
        })
        .await
    }

    async fn task_read(&self, task: &str) -> Result<Option<SharedTask>, StoreError> {
        let task = task.to_owned();
        self.with(move |conn| shared_task::read(conn, &task)).await
    }

    async fn task_request(&self, task: &str, request: &TaskRequest) -> Result<bool, StoreError> {
        let (task, request) = (task.to_owned(), request.clone());
        self.with(move |conn| shared_task::request(conn, &task, &request))
            .await
    }

    async fn task_take_requests(&self, task: &str) -> Result<TaskRequests, StoreError> {
        let task = task.to_owned();
        self.with(move |conn| shared_task::take(conn, &task)).await
    }

    async fn journal_begin(&self, start: &JournalStart) -> Result<(), StoreError> {
        check_id("run id", &start.run)?;
        let start = start.clone();
        self.with(move |conn| journal::begin(conn, &start)).await
    }

    async fn journal_step(
        &self,
        run: &str,
        seq: u64,
        step: &JournalStep,
    ) -> Result<(), StoreError> {
        let body = encode_step(step)?;
        let run = run.to_owned();
        self.with(move |conn| journal::step(conn, &run, seq, &body))
            .await
    }

    async fn journal_complete(
        &self,
        run: &str,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        let bodies: Vec<String> = messages.iter().map(encode_message).collect();
        let (run, session) = (run.to_owned(), session.to_owned());
        self.with(move |conn| journal::complete(conn, &run, session, expected_version, &bodies))
            .await
    }

    async fn journal_interrupt(&self, run: &str) -> Result<(), StoreError> {
        let run = run.to_owned();
        self.with(move |conn| journal::interrupt(conn, &run)).await
    }

    async fn journal_delete(&self, run: &str) -> Result<bool, StoreError> {
        let run = run.to_owned();
        self.with(move |conn| journal::delete(conn, &run)).await
    }

    async fn journal_load(&self, run: &str) -> Result<Option<JournaledRun>, StoreError> {
        let run = run.to_owned();
        self.with(move |conn| journal::load(conn, &run)).await
    }

    async fn journal_list(&self, session: Option<&str>) -> Result<Vec<RunSummary>, StoreError> {
        let session = session.map(str::to_owned);
        self.with(move |conn| journal::list(conn, session.as_deref()))
            .await
    }
}
