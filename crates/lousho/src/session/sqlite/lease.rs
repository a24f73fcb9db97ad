//! Run leases in SQLite (the `leases` table): by this machine's clock, which
//! every process sharing the file reads.

use super::db;
use crate::session::lease::{left, ttl_millis};
use crate::session::store::now_millis;
use crate::session::{LeaseState, StoreError};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::time::Duration;

/// Takes the lease if it is free, ran out or is `holder`'s already.
pub(super) fn acquire(
    conn: &mut Connection,
    session: &str,
    holder: &str,
    ttl: Duration,
) -> Result<LeaseState, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let now = now_millis();
    let taken = tx
        .prepare_cached(
            "INSERT INTO leases (session_id, holder, heartbeat_at, expires_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder,
               heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at
             WHERE leases.expires_at <= excluded.heartbeat_at OR leases.holder = excluded.holder",
        )
        .map_err(db)?
        .execute(params![
            session,
            holder,
            now,
            now.saturating_add(ttl_millis(ttl))
        ])
        .map_err(db)?;
    let state = if taken > 0 {
        LeaseState::Acquired
    } else {
        let row: Option<(String, i64)> = tx
            .prepare_cached("SELECT holder, expires_at FROM leases WHERE session_id = ?1")
            .map_err(db)?
            .query_row([session], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(db)?;
        match row {
            Some((holder, expires)) => LeaseState::Held {
                holder,
                expires_in: left(expires, now),
            },
            // Not reachable inside the write transaction; ask again.
            None => LeaseState::Held {
                holder: String::new(),
                expires_in: Duration::ZERO,
            },
        }
    };
    tx.commit().map_err(db)?;
    Ok(state)
}

/// Renews `holder`'s lease; `false` if it is not `holder`'s any more.
pub(super) fn renew(
    conn: &Connection,
    session: &str,
    holder: &str,
    ttl: Duration,
) -> Result<bool, StoreError> {
    let now = now_millis();
    let n = conn
        .prepare_cached(
            "UPDATE leases SET heartbeat_at = ?3, expires_at = ?4
             WHERE session_id = ?1 AND holder = ?2",
        )
        .map_err(db)?
        .execute(params![
            session,
            holder,
            now,
            now.saturating_add(ttl_millis(ttl))
        ])
        .map_err(db)?;
    Ok(n > 0)
}

/// Gives back `holder`'s lease.
pub(super) fn release(conn: &Connection, session: &str, holder: &str) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM leases WHERE session_id = ?1 AND holder = ?2")
        .map_err(db)?
        .execute(params![session, holder])
        .map_err(db)?;
    Ok(())
}
