//! When and how long to wait before retrying a failed request.

use crate::model::ModelError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// What a retry hook is told before lousho waits and tries again.
#[derive(Debug)]
#[non_exhaustive]
pub struct RetryNotice<'a> {
    /// The provider (`"openai"`, `"anthropic"`, …).
    pub provider: &'a str,
    /// The retry about to happen: 1 for the first retry.
    pub attempt: u32,
    /// How long lousho waits first (the server's `Retry-After` when it sent one).
    pub delay: Duration,
    /// Whether `delay` came from the server's `Retry-After`.
    pub from_retry_after: bool,
    /// The error being retried.
    pub error: &'a ModelError,
}

type RetryHook = Arc<dyn Fn(&RetryNotice<'_>) + Send + Sync>;

/// Retries of a request that failed before any output reached the caller:
/// 429, 5xx (and Anthropic's 529), connect errors and connections that broke
/// before the first event. Exponential backoff with jitter, honouring the
/// server's `Retry-After` (or `retry-after-ms`).
///
/// Nothing is retried once a text delta or tool call was streamed to the
/// caller: a retry would repeat output.
///
/// ```
/// use lousho::model::RetryPolicy;
/// use std::time::Duration;
///
/// let retry = RetryPolicy::default()
///     .max_retries(5)
///     .initial_delay(Duration::from_millis(250))
///     .max_delay(Duration::from_secs(10));
/// # let _ = retry;
/// ```
#[derive(Clone)]
#[must_use]
pub struct RetryPolicy {
    pub(crate) max_retries: u32,
    pub(crate) initial_delay: Duration,
    pub(crate) max_delay: Duration,
    pub(crate) max_retry_after: Duration,
    pub(crate) jitter: bool,
    pub(crate) on_retry: Option<RetryHook>,
}

impl Default for RetryPolicy {
    /// 3 retries, 500 ms doubling up to 20 s, with jitter; a `Retry-After`
    /// above 60 s is not waited for (the error is returned instead).
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
            jitter: true,
            on_retry: None,
        }
    }
}

impl fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_retries", &self.max_retries)
            .field("initial_delay", &self.initial_delay)
            .field("max_delay", &self.max_delay)
            .field("max_retry_after", &self.max_retry_after)
            .field("jitter", &self.jitter)
            .field("on_retry", &self.on_retry.is_some())
            .finish()
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self::default().max_retries(0)
    }

    /// The most retries after the first attempt (default 3).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// The first backoff delay; each retry doubles it (default 500 ms).
    pub fn initial_delay(mut self, delay: Duration) -> Self {
        self.initial_delay = delay;
        self
    }

    /// The longest backoff delay (default 20 s).
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// The longest `Retry-After` lousho waits for (default 60 s); a longer
    /// one ends the request with [`ModelError::RateLimited`] carrying it.
    pub fn max_retry_after(mut self, delay: Duration) -> Self {
        self.max_retry_after = delay;
        self
    }

    /// Whether backoff delays get random jitter (default true).
    pub fn jitter(mut self, jitter: bool) -> Self {
        self.jitter = jitter;
        self
    }

    /// Called before each retry (for logs, metrics or a "retrying in 3 s" UI).
    pub fn on_retry(mut self, hook: impl Fn(&RetryNotice<'_>) + Send + Sync + 'static) -> Self {
        self.on_retry = Some(Arc::new(hook));
        self
    }

    /// The delay before retry number `attempt` (1-based), or `None` to give up.
    pub(crate) fn delay(
        &self,
        attempt: u32,
        retry_after: Option<Duration>,
    ) -> Option<(Duration, bool)> {
        if attempt > self.max_retries {
            return None;
        }
        if let Some(after) = retry_after {
            return (after <= self.max_retry_after).then_some((after, true));
        }
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(20));
        let full = self
            .initial_delay
            .saturating_mul(factor)
            .min(self.max_delay);
        if !self.jitter {
            return Some((full, false));
        }
        // "Equal jitter": half fixed, half random, so retries of many clients spread out.
        let half = full / 2;
        let random = half.mul_f64(fastrand::f64());
        Some((half + random, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_retry_after_wins() {
        let p = RetryPolicy::default()
            .initial_delay(Duration::from_millis(100))
            .max_delay(Duration::from_millis(350))
            .jitter(false);
        assert_eq!(p.delay(1, None), Some((Duration::from_millis(100), false)));
        assert_eq!(p.delay(2, None), Some((Duration::from_millis(200), false)));
        assert_eq!(p.delay(3, None), Some((Duration::from_millis(350), false)));
        assert_eq!(p.delay(4, None), None);
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(7))),
            Some((Duration::from_secs(7), true))
        );
        assert_eq!(p.delay(1, Some(Duration::from_secs(61))), None);
    }

    #[test]
    fn jitter_stays_between_half_and_full_delay() {
        let p = RetryPolicy::default().initial_delay(Duration::from_millis(100));
        for _ in 0..100 {
            let (d, _) = p.delay(1, None).unwrap_or_default();
            assert!(
                d >= Duration::from_millis(50) && d <= Duration::from_millis(100),
                "{d:?}"
            );
        }
    }
}
