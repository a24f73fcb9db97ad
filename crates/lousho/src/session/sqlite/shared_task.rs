//! Served tasks in SQLite (the `tasks` table), by this machine's clock:
//! replicas on one file answer for each other's tasks.

use super::db;
use crate::session::shared_task::{decode_answers, decode_state, millis, since};
use crate::session::store::now_millis;
use crate::session::{SharedTask, StoreError, TaskRequest, TaskRequests};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;
use std::time::Duration;

/// Writes `task`'s state (its owner only the first time) and drops the
/// records no longer kept.
pub(super) fn write(
    conn: &mut Connection,
    task: &str,
    owner: Option<&str>,
    state: &str,
    ended: bool,
    keep: Duration,
) -> Result<(), StoreError> {
    let now = now_millis();
    let keep_until = now.saturating_add(millis(keep));
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    tx.prepare_cached("DELETE FROM tasks WHERE keep_until <= ?1")
        .map_err(db)?
        .execute([now])
        .map_err(db)?;
    tx.prepare_cached(
        "INSERT INTO tasks (id, owner, state, ended, written_at, keep_until)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (id) DO UPDATE SET state = excluded.state, ended = excluded.ended,
           written_at = excluded.written_at, keep_until = excluded.keep_until",
    )
    .map_err(db)?
    .execute(params![task, owner, state, ended, now, keep_until])
    .map_err(db)?;
    tx.commit().map_err(db)
}

/// `task`'s record, if kept.
pub(super) fn read(conn: &Connection, task: &str) -> Result<Option<SharedTask>, StoreError> {
    let now = now_millis();
    let row: Option<(Option<String>, String, bool, i64)> = conn
        .prepare_cached(
            "SELECT owner, state, ended, written_at FROM tasks WHERE id = ?1 AND keep_until > ?2",
        )
        .map_err(db)?
        .query_row(params![task, now], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()
        .map_err(db)?;
    row.map(|(owner, state, ended, written)| {
        let state = decode_state(task, &state)?;
        Ok(SharedTask::new(owner, state, ended, since(written, now)))
    })
    .transpose()
}

/// Leaves `request` for `task`'s replica; `false` if it is not kept.
pub(super) fn request(
    conn: &mut Connection,
    task: &str,
    request: &TaskRequest,
) -> Result<bool, StoreError> {
    let now = now_millis();
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let found: Option<String> = tx
        .prepare_cached("SELECT answers FROM tasks WHERE id = ?1 AND keep_until > ?2")
        .map_err(db)?
        .query_row(params![task, now], |r| r.get(0))
        .optional()
        .map_err(db)?;
    let Some(answers) = found else {
        return Ok(false);
    };
    match request {
        TaskRequest::Cancel => {
            tx.prepare_cached("UPDATE tasks SET cancel = 1 WHERE id = ?1")
                .map_err(db)?
                .execute([task])
                .map_err(db)?;
        }
        TaskRequest::Answers(more) => {
            let mut answers = decode_answers(&answers);
            answers.extend(more.clone());
            tx.prepare_cached("UPDATE tasks SET answers = ?2 WHERE id = ?1")
                .map_err(db)?
                .execute(params![task, Value::Object(answers).to_string()])
                .map_err(db)?;
        }
    }
    tx.commit().map_err(db)?;
    Ok(true)
}

/// What was asked of `task`; its answers are taken.
pub(super) fn take(conn: &mut Connection, task: &str) -> Result<TaskRequests, StoreError> {
    let row: Option<(bool, String)> = conn
        .prepare_cached("SELECT cancel, answers FROM tasks WHERE id = ?1")
        .map_err(db)?
        .query_row([task], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .map_err(db)?;
    let Some((cancel, answers)) = row else {
        return Ok(TaskRequests::default());
    };
    if answers == "{}" {
        return Ok(TaskRequests::new(cancel, Default::default()));
    }
    // Answers came: take them in one write transaction, so an answer left
    // meanwhile is taken now or stays for the next take.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let (cancel, answers): (bool, String) = tx
        .prepare_cached("SELECT cancel, answers FROM tasks WHERE id = ?1")
        .map_err(db)?
        .query_row([task], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(db)?;
    tx.prepare_cached("UPDATE tasks SET answers = '{}' WHERE id = ?1")
        .map_err(db)?
        .execute([task])
        .map_err(db)?;
    tx.commit().map_err(db)?;
    Ok(TaskRequests::new(cancel, decode_answers(&answers)))
}
