//! Served tasks in PostgreSQL (`lousho_tasks`), by the database server's
//! clock: replicas on one database answer for each other's tasks.

use super::db;
use super::lease::NOW_MS;
use crate::session::shared_task::{decode_answers, decode_state, millis, since};
use crate::session::{SharedTask, StoreError, TaskRequest, TaskRequests};
use std::time::Duration;
use tokio_postgres::Client;

/// Writes `task`'s state (its owner only the first time) and drops the
/// records no longer kept.
pub(super) async fn write(
    client: &Client,
    task: &str,
    owner: Option<&str>,
    state: &str,
    ended: bool,
    keep: Duration,
) -> Result<(), StoreError> {
    let keep = millis(keep);
    client
        .execute(
            &format!("DELETE FROM lousho_tasks WHERE keep_until <= {NOW_MS}"),
            &[],
        )
        .await
        .map_err(db)?;
    client
        .execute(
            &format!(
                "INSERT INTO lousho_tasks (id, owner, state, ended, written_at, keep_until)
                 SELECT $1::text, $2::text, $3::text, $4::bool, n.t, n.t + $5::bigint
                 FROM (SELECT {NOW_MS} AS t) AS n
                 ON CONFLICT (id) DO UPDATE SET state = excluded.state, ended = excluded.ended,
                   written_at = excluded.written_at, keep_until = excluded.keep_until"
            ),
            &[&task, &owner, &state, &ended, &keep],
        )
        .await
        .map_err(db)?;
    Ok(())
}

/// `task`'s record, if kept.
pub(super) async fn read(client: &Client, task: &str) -> Result<Option<SharedTask>, StoreError> {
    let row = client
        .query_opt(
            &format!(
                "SELECT owner, state, ended, written_at, {NOW_MS} FROM lousho_tasks
                 WHERE id = $1::text AND keep_until > {NOW_MS}"
            ),
            &[&task],
        )
        .await
        .map_err(db)?;
    row.map(|r| {
        let state = decode_state(task, r.get(1))?;
        Ok(SharedTask::new(
            r.get(0),
            state,
            r.get(2),
            since(r.get(3), r.get(4)),
        ))
    })
    .transpose()
}

/// Leaves `request` for `task`'s replica; `false` if it is not kept.
pub(super) async fn request(
    client: &Client,
    task: &str,
    request: &TaskRequest,
) -> Result<bool, StoreError> {
    let n = match request {
        TaskRequest::Cancel => {
            client
                .execute(
                    &format!(
                        "UPDATE lousho_tasks SET cancel = true
                         WHERE id = $1::text AND keep_until > {NOW_MS}"
                    ),
                    &[&task],
                )
                .await
        }
        TaskRequest::Answers(answers) => {
            let answers = serde_json::Value::Object(answers.clone()).to_string();
            // The row lock orders two replicas' answers: both are kept.
            client
                .execute(
                    &format!(
                        "UPDATE lousho_tasks SET answers = (answers::jsonb || $2::text::jsonb)::text
                         WHERE id = $1::text AND keep_until > {NOW_MS}"
                    ),
                    &[&task, &answers],
                )
                .await
        }
    }
    .map_err(db)?;
    Ok(n > 0)
}

/// What was asked of `task`; its answers are taken.
pub(super) async fn take(client: &Client, task: &str) -> Result<TaskRequests, StoreError> {
    let Some(row) = client
        .query_opt(
            "SELECT cancel, answers FROM lousho_tasks WHERE id = $1::text",
            &[&task],
        )
        .await
        .map_err(db)?
    else {
        return Ok(TaskRequests::default());
    };
    let answers: &str = row.get(1);
    if answers == "{}" {
        return Ok(TaskRequests::new(row.get(0), Default::default()));
    }
    // Answers came: take them with the row locked, so an answer left
    // meanwhile is taken now or stays for the next take.
    let row = client
        .query_one(
            "UPDATE lousho_tasks AS t SET answers = '{}'
             FROM (SELECT id, cancel, answers FROM lousho_tasks WHERE id = $1::text FOR UPDATE) AS old
             WHERE t.id = old.id
             RETURNING old.cancel, old.answers",
            &[&task],
        )
        .await
        .map_err(db)?;
    Ok(TaskRequests::new(row.get(0), decode_answers(row.get(1))))
}

/// What was asked of each of `tasks` that has something asked; answers are
/// taken. One query when only cancels (or nothing) were asked, the usual
/// case; answers are taken with their rows locked, as in [`take`].
pub(super) async fn take_of(
    client: &Client,
    tasks: &[String],
) -> Result<Vec<(String, TaskRequests)>, StoreError> {
    let rows = client
        .query(
            "SELECT id, cancel, answers FROM lousho_tasks
             WHERE id = ANY($1::text[]) AND (cancel OR answers <> '{}')",
            &[&tasks],
        )
        .await
        .map_err(db)?;
    let mut asked = Vec::with_capacity(rows.len());
    let mut answered = Vec::new();
    for row in &rows {
        let id: String = row.get(0);
        if row.get::<_, &str>(2) == "{}" {
            asked.push((id, TaskRequests::new(row.get(1), Default::default())));
        } else {
            answered.push(id);
        }
    }
    if answered.is_empty() {
        return Ok(asked);
    }
    let rows = client
        .query(
            "UPDATE lousho_tasks AS t SET answers = '{}'
             FROM (SELECT id, cancel, answers FROM lousho_tasks
                   WHERE id = ANY($1::text[]) FOR UPDATE) AS old
             WHERE t.id = old.id
             RETURNING old.id, old.cancel, old.answers",
            &[&answered],
        )
        .await
        .map_err(db)?;
    for row in &rows {
        asked.push((
            row.get(0),
            TaskRequests::new(row.get(1), decode_answers(row.get(2))),
        ));
    }
    Ok(asked)
}
