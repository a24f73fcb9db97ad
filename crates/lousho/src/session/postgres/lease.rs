//! Run leases in PostgreSQL (`lousho_leases`): by the database server's
//! clock, so replicas whose clocks disagree still agree on when a lease runs
//! out.

use super::db;
use crate::session::lease::{left, ttl_millis};
use crate::session::{LeaseState, StoreError};
use std::time::Duration;
use tokio_postgres::Client;

/// The server's time in Unix milliseconds, as SQL.
pub(super) const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/// Takes the lease if it is free, ran out or is `holder`'s already.
pub(super) async fn acquire(
    client: &Client,
    session: &str,
    holder: &str,
    ttl: Duration,
) -> Result<LeaseState, StoreError> {
    let ttl = ttl_millis(ttl);
    // ON CONFLICT locks the row and evaluates WHERE on its newest version:
    // two takers of a lease that ran out, one wins.
    let taken = client
        .execute(
            &format!(
                "INSERT INTO lousho_leases (session_id, holder, heartbeat_at, expires_at)
                 SELECT $1, $2, n.t, n.t + $3 FROM (SELECT {NOW_MS} AS t) AS n
                 ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder,
                   heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at
                 WHERE lousho_leases.expires_at <= excluded.heartbeat_at
                    OR lousho_leases.holder = excluded.holder"
            ),
            &[&session, &holder, &ttl],
        )
        .await
        .map_err(db)?;
    if taken > 0 {
        return Ok(LeaseState::Acquired);
    }
    let row = client
        .query_opt(
            &format!(
                "SELECT holder, expires_at, {NOW_MS} FROM lousho_leases WHERE session_id = $1"
            ),
            &[&session],
        )
        .await
        .map_err(db)?;
    Ok(match row {
        Some(r) => LeaseState::Held {
            holder: r.get(0),
            expires_in: left(r.get(1), r.get(2)),
        },
        // Released since: the caller asks again.
        None => LeaseState::Held {
            holder: String::new(),
            expires_in: Duration::ZERO,
        },
    })
}

/// Renews `holder`'s lease; `false` if it is not `holder`'s any more.
pub(super) async fn renew(
    client: &Client,
    session: &str,
    holder: &str,
    ttl: Duration,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            &format!(
                "UPDATE lousho_leases SET heartbeat_at = {NOW_MS}, expires_at = {NOW_MS} + $3
                 WHERE session_id = $1 AND holder = $2"
            ),
            &[&session, &holder, &ttl_millis(ttl)],
        )
        .await
        .map_err(db)?;
    Ok(n > 0)
}

/// Gives back `holder`'s lease.
pub(super) async fn release(
    client: &Client,
    session: &str,
    holder: &str,
) -> Result<(), StoreError> {
    client
        .execute(
            "DELETE FROM lousho_leases WHERE session_id = $1 AND holder = $2",
            &[&session, &holder],
        )
        .await
        .map_err(db)?;
    Ok(())
}
