//! Counters of per-caller limits in PostgreSQL (`lousho_limit_windows`):
//! one atomic upsert per count, by the database server's clock, so replicas
//! count one caller together whatever their own clocks say.

use super::db;
use super::lease::NOW_MS;
use crate::session::window::{from_row, stored, window_millis};
use crate::session::{StoreError, WindowCount};
use std::time::Duration;
use tokio_postgres::Client;

/// Adds `amount` to `key`'s count if it is below `limit` (a window that
/// ended starts again from 0).
pub(super) async fn count(
    client: &Client,
    key: &str,
    window: Duration,
    amount: u64,
    limit: u64,
) -> Result<WindowCount, StoreError> {
    let (window, amount, limit) = (window_millis(window), stored(amount), stored(limit));
    // ON CONFLICT locks the row and evaluates WHERE on its newest version:
    // two replicas counting at once both count, in turn.
    let added = client
        .query_opt(
            &format!(
                "INSERT INTO lousho_limit_windows AS w (key, window_start, count)
                 SELECT $1::text, n.t, $2::bigint FROM (SELECT {NOW_MS} AS t) AS n
                 ON CONFLICT (key) DO UPDATE SET
                   window_start = CASE WHEN w.window_start + $3::bigint <= excluded.window_start
                     THEN excluded.window_start ELSE w.window_start END,
                   count = CASE WHEN w.window_start + $3::bigint <= excluded.window_start
                     THEN excluded.count ELSE w.count + excluded.count END
                 WHERE w.window_start + $3::bigint <= excluded.window_start OR w.count < $4::bigint
                 RETURNING w.count, w.window_start + $3::bigint - {NOW_MS}"
            ),
            &[&key, &amount, &window, &limit],
        )
        .await
        .map_err(db)?;
    if let Some(row) = added {
        return Ok(from_row(true, row.get(0), row.get(1)));
    }
    let row = client
        .query_one(
            &format!(
                "SELECT count, window_start + $2::bigint - {NOW_MS} FROM lousho_limit_windows WHERE key = $1::text"
            ),
            &[&key, &window],
        )
        .await
        .map_err(db)?;
    Ok(from_row(false, row.get(0), row.get(1)))
}
