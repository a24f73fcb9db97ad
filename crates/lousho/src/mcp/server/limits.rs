//! Per-caller limits of agent runs ([`CallerLimits`]): runs at once, runs a
//! minute and tokens a day, per caller — the OAuth caller (issuer and
//! subject) when there is one, else the client id the HTTP call limits use
//! (its IP address), and on stdio the one client.
//!
//! The counts live in the session store (`count_in_window` for the windows,
//! run leases for the runs at once), so replicas sharing a store
//! (PostgreSQL) count a caller together; without a store, in memory. A run
//! past a limit is refused before it starts: over HTTP with `429` and
//! `Retry-After` (see `http/screen`), on stdio with an `isError` result.

use crate::mcp::digest::sha256_hex;
use crate::session::{
    DEFAULT_LEASE_TTL, LeaseState, MemoryStore, SessionStore, StoreError, WindowCount, new_run_id,
};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The window of `runsPerMinute`.
const MINUTE: Duration = Duration::from_secs(60);

/// The window of `tokensPerDay`.
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// What `Retry-After` says to a caller with too many runs at once (when one
/// ends is not known).
const BUSY_RETRY: Duration = Duration::from_secs(1);

/// The prefix of every id the limits keep in a store (counters and the
/// leases of runs at once); a served session may not take such an id.
pub(crate) const RESERVED_PREFIX: &str = "lousho-limit:";

/// Limits on the agent runs of each caller of a served agent
/// ([`ServeOptions::caller_limits`](super::ServeOptions::caller_limits);
/// spec: `serve.limits.perCaller`).
///
/// A caller is the OAuth access token's issuer and subject when the server
/// takes OAuth tokens; otherwise the client's IP address over HTTP (behind
/// a proxy: the proxy's), and the one client over stdio. Every call of an
/// agent tool is a run; direct tools are not limited here.
///
/// The counts are kept in the session store when the server has one
/// ([`ServeOptions::sessions`](super::ServeOptions::sessions), or
/// [`store`](Self::store)) — so replicas sharing a `PostgresStore` count a
/// caller together — and in memory otherwise. A run past a limit is refused
/// before it starts: over HTTP with `429 Too Many Requests`, `Retry-After`
/// (seconds until the limit frees) and a JSON-RPC error naming the limit;
/// over stdio with an `isError` result saying the same.
///
/// ```
/// use lousho::mcp::CallerLimits;
/// let limits = CallerLimits::new()
///     .concurrent_runs(2)
///     .runs_per_minute(10)
///     .tokens_per_day(1_000_000);
/// # let _ = limits;
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct CallerLimits {
    pub(crate) concurrent_runs: Option<u32>,
    pub(crate) runs_per_minute: Option<u32>,
    pub(crate) tokens_per_day: Option<u64>,
    pub(crate) store: Option<Arc<dyn SessionStore>>,
}

impl fmt::Debug for CallerLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallerLimits")
            .field("concurrent_runs", &self.concurrent_runs)
            .field("runs_per_minute", &self.runs_per_minute)
            .field("tokens_per_day", &self.tokens_per_day)
            .field("store", &self.store.is_some())
            .finish()
    }
}

impl CallerLimits {
    /// No limits yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The most agent runs one caller may have going at once (at least 1).
    pub fn concurrent_runs(mut self, runs: u32) -> Self {
        self.concurrent_runs = Some(runs.max(1));
        self
    }

    /// The most agent runs one caller may start in a minute (at least 1).
    /// The minute starts with the caller's first run after the last one
    /// ended.
    pub fn runs_per_minute(mut self, runs: u32) -> Self {
        self.runs_per_minute = Some(runs.max(1));
        self
    }

    /// The most model tokens (input plus output) one caller's runs may use
    /// in a day (at least 1). A run is refused once the day's count has
    /// reached the limit; the run that crosses it finishes. A failed or
    /// cancelled run counts the tokens of its finished turns. The day starts
    /// with the caller's first run after the last one ended.
    pub fn tokens_per_day(mut self, tokens: u64) -> Self {
        self.tokens_per_day = Some(tokens.max(1));
        self
    }

    /// Keeps the counts in `store` (default: the server's session store,
    /// else memory).
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Whether any limit is set.
    pub(crate) fn any(&self) -> bool {
        self.concurrent_runs.is_some()
            || self.runs_per_minute.is_some()
            || self.tokens_per_day.is_some()
    }
}

/// Which limit refused a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    ConcurrentRuns,
    RunsPerMinute,
    TokensPerDay,
}

impl Which {
    /// Its name in the spec (and in the JSON-RPC error's `data.limit`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Which::ConcurrentRuns => "concurrentRuns",
            Which::RunsPerMinute => "runsPerMinute",
            Which::TokensPerDay => "tokensPerDay",
        }
    }
}

/// A run refused by a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exceeded {
    pub(crate) which: Which,
    /// The limit.
    pub(crate) limit: u64,
    /// How long until the limit frees.
    pub(crate) retry_after: Duration,
}

impl Exceeded {
    /// `Retry-After` in whole seconds (rounded up, at least 1).
    pub(crate) fn retry_after_secs(&self) -> u64 {
        let d = self.retry_after;
        (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
    }
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (limit, name, secs) = (self.limit, self.which.name(), self.retry_after_secs());
        match self.which {
            Which::ConcurrentRuns => write!(
                f,
                "too many runs at once: this caller has {limit} agent runs going (limit \
                 `{name}`: {limit}); call again when one has finished"
            ),
            Which::RunsPerMinute => write!(
                f,
                "rate limit: this caller started {limit} agent runs this minute (limit \
                 `{name}`: {limit}); call again in {secs} s"
            ),
            Which::TokensPerDay => write!(
                f,
                "token limit: this caller's runs used their {limit} tokens for today (limit \
                 `{name}`: {limit}); call again in {secs} s"
            ),
        }
    }
}

/// Why a run was not let through.
#[derive(Debug)]
pub(crate) enum Refused {
    /// A limit.
    Exceeded(Exceeded),
    /// The store keeping the counts failed.
    Store(StoreError),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Exceeded(e) => e.fmt(f),
            Refused::Store(e) => write!(
                f,
                "cannot check this caller's limits now (the session store failed: {e}); call \
                 again shortly"
            ),
        }
    }
}

/// The limits, checked against their counts.
#[derive(Debug)]
pub(crate) struct Limiter {
    concurrent_runs: Option<u32>,
    runs_per_minute: Option<u32>,
    tokens_per_day: Option<u64>,
    store: Arc<dyn SessionStore>,
    /// Counts for a store that keeps no counters.
    memory: MemoryStore,
    /// Whether the fallback to memory was logged.
    warned: AtomicBool,
    /// How long a run's slot lasts without a heartbeat.
    slot_ttl: Duration,
}

impl Limiter {
    /// The limiter of `limits` (`None` when no limit is set), counting in
    /// their store, else `sessions`, else memory.
    pub(crate) fn new(
        limits: Option<CallerLimits>,
        sessions: Option<&Arc<dyn SessionStore>>,
    ) -> Option<Arc<Self>> {
        let limits = limits.filter(CallerLimits::any)?;
        let store = limits
            .store
            .or_else(|| sessions.cloned())
            .unwrap_or_else(|| Arc::new(MemoryStore::new()));
        Some(Arc::new(Limiter {
            concurrent_runs: limits.concurrent_runs,
            runs_per_minute: limits.runs_per_minute,
            tokens_per_day: limits.tokens_per_day,
            store,
            memory: MemoryStore::new(),
            warned: AtomicBool::new(false),
            slot_ttl: DEFAULT_LEASE_TTL,
        }))
    }

    /// Lets a run of `caller` (a stable name: an OAuth caller's key, a
    /// client's address) start, or says which limit refuses it.
    pub(crate) async fn admit(self: &Arc<Self>, caller: &str) -> Result<RunPermit, Refused> {
        let key = format!("{RESERVED_PREFIX}{}", sha256_hex(caller.as_bytes()));
        if let Some(limit) = self.tokens_per_day {
            let used = self.count(&format!("{key}:tokens"), DAY, 0, limit).await?;
            if !used.added {
                return Err(Refused::Exceeded(Exceeded {
                    which: Which::TokensPerDay,
                    limit,
                    retry_after: used.resets_in,
                }));
            }
        }
        let mut permit = RunPermit {
            limiter: self.clone(),
            key,
            slot: None,
        };
        if let Some(limit) = self.concurrent_runs {
            permit.slot = Some(self.take_slot(&permit.key, limit).await?);
        }
        if let Some(limit) = self.runs_per_minute {
            let key = format!("{}:runs", permit.key);
            let runs = self.count(&key, MINUTE, 1, u64::from(limit)).await?;
            if !runs.added {
                // Dropping the permit gives its slot back.
                return Err(Refused::Exceeded(Exceeded {
                    which: Which::RunsPerMinute,
                    limit: u64::from(limit),
                    retry_after: runs.resets_in,
                }));
            }
        }
        Ok(permit)
    }

    /// A free slot of the caller's `limit` runs at once: the lease of one
    /// of its slot ids.
    async fn take_slot(&self, key: &str, limit: u32) -> Result<Slot, Refused> {
        let holder = new_run_id();
        for i in 0..limit {
            let id = format!("{key}:run{i}");
            let state = self
                .store
                .acquire_lease(&id, &holder, self.slot_ttl)
                .await
                .map_err(Refused::Store)?;
            if state == LeaseState::Acquired {
                return Ok(Slot::hold(self.store.clone(), id, holder, self.slot_ttl));
            }
        }
        Err(Refused::Exceeded(Exceeded {
            which: Which::ConcurrentRuns,
            limit: u64::from(limit),
            retry_after: BUSY_RETRY,
        }))
    }

    /// Counts in the store, or in memory when it keeps no counters.
    async fn count(
        &self,
        key: &str,
        window: Duration,
        amount: u64,
        limit: u64,
    ) -> Result<WindowCount, Refused> {
        let counted = self
            .store
            .count_in_window(key, window, amount, limit)
            .await
            .map_err(Refused::Store)?;
        if let Some(c) = counted {
            return Ok(c);
        }
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "the session store keeps no counters: per-caller limits are counted in this process only"
            );
        }
        self.memory
            .count_in_window(key, window, amount, limit)
            .await
            .map_err(Refused::Store)?
            .ok_or_else(|| {
                Refused::Store(StoreError::Backend {
                    backend: "memory",
                    source: "no counters".into(),
                })
            })
    }
}

/// A run let through: holds its slot of the runs at once (given back when
/// dropped) and counts the tokens it used.
pub(crate) struct RunPermit {
    limiter: Arc<Limiter>,
    /// The caller's key in the store.
    key: String,
    slot: Option<Slot>,
}

impl fmt::Debug for RunPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunPermit")
            .field("slot", &self.slot.is_some())
            .finish_non_exhaustive()
    }
}

impl RunPermit {
    /// Counts `tokens` the run used toward the caller's day.
    pub(crate) async fn spent(&self, tokens: u64) {
        if tokens == 0 || self.limiter.tokens_per_day.is_none() {
            return;
        }
        let key = format!("{}:tokens", self.key);
        if let Err(e) = self.limiter.count(&key, DAY, tokens, u64::MAX).await {
            tracing::warn!(error = %e, tokens, "could not count a run's tokens toward its caller's day");
        }
    }
}

/// A held slot of a caller's runs at once: a lease renewed while held.
struct Slot {
    store: Arc<dyn SessionStore>,
    id: String,
    holder: String,
    /// Stops the heartbeat.
    stop: CancellationToken,
}

impl Slot {
    /// Holds the lease `id` taken for `holder`, renewing it every third of
    /// `ttl` until dropped.
    fn hold(store: Arc<dyn SessionStore>, id: String, holder: String, ttl: Duration) -> Self {
        let stop = CancellationToken::new();
        let renew = (store.clone(), id.clone(), holder.clone(), stop.clone());
        tokio::spawn(async move {
            let (store, id, holder, stop) = renew;
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(ttl / 3) => {}
                }
                if let Err(e) = store.renew_lease(&id, &holder, ttl).await {
                    tracing::warn!(error = %e, "could not renew a caller's run slot");
                }
            }
        });
        Slot {
            store,
            id,
            holder,
            stop,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.stop.cancel();
        let (store, id, holder) = (
            self.store.clone(),
            std::mem::take(&mut self.id),
            std::mem::take(&mut self.holder),
        );
        // A slot not given back (no runtime left) runs out by itself.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Err(e) = store.release_lease(&id, &holder).await {
                    tracing::warn!(error = %e, "could not give back a caller's run slot; it runs out by itself");
                }
            });
        }
    }
}

/// A run's permit on its way from the HTTP screen to the handler (in the
/// request's extensions, which rmcp clones): the handler takes it.
#[derive(Clone, Default)]
pub(crate) struct PermitSlot(Arc<std::sync::Mutex<Option<RunPermit>>>);

impl PermitSlot {
    /// A slot holding `permit`.
    pub(crate) fn new(permit: RunPermit) -> Self {
        Self(Arc::new(std::sync::Mutex::new(Some(permit))))
    }

    /// The permit, once.
    pub(crate) fn take(&self) -> Option<RunPermit> {
        use crate::sync::MutexExt;
        self.0.lock_unpoisoned().take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(limits: CallerLimits) -> Arc<Limiter> {
        Limiter::new(Some(limits), None).unwrap()
    }

    #[tokio::test]
    async fn the_run_past_the_minute_s_limit_is_refused_with_the_time_left() {
        let l = limiter(CallerLimits::new().runs_per_minute(2));
        let _a = l.admit("alice").await.unwrap();
        let _b = l.admit("alice").await.unwrap();
        let Err(Refused::Exceeded(e)) = l.admit("alice").await else {
            panic!("the third run is refused");
        };
        assert_eq!(e.which, Which::RunsPerMinute);
        assert!((1..=60).contains(&e.retry_after_secs()), "{e:?}");
        assert!(e.to_string().contains("runsPerMinute"), "{e}");
        l.admit("bob").await.unwrap();
    }

    #[tokio::test]
    async fn a_slot_of_the_runs_at_once_frees_when_its_run_ends() {
        let l = limiter(CallerLimits::new().concurrent_runs(1));
        let first = l.admit("alice").await.unwrap();
        let Err(Refused::Exceeded(e)) = l.admit("alice").await else {
            panic!("a second run at once is refused");
        };
        assert_eq!(e.which, Which::ConcurrentRuns);
        drop(first);
        // The slot is given back on a spawned task: wait for it, by its effect.
        let mut tries = 0;
        while l.admit("alice").await.is_err() {
            tries += 1;
            assert!(tries < 1000, "the slot came back");
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn runs_are_refused_once_the_day_s_tokens_are_spent() {
        let l = limiter(CallerLimits::new().tokens_per_day(100));
        let run = l.admit("alice").await.unwrap();
        run.spent(60).await;
        l.admit("alice").await.unwrap().spent(60).await;
        let Err(Refused::Exceeded(e)) = l.admit("alice").await else {
            panic!("the day's tokens are spent");
        };
        assert_eq!(e.which, Which::TokensPerDay);
        assert!(e.retry_after_secs() > 60, "{e:?}");
    }
}
