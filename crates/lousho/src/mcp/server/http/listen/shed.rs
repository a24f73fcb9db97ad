//! Load shedding: what a client gets when the server is full (`503` with
//! `Retry-After`, never a reset without an answer), and the count and
//! rate-limited warning of every connection or request shed.

use crate::sync::MutexExt;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What a shed client is told to wait before retrying, in seconds.
pub(crate) const RETRY_AFTER_SECS: u64 = 1;
/// How often at most a warning about shed load is logged.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// The `503` a shed connection or request gets: `Retry-After`, and the
/// connection closes after it.
pub(crate) fn busy(what: &str) -> Response {
    let mut res = (
        StatusCode::SERVICE_UNAVAILABLE,
        Body::from(format!(
            "the server is at its limit of {what}; retry in {RETRY_AFTER_SECS} s"
        )),
    )
        .into_response();
    let headers = res.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

/// Counts what was shed of one kind and warns about it, at most once every
/// [`WARN_EVERY`] (with the count since the last warning).
#[derive(Debug)]
pub(crate) struct ShedCount {
    /// What is shed, e.g. "HTTP connections".
    what: &'static str,
    /// Which setting raises the limit, for the warning.
    setting: &'static str,
    total: AtomicU64,
    /// When the last warning was logged and the total then.
    warned: Mutex<Option<(Instant, u64)>>,
}

impl ShedCount {
    /// A counter of shed `what`, whose limit `setting` raises.
    pub(crate) const fn new(what: &'static str, setting: &'static str) -> Self {
        ShedCount {
            what,
            setting,
            total: AtomicU64::new(0),
            warned: Mutex::new(None),
        }
    }

    /// What is shed, e.g. "HTTP connections".
    pub(crate) fn what(&self) -> &'static str {
        self.what
    }

    /// How many were shed so far.
    #[cfg(test)]
    pub(crate) fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// One more was shed, at a limit of `limit`.
    pub(crate) fn record(&self, limit: usize) {
        let total = self.total.fetch_add(1, Ordering::Relaxed) + 1;
        let mut warned = self.warned.lock_unpoisoned();
        let since = match *warned {
            Some((at, _)) if at.elapsed() < WARN_EVERY => return,
            Some((_, then)) => total - then,
            None => total,
        };
        *warned = Some((Instant::now(), total));
        drop(warned);
        tracing::warn!(
            shed = since,
            total,
            limit,
            "answered 503 (Retry-After: {RETRY_AFTER_SECS}) to {} at their limit; raise `{}` if the machine has room",
            self.what,
            self.setting,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_answer_says_when_to_retry_and_closes() {
        let res = busy("128 connections");
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers()[header::RETRY_AFTER], "1");
        assert_eq!(res.headers()[header::CONNECTION], "close");
    }

    #[test]
    fn every_shed_one_is_counted() {
        let count = ShedCount::new("HTTP connections", "max_connections");
        for _ in 0..5 {
            count.record(8);
        }
        assert_eq!(count.total(), 5);
    }
}
