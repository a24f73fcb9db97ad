//! Counters of per-caller limits in SQLite (the `limit_windows` table): one
//! write transaction per count, by this machine's clock.

use super::db;
use crate::session::store::now_millis;
use crate::session::window::{from_row, stored, window_millis};
use crate::session::{StoreError, WindowCount};
use rusqlite::{Connection, TransactionBehavior, params};
use std::time::Duration;

/// Adds `amount` to `key`'s count if it is below `limit` (a window that
/// ended starts again from 0).
pub(super) fn count(
    conn: &mut Connection,
    key: &str,
    window: Duration,
    amount: u64,
    limit: u64,
) -> Result<WindowCount, StoreError> {
    let (window, amount, limit) = (window_millis(window), stored(amount), stored(limit));
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let now = now_millis();
    let added = tx
        .prepare_cached(
            "INSERT INTO limit_windows (key, window_start, count) VALUES (?1, ?2, ?3)
             ON CONFLICT (key) DO UPDATE SET
               window_start = CASE WHEN limit_windows.window_start + ?4 <= excluded.window_start
                 THEN excluded.window_start ELSE limit_windows.window_start END,
               count = CASE WHEN limit_windows.window_start + ?4 <= excluded.window_start
                 THEN excluded.count ELSE limit_windows.count + excluded.count END
             WHERE limit_windows.window_start + ?4 <= excluded.window_start
                OR limit_windows.count < ?5",
        )
        .map_err(db)?
        .execute(params![key, now, amount, window, limit])
        .map_err(db)?;
    let (count, start): (i64, i64) = tx
        .prepare_cached("SELECT count, window_start FROM limit_windows WHERE key = ?1")
        .map_err(db)?
        .query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(db)?;
    tx.commit().map_err(db)?;
    Ok(from_row(
        added > 0,
        count,
        start.saturating_add(window).saturating_sub(now),
    ))
}
