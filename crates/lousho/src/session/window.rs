//! Counters in windows of time, for per-caller limits (runs a minute,
//! tokens a day): [`SessionStore::count_in_window`](super::SessionStore::count_in_window).
//!
//! A counter's window starts with the first count after the previous window
//! ended and lasts the window's length; when it ends, the count starts again
//! from 0. Stores that several processes share keep the counters in the
//! database, so replicas of a served agent count one caller together.

use std::time::Duration;

/// A counter after [`SessionStore::count_in_window`](super::SessionStore::count_in_window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WindowCount {
    /// Whether the amount was added (the count was below the limit).
    pub added: bool,
    /// The count in the current window (after adding, when added).
    pub count: u64,
    /// How long until the current window ends and the count starts again.
    pub resets_in: Duration,
}

impl WindowCount {
    /// A counter's state: `added`, its `count`, and the time to its reset.
    pub fn new(added: bool, count: u64, resets_in: Duration) -> Self {
        Self {
            added,
            count,
            resets_in,
        }
    }
}

/// A window's length or a count as stored (a signed 64-bit integer).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn stored(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A window's length in whole milliseconds (at least 1), as stored.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn window_millis(window: Duration) -> i64 {
    i64::try_from(window.as_millis()).unwrap_or(i64::MAX).max(1)
}

/// A stored counter row (`count`, and milliseconds until its window ends)
/// as a [`WindowCount`].
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn from_row(added: bool, count: i64, resets_in_ms: i64) -> WindowCount {
    WindowCount {
        added,
        count: u64::try_from(count).unwrap_or(0),
        resets_in: Duration::from_millis(u64::try_from(resets_in_ms).unwrap_or(0)),
    }
}
