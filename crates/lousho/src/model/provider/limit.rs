//! The client-side rate limiter: requests and tokens per minute for one
//! provider account, shared by every model (and so every agent) of the
//! process that uses the same provider, base URL and key.
//!
//! Two token buckets (requests, tokens), each holding up to a minute's worth
//! and refilled continuously — the model both OpenAI and Anthropic document
//! for their own limits. A request is let through when both buckets have
//! enough; its tokens are estimated from the body (one per 4 bytes, like
//! [`context_budget`](crate::AgentBuilder::context_budget)) and corrected
//! with the usage the provider reports, so a bucket may go below zero (the
//! next request waits longer). The provider's own `x-ratelimit-remaining-*`
//! / `anthropic-ratelimit-*-remaining` headers lower a bucket that thinks it
//! has more; a 429 holds every request back for its `Retry-After`.
//!
//! Nothing is reserved while a request waits: waiting is a sleep, and a
//! request dropped while it waits (a cancelled run) leaves the buckets as
//! they were.

use crate::model::Usage;
use crate::sync::MutexExt;
use reqwest::header::HeaderMap;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;
use tokio::time::Instant;

/// Client-side rate limits of one provider account: the most requests and
/// tokens (input plus output) per minute. Every model of the process with
/// the same provider, base URL and API key shares one limiter, so a burst of
/// agents is held to the rate instead of tripping the provider's limit; a
/// request that has to wait sends
/// [`AgentEvent::Throttled`](crate::AgentEvent::Throttled) first.
///
/// ```
/// use lousho::model::{OpenAi, RateLimits};
///
/// let model = OpenAi::builder("gpt-4o-mini")
///     .api_key("sk-…")
///     .rate_limits(RateLimits::new().requests_per_minute(500).tokens_per_minute(200_000))
///     .build()?;
/// # Ok::<(), lousho::model::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[must_use]
pub struct RateLimits {
    pub(crate) requests_per_minute: Option<u32>,
    pub(crate) tokens_per_minute: Option<u32>,
}

impl RateLimits {
    /// No limits (add them with the other methods).
    pub fn new() -> Self {
        Self::default()
    }

    /// The most requests per minute (at least 1).
    pub fn requests_per_minute(mut self, n: u32) -> Self {
        self.requests_per_minute = Some(n.max(1));
        self
    }

    /// The most tokens (input plus output) per minute (at least 1).
    pub fn tokens_per_minute(mut self, n: u32) -> Self {
        self.tokens_per_minute = Some(n.max(1));
        self
    }

    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self.requests_per_minute.is_none() && self.tokens_per_minute.is_none()
    }
}

/// A token bucket: `level` units now, up to `per_minute`, refilled at
/// `per_minute` a minute.
#[derive(Debug)]
struct Bucket {
    per_minute: Option<f64>,
    level: f64,
}

impl Bucket {
    fn new(per_minute: Option<u32>) -> Self {
        let per_minute = per_minute.map(f64::from);
        Self {
            per_minute,
            level: per_minute.unwrap_or(0.0),
        }
    }

    fn refill(&mut self, elapsed: Duration) {
        if let Some(cap) = self.per_minute {
            self.level = (self.level + elapsed.as_secs_f64() * cap / 60.0).min(cap);
        }
    }

    /// How long until `need` units (at most a full bucket) are there.
    fn wait(&self, need: f64) -> Duration {
        let Some(cap) = self.per_minute else {
            return Duration::ZERO;
        };
        let need = need.min(cap);
        if self.level >= need {
            return Duration::ZERO;
        }
        Duration::from_secs_f64((need - self.level) * 60.0 / cap)
    }

    fn take(&mut self, n: f64) {
        if self.per_minute.is_some() {
            self.level -= n;
        }
    }

    /// The provider says only `remaining` are left.
    fn at_most(&mut self, remaining: f64) {
        if self.per_minute.is_some() {
            self.level = self.level.min(remaining);
        }
    }
}

#[derive(Debug)]
struct State {
    requests: Bucket,
    tokens: Bucket,
    at: Instant,
    /// A 429's `Retry-After`: nothing goes before.
    blocked_until: Option<Instant>,
}

impl State {
    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at);
        self.at = now;
        self.requests.refill(elapsed);
        self.tokens.refill(elapsed);
    }
}

/// One provider account's limiter (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Limiter {
    state: Mutex<State>,
}

impl Limiter {
    fn new(limits: RateLimits) -> Self {
        Self {
            state: Mutex::new(State {
                requests: Bucket::new(limits.requests_per_minute),
                tokens: Bucket::new(limits.tokens_per_minute),
                at: Instant::now(),
                blocked_until: None,
            }),
        }
    }

    /// Lets a request of about `tokens` tokens through now (taking one
    /// request and its tokens), or says how long to wait before asking
    /// again.
    pub(crate) fn try_admit(&self, tokens: u64) -> Result<(), Duration> {
        let now = Instant::now();
        let mut state = self.state.lock_unpoisoned();
        if let Some(until) = state.blocked_until {
            if until > now {
                return Err(until - now);
            }
            state.blocked_until = None;
        }
        state.refill(now);
        #[allow(clippy::cast_precision_loss)]
        let tokens = tokens as f64;
        let wait = state.requests.wait(1.0).max(state.tokens.wait(tokens));
        if !wait.is_zero() {
            // Past the instant the buckets will have enough.
            return Err(wait + Duration::from_millis(1));
        }
        state.requests.take(1.0);
        state.tokens.take(tokens);
        Ok(())
    }

    /// A request admitted with `estimate` tokens used `usage` (cache reads
    /// do not count, as with the providers' own limits); a request that
    /// failed before using any gives its estimate back.
    pub(crate) fn settle(&self, estimate: u64, usage: Usage) {
        let used = (usage.input_tokens.saturating_sub(usage.cache_read_tokens))
            .saturating_add(usage.output_tokens);
        #[allow(clippy::cast_precision_loss)]
        let extra = used as f64 - estimate as f64;
        let mut state = self.state.lock_unpoisoned();
        state.refill(Instant::now());
        state.tokens.take(extra);
        if let Some(cap) = state.tokens.per_minute {
            state.tokens.level = state.tokens.level.min(cap);
        }
    }

    /// What the provider's response headers say of the account's limits;
    /// `retry_after` of a 429 holds every request back.
    pub(crate) fn observe(&self, headers: &HeaderMap, retry_after: Option<Duration>) {
        let number = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|n| n.is_finite() && *n >= 0.0)
        };
        let requests = number("x-ratelimit-remaining-requests")
            .or_else(|| number("anthropic-ratelimit-requests-remaining"));
        let tokens = number("x-ratelimit-remaining-tokens")
            .or_else(|| number("anthropic-ratelimit-tokens-remaining"));
        if requests.is_none() && tokens.is_none() && retry_after.is_none() {
            return;
        }
        let now = Instant::now();
        let mut state = self.state.lock_unpoisoned();
        state.refill(now);
        if let Some(n) = requests {
            state.requests.at_most(n);
        }
        if let Some(n) = tokens {
            state.tokens.at_most(n);
        }
        if let Some(after) = retry_after {
            let until = now + after;
            state.blocked_until = Some(state.blocked_until.map_or(until, |b| b.max(until)));
        }
    }

    /// The configured limits changed (a provider built again with others):
    /// the buckets take the new sizes.
    fn reconfigure(&self, limits: RateLimits) {
        let mut guard = self.state.lock_unpoisoned();
        let state = &mut *guard;
        state.refill(Instant::now());
        for (bucket, per_minute) in [
            (&mut state.requests, limits.requests_per_minute),
            (&mut state.tokens, limits.tokens_per_minute),
        ] {
            let per_minute = per_minute.map(f64::from);
            if bucket.per_minute != per_minute {
                bucket.level = match (bucket.per_minute, per_minute) {
                    (Some(_), Some(cap)) => bucket.level.min(cap),
                    (_, cap) => cap.unwrap_or(0.0),
                };
                bucket.per_minute = per_minute;
            }
        }
    }
}

/// Who shares a limiter: the provider, its base URL and a fingerprint of the
/// key (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Account {
    provider: String,
    url: String,
    key: u64,
}

type Registry = Mutex<HashMap<Account, Weak<Limiter>>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

/// The process's limiter for this provider account, made with `limits` or
/// taking them (the last configured win). `None` without limits.
pub(crate) fn shared(
    provider: &str,
    url: &str,
    key: Option<&str>,
    limits: RateLimits,
) -> Option<Arc<Limiter>> {
    if limits.is_empty() {
        return None;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.unwrap_or_default().hash(&mut hasher);
    let account = Account {
        provider: provider.to_owned(),
        url: url.to_owned(),
        key: hasher.finish(),
    };
    let mut map = registry().lock_unpoisoned();
    // Forget the accounts no model uses any more.
    map.retain(|_, limiter| limiter.strong_count() > 0);
    if let Some(limiter) = map.get(&account).and_then(Weak::upgrade) {
        limiter.reconfigure(limits);
        return Some(limiter);
    }
    let limiter = Arc::new(Limiter::new(limits));
    map.insert(account, Arc::downgrade(&limiter));
    Some(limiter)
}

/// A Go duration as OpenAI's `x-ratelimit-reset-*` headers send it
/// (`"1s"`, `"6m0s"`, `"20ms"`, `"1.5s"`).
pub(crate) fn go_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += value * seconds;
        rest = &rest[unit_len..];
    }
    (total.is_finite() && total >= 0.0).then(|| Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(rpm: Option<u32>, tpm: Option<u32>) -> Limiter {
        let mut limits = RateLimits::new();
        if let Some(n) = rpm {
            limits = limits.requests_per_minute(n);
        }
        if let Some(n) = tpm {
            limits = limits.tokens_per_minute(n);
        }
        Limiter::new(limits)
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_is_held_to_the_requests_per_minute() {
        let l = limiter(Some(3), None);
        let admitted = (0..10).filter(|_| l.try_admit(0).is_ok()).count();
        assert_eq!(admitted, 3);
        let wait = l.try_admit(0).unwrap_err();
        // One request comes back every 20 s.
        assert!(
            wait > Duration::from_secs(19) && wait <= Duration::from_secs(21),
            "{wait:?}"
        );
        tokio::time::advance(wait).await;
        assert!(l.try_admit(0).is_ok());
        assert!(l.try_admit(0).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_are_estimated_then_settled_with_the_usage() {
        let l = limiter(None, Some(1000));
        assert!(l.try_admit(600).is_ok());
        assert!(l.try_admit(600).is_err(), "400 left");
        // The request used 100 tokens only: 500 come back.
        l.settle(600, Usage::new(80, 20));
        assert!(l.try_admit(600).is_ok());
        // A request larger than the bucket goes once the bucket is full.
        let wait = l.try_admit(5000).unwrap_err();
        tokio::time::advance(wait).await;
        assert!(l.try_admit(5000).is_ok());
        assert!(l.try_admit(1).is_err(), "in debt");
    }

    #[tokio::test(start_paused = true)]
    async fn the_providers_headers_and_a_retry_after_hold_requests_back() {
        let l = limiter(Some(100), Some(100_000));
        let mut headers = HeaderMap::new();
        headers.insert(
            "anthropic-ratelimit-requests-remaining",
            "1".parse().unwrap(),
        );
        l.observe(&headers, None);
        assert!(l.try_admit(0).is_ok());
        assert!(l.try_admit(0).is_err(), "the provider said one was left");

        let l = limiter(Some(100), None);
        l.observe(&HeaderMap::new(), Some(Duration::from_secs(5)));
        let wait = l.try_admit(0).unwrap_err();
        assert!(wait > Duration::from_secs(4), "{wait:?}");
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(l.try_admit(0).is_ok());
    }

    #[test]
    fn accounts_share_a_limiter_by_provider_url_and_key() {
        let limits = RateLimits::new().requests_per_minute(1);
        let a = shared("openai", "http://a/v1", Some("k1"), limits);
        let b = shared("openai", "http://a/v1", Some("k1"), limits);
        let c = shared("openai", "http://a/v1", Some("k2"), limits);
        let (Some(a), Some(b), Some(c)) = (a, b, c) else {
            panic!("limits were set");
        };
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert!(shared("openai", "http://a/v1", Some("k1"), RateLimits::new()).is_none());
    }

    #[test]
    fn go_durations_parse() {
        assert_eq!(go_duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(go_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(go_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(go_duration("1h2m3s"), Some(Duration::from_secs(3723)));
        assert_eq!(go_duration("soon"), None);
        assert_eq!(go_duration(""), None);
    }
}
