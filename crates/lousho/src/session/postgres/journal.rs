//! The step journal in PostgreSQL (`lousho_runs`, `lousho_run_steps`).

use super::lease::NOW_MS;
use super::{AppendStatements, append_in, db};
use crate::session::StoreError;
use crate::session::journal::{
    JournalStart, JournalStatus, JournaledRun, RunSummary, decode_input, decode_step, encode_input,
};
use crate::session::store::{from_unix_millis, now_millis};
use deadpool_postgres::Object;
use tokio_postgres::Client;

/// Starts a run's journal, or hands an existing one to a new holder.
pub(super) async fn begin(client: &Client, start: &JournalStart) -> Result<(), StoreError> {
    let input = encode_input(&start.input);
    let context = serde_json::to_string(&start.context).unwrap_or_else(|_| "null".into());
    client
        .execute(
            "INSERT INTO lousho_runs (id, session_id, holder, status, base_version, input, context,
               created_at, updated_at)
             VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $7)
             ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, status = 'running',
               base_version = excluded.base_version, updated_at = excluded.updated_at",
            &[
                &start.run,
                &start.session,
                &start.holder,
                &(start.base_version as i64),
                &input,
                &context,
                &now_millis(),
            ],
        )
        .await
        .map_err(db)?;
    Ok(())
}

/// Commits one step (one transaction: the step and the run's time).
pub(super) async fn step(
    conn: &mut Object,
    run: &str,
    seq: u64,
    body: &str,
) -> Result<(), StoreError> {
    let insert_step = conn
        .prepare_cached("INSERT INTO lousho_run_steps (run_id, seq, body) VALUES ($1, $2, $3)")
        .await
        .map_err(db)?;
    let touch_run = conn
        .prepare_cached("UPDATE lousho_runs SET updated_at = $2 WHERE id = $1")
        .await
        .map_err(db)?;
    let tx = conn.transaction().await.map_err(db)?;
    tx.execute(&insert_step, &[&run, &(seq as i64), &body])
        .await
        .map_err(db)?;
    tx.execute(&touch_run, &[&run, &now_millis()])
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)
}

/// Appends the completed run's messages and removes its journal, in one
/// transaction.
pub(super) async fn complete(
    conn: &mut Object,
    run: &str,
    session: &str,
    expected: u64,
    bodies: &[String],
) -> Result<u64, StoreError> {
    let statements = AppendStatements::prepare(conn).await?;
    let tx = conn.transaction().await.map_err(db)?;
    let version = append_in(&tx, &statements, session, expected, bodies).await?;
    delete_in(&tx, run).await?;
    tx.commit().await.map_err(db)?;
    Ok(version)
}

/// Marks a run interrupted (it failed or was cancelled).
pub(super) async fn interrupt(client: &Client, run: &str) -> Result<(), StoreError> {
    client
        .execute(
            "UPDATE lousho_runs SET status = 'interrupted' WHERE id = $1",
            &[&run],
        )
        .await
        .map_err(db)?;
    Ok(())
}

/// Removes a run's journal.
pub(super) async fn delete(client: &mut Client, run: &str) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(db)?;
    let n = delete_in(&tx, run).await?;
    tx.commit().await.map_err(db)?;
    Ok(n)
}

async fn delete_in(tx: &tokio_postgres::Transaction<'_>, run: &str) -> Result<bool, StoreError> {
    tx.execute("DELETE FROM lousho_run_steps WHERE run_id = $1", &[&run])
        .await
        .map_err(db)?;
    let n = tx
        .execute("DELETE FROM lousho_runs WHERE id = $1", &[&run])
        .await
        .map_err(db)?;
    Ok(n > 0)
}

/// Deletes every run of a session (inside the session's delete).
pub(super) async fn delete_session_runs(
    tx: &tokio_postgres::Transaction<'_>,
    session: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM lousho_run_steps WHERE run_id IN
           (SELECT id FROM lousho_runs WHERE session_id = $1)",
        &[&session],
    )
    .await
    .map_err(db)?;
    tx.execute("DELETE FROM lousho_runs WHERE session_id = $1", &[&session])
        .await
        .map_err(db)?;
    Ok(())
}

/// The status as users see it: a `running` run whose holder's lease has
/// run out (or is gone) is interrupted (by the server's clock).
fn status_sql() -> String {
    format!(
        "CASE WHEN r.status = 'running' AND EXISTS (
            SELECT 1 FROM lousho_leases l WHERE l.session_id = r.session_id
              AND l.holder = r.holder AND l.expires_at > {NOW_MS})
         THEN 'running' ELSE 'interrupted' END"
    )
}

fn status(text: &str) -> JournalStatus {
    if text == "running" {
        JournalStatus::Running
    } else {
        JournalStatus::Interrupted
    }
}

/// A run's journal, its steps in order (one snapshot).
pub(super) async fn load(
    client: &mut Client,
    run: &str,
) -> Result<Option<JournaledRun>, StoreError> {
    let tx = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(db)?;
    let Some(row) = tx
        .query_opt(
            &format!(
                "SELECT r.session_id, {}, r.base_version, r.input, r.context, r.updated_at
                 FROM lousho_runs r WHERE r.id = $1",
                status_sql()
            ),
            &[&run],
        )
        .await
        .map_err(db)?
    else {
        return Ok(None);
    };
    let rows = tx
        .query(
            "SELECT seq, body FROM lousho_run_steps WHERE run_id = $1 ORDER BY seq",
            &[&run],
        )
        .await
        .map_err(db)?;
    tx.commit().await.map_err(db)?;
    let steps = rows
        .iter()
        .map(|r| decode_step(run, r.get(0), r.get(1)))
        .collect::<Result<Vec<_>, _>>()?;
    let state: String = row.get(1);
    let context: String = row.get(4);
    Ok(Some(JournaledRun {
        id: run.to_owned(),
        session: row.get(0),
        status: status(&state),
        base_version: u64::try_from(row.get::<_, i64>(2)).unwrap_or(0),
        input: decode_input(run, row.get(3))?,
        steps,
        context: serde_json::from_str(&context).unwrap_or_default(),
        updated_at: from_unix_millis(row.get(5)),
    }))
}

/// The journaled runs (of one session, or all), most recently updated first.
pub(super) async fn list(
    client: &Client,
    session: Option<&str>,
) -> Result<Vec<RunSummary>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT r.id, r.session_id, {},
                   (SELECT count(*) FROM lousho_run_steps s WHERE s.run_id = r.id), r.updated_at
                 FROM lousho_runs r WHERE $1::text IS NULL OR r.session_id = $1
                 ORDER BY r.updated_at DESC, r.id",
                status_sql()
            ),
            &[&session],
        )
        .await
        .map_err(db)?;
    Ok(rows
        .iter()
        .map(|r| {
            let state: String = r.get(2);
            RunSummary {
                id: r.get(0),
                session: r.get(1),
                status: status(&state),
                steps: u64::try_from(r.get::<_, i64>(3)).unwrap_or(0),
                updated_at: from_unix_millis(r.get(4)),
            }
        })
        .collect())
}
