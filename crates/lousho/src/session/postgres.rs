//! The PostgreSQL store: for replicas of a served agent sharing one database.

use super::journal::encode_step;
use super::store::{check_id, decode_message, decode_run, encode_message, encode_run, now_millis};
use super::{
    JournalStart, JournalStep, JournaledRun, LeaseState, PausedRun, RunSummary, SessionInfo,
    SessionStore, SharedTask, StoreError, StoredSession, TaskRequest, TaskRequests, WindowCount,
};
use crate::model::Message;
use deadpool_postgres::{
    ClientWrapper, Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod,
};
use std::time::Duration;
use tokio_postgres::{Client, IsolationLevel, Statement, Transaction};

mod journal;
mod lease;
mod shared_task;
mod tls;
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
/// A pool of connections, opened as calls need them (up to
/// [`DEFAULT_POSTGRES_POOL`], or the pool size given to
/// [`connect_pooled`](PostgresStore::connect_pooled)), so concurrent runs do not
/// take turns on one connection; a lost connection is replaced on the next
/// call. Each connection prepares the statements of the frequent calls once.
/// Plain TCP or a Unix socket, or TLS (rustls) when the connection string
/// asks with `sslmode` (`prefer`, `require`, `verify-ca`, `verify-full`:
/// the server's certificate is always verified, against the system's
/// authorities or those of `sslrootcert=FILE`).
pub struct PostgresStore {
    pool: Pool,
}

/// How many connections a [`PostgresStore`] opens at most (its pool size),
/// unless told otherwise ([`PostgresStore::connect_pooled`]): enough for the runs of a
/// replica to commit their steps side by side, few enough that a handful of
/// replicas stay well under PostgreSQL's default `max_connections` (100).
pub const DEFAULT_POSTGRES_POOL: usize = 8;

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PostgresStore")
            .field("pool_size", &status.max_size)
            .field("open", &status.size)
            .finish_non_exhaustive()
    }
}

fn db(e: tokio_postgres::Error) -> StoreError {
    StoreError::backend(BACKEND, e)
}

fn pooled(e: PoolError) -> StoreError {
    match e {
        // Connecting: a refused certificate says what to do about it.
        PoolError::Backend(e) => tls::explain(e),
        other => StoreError::backend(BACKEND, other),
    }
}

impl PostgresStore {
    /// Connects to the database named by `conn` (a `postgres://` URL or
    /// libpq `key=value` pairs) and brings its schema up to date; opens up
    /// to [`DEFAULT_POSTGRES_POOL`] connections as calls need them.
    pub async fn connect(conn: &str) -> Result<Self, StoreError> {
        Self::connect_pooled(conn, DEFAULT_POSTGRES_POOL).await
    }

    /// [`connect`](Self::connect), opening at most `pool_size` connections
    /// (at least one).
    pub async fn connect_pooled(conn: &str, pool_size: usize) -> Result<Self, StoreError> {
        let (config, tls) = tls::parse(conn)?;
        let manager = Manager::from_config(
            config,
            tls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .build()
            .map_err(|e| StoreError::backend(BACKEND, e))?;
        let store = Self { pool };
        let mut client = store.client().await?;
        migrate(&mut client).await?;
        drop(client);
        Ok(store)
    }

    /// A connection of the pool: a free one, a new one while there are
    /// fewer than the maximum, else the first one given back.
    async fn client(&self) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(pooled)
    }
}

/// The statements of an append (a run's end or [`SessionStore::append`]),
/// prepared once per connection.
struct AppendStatements {
    load_session: Statement,
    bump_version: Statement,
    insert_messages: Statement,
}

const LOAD_SESSION: &str =
    "SELECT version, created_at, updated_at FROM lousho_sessions WHERE id = $1";

impl AppendStatements {
    async fn prepare(client: &ClientWrapper) -> Result<Self, StoreError> {
        Ok(Self {
            load_session: client.prepare_cached(LOAD_SESSION).await.map_err(db)?,
            bump_version: client
                .prepare_cached(
                    "UPDATE lousho_sessions SET version = $2, updated_at = $3
                     WHERE id = $1 AND version = $4",
                )
                .await
                .map_err(db)?,
            insert_messages: client
                .prepare_cached(
                    "INSERT INTO lousho_messages (session_id, seq, body)
                     SELECT $1, s, b FROM unnest($2::bigint[], $3::text[]) AS m(s, b)",
                )
                .await
                .map_err(db)?,
        })
    }
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
    statements: &AppendStatements,
    session: &str,
    expected_version: u64,
    bodies: &[String],
) -> Result<u64, StoreError> {
    let expected = expected_version as i64;
    let version = expected + bodies.len() as i64;
    let seqs: Vec<i64> = (expected..version).collect();
    let n = tx
        .execute(
            &statements.bump_version,
            &[&session, &version, &now_millis(), &expected],
        )
        .await
        .map_err(db)?;
    if n == 0 {
        let found = tx
            .query_opt(&statements.load_session, &[&session])
            .await
            .map_err(db)?;
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
        tx.execute(&statements.insert_messages, &[&session, &seqs, &bodies])
            .await
            .map_err(db)?;
    }
    Ok(version as u64)
}

#[async_trait::async_trait]
impl SessionStore for PostgresStore {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        check_id("session id", session)?;
        let conn = self.client().await?;
        let now = now_millis();
        let n = conn
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
        let mut conn = self.client().await?;
        // One snapshot: the version and the messages agree.
        let load_session = conn.prepare_cached(LOAD_SESSION).await.map_err(db)?;
        let load_messages = conn
            .prepare_cached(
                "SELECT seq, body FROM lousho_messages WHERE session_id = $1 ORDER BY seq",
            )
            .await
            .map_err(db)?;
        let tx = conn
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(db)?;
        let Some(row) = tx.query_opt(&load_session, &[&session]).await.map_err(db)? else {
            return Ok(None);
        };
        let info = SessionInfo::from_millis(session.to_owned(), row.get(0), row.get(1), row.get(2));
        let rows = tx.query(&load_messages, &[&session]).await.map_err(db)?;
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
        let mut conn = self.client().await?;
        let statements = AppendStatements::prepare(&conn).await?;
        let tx = conn.transaction().await.map_err(db)?;
        let version = append_in(&tx, &statements, session, expected_version, &bodies).await?;
        tx.commit().await.map_err(db)?;
        Ok(version)
    }

    async fn list(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let conn = self.client().await?;
        let rows = conn
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
        let mut conn = self.client().await?;
        let tx = conn.transaction().await.map_err(db)?;
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
        let conn = self.client().await?;
        conn.execute(
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
        let conn = self.client().await?;
        let row = conn
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
        let conn = self.client().await?;
        let n = conn
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
        let conn = self.client().await?;
        lease::acquire(&conn, session, holder, ttl).await
    }

    async fn renew_lease(
        &self,
        session: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let conn = self.client().await?;
        lease::renew(&conn, session, holder, ttl).await
    }

    async fn release_lease(&self, session: &str, holder: &str) -> Result<(), StoreError> {
        let conn = self.client().await?;
        lease::release(&conn, session, holder).await
    }

    async fn count_in_window(
        &self,
        key: &str,
        window: Duration,
        amount: u64,
        limit: u64,
    ) -> Result<Option<WindowCount>, StoreError> {
        let conn = self.client().await?;
        window::count(&conn, key, window, amount, limit)
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
        let conn = self.client().await?;
        shared_task::write(&conn, task, owner, &state, ended, keep).await
    }

    async fn task_read(&self, task: &str) -> Result<Option<SharedTask>, StoreError> {
        let conn = self.client().await?;
        shared_task::read(&conn, task).await
    }

    async fn task_request(&self, task: &str, request: &TaskRequest) -> Result<bool, StoreError> {
        let conn = self.client().await?;
        shared_task::request(&conn, task, request).await
    }

    async fn task_take_requests(&self, task: &str) -> Result<TaskRequests, StoreError> {
        let conn = self.client().await?;
        shared_task::take(&conn, task).await
    }

    async fn task_take_requests_of(
        &self,
        tasks: &[String],
    ) -> Result<Vec<(String, TaskRequests)>, StoreError> {
        if tasks.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.client().await?;
        shared_task::take_of(&conn, tasks).await
    }

    async fn journal_begin(&self, start: &JournalStart) -> Result<(), StoreError> {
        check_id("run id", &start.run)?;
        let conn = self.client().await?;
        journal::begin(&conn, start).await
    }

    async fn journal_step(
        &self,
        run: &str,
        seq: u64,
        step: &JournalStep,
    ) -> Result<(), StoreError> {
        let body = encode_step(step)?;
        let mut conn = self.client().await?;
        journal::step(&mut conn, run, seq, &body).await
    }

    async fn journal_complete(
        &self,
        run: &str,
        session: &str,
        expected_version: u64,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        let bodies: Vec<String> = messages.iter().map(encode_message).collect();
        let mut conn = self.client().await?;
        journal::complete(&mut conn, run, session, expected_version, &bodies).await
    }

    async fn journal_interrupt(&self, run: &str) -> Result<(), StoreError> {
        let conn = self.client().await?;
        journal::interrupt(&conn, run).await
    }

    async fn journal_delete(&self, run: &str) -> Result<bool, StoreError> {
        let mut conn = self.client().await?;
        journal::delete(&mut conn, run).await
    }

    async fn journal_load(&self, run: &str) -> Result<Option<JournaledRun>, StoreError> {
        let mut conn = self.client().await?;
        journal::load(&mut conn, run).await
    }

    async fn journal_list(&self, session: Option<&str>) -> Result<Vec<RunSummary>, StoreError> {
        let conn = self.client().await?;
        journal::list(&conn, session).await
    }
}
