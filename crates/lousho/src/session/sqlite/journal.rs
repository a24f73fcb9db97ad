//! The step journal in SQLite (`runs`, `run_steps`).

use super::{append_in, db};
use crate::session::StoreError;
use crate::session::journal::{JournalStart, JournalStatus, JournaledRun, RunSummary, decode_step};
use crate::session::journal::{decode_input, encode_input};
use crate::session::store::{from_unix_millis, now_millis};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// Starts a run's journal, or hands an existing one to a new holder.
pub(super) fn begin(conn: &Connection, start: &JournalStart) -> Result<(), StoreError> {
    let input = encode_input(&start.input);
    let context = serde_json::to_string(&start.context).unwrap_or_else(|_| "null".into());
    let now = now_millis();
    conn.prepare_cached(
        "INSERT INTO runs (id, session_id, holder, status, base_version, input, context, created_at, updated_at)
         VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?7)
         ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, status = 'running',
           base_version = excluded.base_version, updated_at = excluded.updated_at",
    )
    .map_err(db)?
    .execute(params![
        start.run,
        start.session,
        start.holder,
        start.base_version as i64,
        input,
        context,
        now
    ])
    .map_err(db)?;
    Ok(())
}

/// Commits one step (one transaction).
pub(super) fn step(
    conn: &mut Connection,
    run: &str,
    seq: u64,
    body: &str,
) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    tx.prepare_cached("INSERT INTO run_steps (run_id, seq, body) VALUES (?1, ?2, ?3)")
        .map_err(db)?
        .execute(params![run, seq as i64, body])
        .map_err(db)?;
    tx.prepare_cached("UPDATE runs SET updated_at = ?2 WHERE id = ?1")
        .map_err(db)?
        .execute(params![run, now_millis()])
        .map_err(db)?;
    tx.commit().map_err(db)
}

/// Appends the completed run's messages and removes its journal, in one
/// transaction.
pub(super) fn complete(
    conn: &mut Connection,
    run: &str,
    session: String,
    expected: u64,
    bodies: &[String],
) -> Result<u64, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let version = append_in(&tx, session, expected, bodies)?;
    delete_in(&tx, run)?;
    tx.commit().map_err(db)?;
    Ok(version)
}

/// Sets a run's status.
pub(super) fn interrupt(conn: &Connection, run: &str) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE runs SET status = 'interrupted' WHERE id = ?1")
        .map_err(db)?
        .execute([run])
        .map_err(db)?;
    Ok(())
}

pub(super) fn delete(conn: &mut Connection, run: &str) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let n = delete_in(&tx, run)?;
    tx.commit().map_err(db)?;
    Ok(n)
}

fn delete_in(conn: &Connection, run: &str) -> Result<bool, StoreError> {
    conn.prepare_cached("DELETE FROM run_steps WHERE run_id = ?1")
        .map_err(db)?
        .execute([run])
        .map_err(db)?;
    let n = conn
        .prepare_cached("DELETE FROM runs WHERE id = ?1")
        .map_err(db)?
        .execute([run])
        .map_err(db)?;
    Ok(n > 0)
}

/// Deletes every run of a session (inside the session's delete).
pub(super) fn delete_session_runs(conn: &Connection, session: &str) -> Result<(), StoreError> {
    conn.execute(
        "DELETE FROM run_steps WHERE run_id IN (SELECT id FROM runs WHERE session_id = ?1)",
        [session],
    )
    .map_err(db)?;
    conn.execute("DELETE FROM runs WHERE session_id = ?1", [session])
        .map_err(db)?;
    Ok(())
}

/// The status as users see it: a `running` run whose holder's lease has
/// run out (or is gone) is interrupted. `now` is the SQL parameter with the
/// time.
fn status_sql(now: &str) -> String {
    format!(
        "CASE WHEN r.status = 'running' AND EXISTS (
            SELECT 1 FROM leases l WHERE l.session_id = r.session_id AND l.holder = r.holder
              AND l.expires_at > {now}) THEN 'running' ELSE 'interrupted' END"
    )
}

fn status(text: &str) -> JournalStatus {
    if text == "running" {
        JournalStatus::Running
    } else {
        JournalStatus::Interrupted
    }
}

/// A run's journal, its steps in order.
pub(super) fn load(conn: &mut Connection, run: &str) -> Result<Option<JournaledRun>, StoreError> {
    let tx = conn.transaction().map_err(db)?;
    type Row = (String, String, i64, String, String, i64);
    let row: Option<Row> = tx
        .prepare_cached(&format!(
            "SELECT r.session_id, {}, r.base_version, r.input, r.context, r.updated_at
             FROM runs r WHERE r.id = ?1",
            status_sql("?2")
        ))
        .map_err(db)?
        .query_row(params![run, now_millis()], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .optional()
        .map_err(db)?;
    let Some((session, state, base, input, context, updated)) = row else {
        return Ok(None);
    };
    let mut steps = Vec::new();
    {
        let mut stmt = tx
            .prepare_cached("SELECT seq, body FROM run_steps WHERE run_id = ?1 ORDER BY seq")
            .map_err(db)?;
        let mut rows = stmt.query([run]).map_err(db)?;
        while let Some(row) = rows.next().map_err(db)? {
            let seq: i64 = row.get(0).map_err(db)?;
            let body: String = row.get(1).map_err(db)?;
            steps.push(decode_step(run, seq, &body)?);
        }
    }
    tx.commit().map_err(db)?;
    Ok(Some(JournaledRun {
        id: run.to_owned(),
        input: decode_input(run, &input)?,
        context: serde_json::from_str(&context).unwrap_or_default(),
        session,
        status: status(&state),
        base_version: u64::try_from(base).unwrap_or(0),
        steps,
        updated_at: from_unix_millis(updated),
    }))
}

/// The journaled runs (of one session, or all), most recently updated first.
pub(super) fn list(
    conn: &Connection,
    session: Option<&str>,
) -> Result<Vec<RunSummary>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT r.id, r.session_id, {},
               (SELECT count(*) FROM run_steps s WHERE s.run_id = r.id), r.updated_at
             FROM runs r WHERE ?1 IS NULL OR r.session_id = ?1
             ORDER BY r.updated_at DESC, r.id",
            status_sql("?2")
        ))
        .map_err(db)?;
    let rows = stmt
        .query_map(params![session, now_millis()], |r| {
            let state: String = r.get(2)?;
            let steps: i64 = r.get(3)?;
            Ok(RunSummary {
                id: r.get(0)?,
                session: r.get(1)?,
                status: status(&state),
                steps: u64::try_from(steps).unwrap_or(0),
                updated_at: from_unix_millis(r.get(4)?),
            })
        })
        .map_err(db)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(db)
}
