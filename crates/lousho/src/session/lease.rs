//! Run leases: one run at a time per session.
//!
//! A run of a stored session takes the session's **lease** before it
//! starts: a row naming the holder (the run's id) and when the lease runs
//! out. The holder renews it (its heartbeat) while it runs and gives it back
//! when it ends; a holder that crashed stops renewing, and its lease runs out
//! [`LeaseSettings::ttl`] after its last heartbeat, when another run takes it
//! over. A second run of the session waits for the lease (up to
//! [`LeaseSettings::wait`]), then continues from the first one's result.

use std::time::Duration;

/// What [`SessionStore::acquire_lease`](super::SessionStore::acquire_lease) found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseState {
    /// The caller holds the lease now (it was free, had run out, or was the
    /// caller's already).
    Acquired,
    /// Another run holds it.
    Held {
        /// The holder's id (a run id).
        holder: String,
        /// How long until it runs out unless renewed (by the store's clock).
        expires_in: Duration,
    },
}

/// How a run of a stored session takes its lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseSettings {
    /// How long a lease lasts without a heartbeat: a crashed holder's lease
    /// is taken over this long after its last heartbeat. The holder renews it
    /// every third of this. Default 30 s.
    pub ttl: Duration,
    /// How long a run waits for another run of its session to finish before
    /// it fails with [`StoreError::Busy`](super::StoreError::Busy). Default
    /// 10 minutes.
    pub wait: Duration,
}

/// The default lease time.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);

/// The default longest wait for a session's lease.
pub const DEFAULT_LEASE_WAIT: Duration = Duration::from_secs(600);

impl Default for LeaseSettings {
    fn default() -> Self {
        Self {
            ttl: DEFAULT_LEASE_TTL,
            wait: DEFAULT_LEASE_WAIT,
        }
    }
}

impl LeaseSettings {
    /// The defaults: 30 s leases, waits of up to 10 minutes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the lease time (at least 1 ms).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// Sets the longest wait for the lease.
    #[must_use]
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }
}

/// A lease time in whole milliseconds, as stored.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn ttl_millis(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1)
}

/// The time left of a lease that runs out at `expires` (ms) when it is `now`.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn left(expires: i64, now: i64) -> Duration {
    Duration::from_millis(u64::try_from(expires.saturating_sub(now)).unwrap_or(0))
}
