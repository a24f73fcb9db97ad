//! The PostgreSQL store: for replicas of a served agent sharing one database.

use super::journal::encode_step;
use super::store::{check_id, decode_message, decode_run, encode_message, encode_run, now_millis};
use super::{
    JournalStart, JournalStep, JournaledRun, LeaseState, PausedRun, RunSummary, SessionInfo,
    SessionStore, SharedTask, StoreError, StoredSession, TaskRequest, TaskRequests, WindowCount,
};
use crate::model::Message;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio_postgres::{Client, Config, IsolationLevel, NoTls, Statement, Transaction};

mod journal;
mod lease;
mod shared_task;
mod window;

const BACKEND: &str = "postgres";

/// Serialises migrations of concurrent openers (`pg_advisory_xact_lock` key).
const MIGRATION_LOCK: i64 = 0x6c6f_7573_686f; // "lousho"

/// The schema, one step per version (`lousho_schema.version` is the number
/// of steps applied). Append steps; never edit one that shipped.
const MIGRATIONS: &[&str] = &[
    // 1: sessions, their messages, paused runs.
    "CREATE TABLE lousho_sessions (
        id TEXT PRIMARY KEY,
        version BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE TABLE lousho_messages (
        session_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE lousho_paused_runs (
        id TEXT PRIMARY KEY,
        session_id TEXT,
        state TEXT NOT NULL,
        context TEXT NOT NULL,
        created_at BIGINT NOT NULL
    );
    CREATE INDEX lousho_paused_runs_by_session ON lousho_paused_runs (session_id);",
    // 2: run leases (one run at a time per session).
    "CREATE TABLE lousho_leases (
        session_id TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        heartbeat_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
    );",
    // 3: the step journal of runs (resumable after a crash).
    "CREATE TABLE lousho_runs (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        holder TEXT NOT NULL,
        status TEXT NOT NULL,
        base_version BIGINT NOT NULL,
        input TEXT NOT NULL,
        context TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE INDEX lousho_runs_by_session ON lousho_runs (session_id);
    CREATE TABLE lousho_run_steps (
        run_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );",
    // 4: counters of per-caller limits (runs a minute, tokens a day).
    "CREATE TABLE lousho_limit_windows (
        key TEXT PRIMARY KEY,
        window_start BIGINT NOT NULL,
        count BIGINT NOT NULL
    );",
    // 5: served tasks, shared by replicas on one database.
    "CREATE TABLE lousho_tasks (
        id TEXT PRIMARY KEY,
        owner TEXT,
        state TEXT NOT NULL,
        ended BOOLEAN NOT NULL,
        written_at BIGINT NOT NULL,
        keep_until BIGINT NOT NULL,
        cancel BOOLEAN NOT NULL DEFAULT false,
        answers TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX lousho_tasks_by_keep ON lousho_tasks (keep_until);",
];

/// A [`SessionStore`] in PostgreSQL (feature `postgres`): several processes
/// (replicas of a served agent) share one database. Tables are prefixed
/// `lousho_`.
///
/// One connection, opened by [`connect`](PostgresStore::connect) and opened
/// again on the next call if it was lost; calls on one store take turns.
/// Plain TCP or a Unix socket (no TLS: use a local socket, a private
/// network or a TLS-terminating proxy).
#[derive(Debug)]
pub struct PostgresStore {
    config: Config,
    conn: Mutex<Option<Conn>>,
}

#[derive(Debug)]
struct Conn {
    client: Client,
    load_session: Statement,
    load_messages: Statement,
    bump_version: Statement,
    insert_messages: Statement,
    insert_step: Statement,
    touch_run: Statement,
}

fn db(e: tokio_postgres::Error) -> StoreError {
    StoreError::backend(BACKEND, e)
}

impl PostgresStore {
    /// Connects to the database named by `conn` (a `postgres://` URL or
    /// libpq `key=value` pairs) and brings its schema up to date.
    pub async fn connect(conn: &str) -> Result<Self, StoreError> {
        let config: Config = conn.parse().map_err(db)?;
        let opened = open(&config).await?;
        Ok(Self {
            config,
            conn: Mutex::new(Some(opened)),
        })
    }

    /// The connection, opened again if it was lost.
    async fn conn(&self) -> Result<tokio::sync::MutexGuard<'_, Option<Conn>>, StoreError> {
        let mut guard = self.conn.lock().await;
        if guard.as_ref().is_none_or(|c| c.client.is_closed()) {
            *guard = None;
            *guard = Some(open(&self.config).await?);
        }
        Ok(guard)
    }
}

async fn open(config: &Config) -> Result<Conn, StoreError> {
    let (mut client, connection) = config.connect(NoTls).await.map_err(db)?;
    // The connection task ends when the client is dropped.
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(target: "lousho::session", error = %e, "PostgreSQL connection closed");
        }
    });
    migrate(&mut client).await?;
    Ok(Conn {
        load_session: client
            .prepare("SELECT version, created_at, updated_at FROM lousho_sessions WHERE id = $1")
            .await
            .map_err(db)?,
        load_messages: client
            .prepare("SELECT seq, body FROM lousho_messages WHERE session_id = $1 ORDER BY seq")
            .await
            .map_err(db)?,
        bump_version: client
            .prepare(
                "UPDATE lousho_sessions SET version = $2, updated_at = $3
                 WHERE id = $1 AND version = $4",
            )
            .await
            .map_err(db)?,
        insert_messages: client
            .prepare(
                "INSERT INTO lousho_messages (session_id, seq, body)
                 SELECT $1, s, b FROM unnest($2::bigint[], $3::text[]) AS m(s, b)",
            )
            .await
            .map_err(db)?,
        insert_step: client
            .prepare("INSERT INTO lousho_run_steps (run_id, seq, body) VALUES ($1, $2, $3)")
            .await
            .map_err(db)?,
        touch_run: client
            .prepare("UPDATE lousho_runs SET updated_at = $2 WHERE id = $1")
            .await
            .map_err(db)?,
        client,
    })
}

/// Applies the missing migrations in one transaction, under an advisory
/// lock so concurrent openers apply them once.
async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let supported = MIGRATIONS.len() as i64;
    let tx = client.transaction().await.map_err(db)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(db)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS lousho_schema (version BIGINT NOT NULL)")
        .await
        .map_err(db)?;
    let found: i64 = match tx
        .query_opt("SELECT version FROM lousho_schema", &[])
        .await
        .map_err(db)?
    {
        Some(row) => row.get(0),
        None => {
            tx.execute("INSERT INTO lousho_schema (version) VALUES (0)", &[])
                .await
                .map_err(db)?;
            0
        }
    };
    if found > supported {
        return Err(StoreError::SchemaTooNew { found, supported });
    }
    for (i, step) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.batch_execute(step).await.map_err(db)?;
        tx.execute("UPDATE lousho_schema SET version = $1", &[&(i as i64 + 1)])
            .await
            .map_err(db)?;
    }
    tx.commit().await.map_err(db)
}

/// Appends `bodies` inside `tx` if the session is at `expected`; the new
/// version. The row lock of the version bump orders concurrent appends; the
/// loser sees the new version and changes nothing.
async fn append_in(
    tx: &Transaction<'_>,
    load_session: &Statement,
    bump_version: &Statement,
    insert_messages: &Statement,
    session: &str,
    expected_version: u64,
    bodies: &[String],
) -> Result<u64, StoreError> {
    let expected = expected_version as i64;
    let version = expected + bodies.len() as i64;
    let seqs: Vec<i64> = (expected..version).collect();
    let n = tx
        .execute(
            bump_version,
            &[&session, &version, &now_millis(), &expected],
        )
        .await
        .map_err(db)?;
    if n == 0 {
        let found = tx.query_opt(load_session, &[&session]).await.map_err(db)?;
        return Err(match found {
            None => StoreError::NotFound {
                session: session.to_owned(),
            },
            Some(row) => StoreError::Conflict {
                session: session.to_owned(),
                expected: expected_version,
                found: u64::try_from(row.get::<_, i64>(0)).unwrap_or(0),
            },
        });
    }
    if !bodies.is_empty() {
        tx.execute(insert_messages, &[&session, &seqs, &bodies])
            .await
            .map_err(db)?;
    }
    Ok(version as u64)
}

#[async_trait::async_trait]
impl SessionStore for PostgresStore {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        check_id("session id", session)?;
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        let now = now_millis();
        let n = conn
            .client
            .execute(
                "INSERT INTO lousho_sessions (id, version, created_at, updated_at)
                 VALUES ($1, 0, $2, $2) ON CONFLICT (id) DO NOTHING",
                &[&session, &now],
            )
            .await
            .map_err(db)?;
        if n == 0 {
            return Err(StoreError::AlreadyExists {
                session: session.to_owned(),
            });
        }
        Ok(SessionInfo::from_millis(session.to_owned(), 0, now, now))
    }

    async fn load(&self, session: &str) -> Result<Option<StoredSession>, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        // One snapshot: the version and the messages agree.
        let tx = conn
            .client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(db)?;
        let Some(row) = tx
            .query_opt(&conn.load_session, &[&session])
            .await
            .map_err(db)?
        else {
            return Ok(None);
        };
        let info = SessionInfo::from_millis(session.to_owned(), row.get(0), row.get(1), row.get(2));
        let rows = tx
            .query(&conn.load_messages, &[&session])
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        let messages = rows
            .iter()
            .map(|r| decode_message(session, r.get(0), r.get(1)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(StoredSession { info, messages }))
    }

    async fn append(
        &self,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        let bodies: Vec<String> = messages.iter().map(encode_message).collect();
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        let tx = conn.client.transaction().await.map_err(db)?;
        let version = append_in(
            &tx,
            &conn.load_session,
            &conn.bump_version,
            &conn.insert_messages,
            session,
            expected_version,
            &bodies,
        )
        .await?;
        tx.commit().await.map_err(db)?;
        Ok(version)
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        let rows = conn
            .client
            .query(
                "SELECT id, version, created_at, updated_at FROM lousho_sessions
                 ORDER BY updated_at DESC, id",
                &[],
            )
            .await
            .map_err(db)?;
        Ok(rows
            .iter()
            .map(|r| SessionInfo::from_millis(r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect())
    }

    async fn delete(&self, session: &str) -> Result<bool, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        let tx = conn.client.transaction().await.map_err(db)?;
        tx.execute(
            "DELETE FROM lousho_messages WHERE session_id = $1",
            &[&session],
        )
        .await
        .map_err(db)?;
        tx.execute(
            "DELETE FROM lousho_paused_runs WHERE session_id = $1",
            &[&session],
        )
        .await
        .map_err(db)?;
        tx.execute(
            "DELETE FROM lousho_leases WHERE session_id = $1",
            &[&session],
        )
        .await
        .map_err(db)?;
        journal::delete_session_runs(&tx, session).await?;
        let n = tx
            .execute("DELETE FROM lousho_sessions WHERE id = $1", &[&session])
            .await
            .map_err(db)?;
        tx.commit().await.map_err(db)?;
        Ok(n > 0)
    }

    async fn save_run(&self, id: &str, run: &PausedRun) -> Result<(), StoreError> {
        check_id("run id", id)?;
        let (state, context) = encode_run(run)?;
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        conn.client
            .execute(
                "INSERT INTO lousho_paused_runs (id, session_id, state, context, created_at)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id,
                   state = excluded.state, context = excluded.context",
                &[&id, &run.session, &state, &context, &now_millis()],
            )
            .await
            .map_err(db)?;
        Ok(())
    }

    async fn load_run(&self, id: &str) -> Result<Option<PausedRun>, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        let row = conn
            .client
            .query_opt(
                "SELECT session_id, state, context FROM lousho_paused_runs WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(db)?;
        row.map(|r| decode_run(id, r.get(1), r.get(0), r.get(2)))
            .transpose()
    }

    async fn delete_run(&self, id: &str) -> Result<bool, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        let n = conn
            .client
            .execute("DELETE FROM lousho_paused_runs WHERE id = $1", &[&id])
            .await
            .map_err(db)?;
        Ok(n > 0)
    }

    async fn acquire_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<LeaseState, StoreError> {
        check_id("session id", session)?;
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        lease::acquire(&conn.client, session, holder, ttl).await
    }

    async fn renew_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        lease::renew(&conn.client, session, holder, ttl).await
    }

    async fn release_lease(&self, session: &str, holder: &str) -> Result<(), StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        lease::release(&conn.client, session, holder).await
    }

    async fn count_in_window(
        &self,
        key: &str,
        window: Duration,
        amount: u64,
        limit: u64,
    ) -> Result<Option<WindowCount>, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        window::count(&conn.client, key, window, amount, limit)
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
        let state = state.to_string();
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        shared_task::write(&conn.client, task, owner, &state, ended, keep).await
    }

    async fn task_read(&self, task: &str) -> Result<Option<SharedTask>, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        shared_task::read(&conn.client, task).await
    }

    async fn task_request(&self, task: &str, request: &TaskRequest) -> Result<bool, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        shared_task::request(&conn.client, task, request).await
    }

    async fn task_take_requests(&self, task: &str) -> Result<TaskRequests, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        shared_task::take(&conn.client, task).await
    }

    async fn journal_begin(&self, start: &JournalStart) -> Result<(), StoreError> {
        check_id("run id", &start.run)?;
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        journal::begin(&conn.client, start).await
    }

    async fn journal_step(
        &self,
        run: &str,
        seq: u64,
        step: &JournalStep,
    ) -> Result<(), StoreError> {
        let body = encode_step(step)?;
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        journal::step(conn, run, seq, &body).await
    }

    async fn journal_complete(
        &self,
        run: &str,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        let bodies: Vec<String> = messages.iter().map(encode_message).collect();
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        journal::complete(conn, run, session, expected_version, &bodies).await
    }

    async fn journal_interrupt(&self, run: &str) -> Result<(), StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        journal::interrupt(&conn.client, run).await
    }

    async fn journal_delete(&self, run: &str) -> Result<bool, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        journal::delete(&mut conn.client, run).await
    }

    async fn journal_load(&self, run: &str) -> Result<Option<JournaledRun>, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        journal::load(&mut conn.client, run).await
    }

    async fn journal_list(&self, session: Option<&str>) -> Result<Vec<RunSummary>, StoreError> {
        let mut guard = self.conn().await?;
        let conn = guard.as_mut().ok_or_else(not_open)?;
        journal::list(&conn.client, session).await
    }
}

fn not_open() -> StoreError {
    StoreError::Backend {
        backend: BACKEND,
        source: "the connection is not open".into(),
    }
}
