//! Opaque access tokens checked by token introspection (RFC 7662): the
//! token is POSTed to the issuer's introspection endpoint (from its
//! metadata's `introspection_endpoint`, or configured) with this server's
//! client credentials (HTTP Basic), and accepted only if the answer says
//! `active: true`, names this issuer (when it names one) and this audience,
//! holds `exp`/`nbf` within the clock skew, is a bearer token (no `cnf`)
//! and names a subject (`sub`, else `client_id`).
//!
//! Answers are cached by a SHA-256 of the token (never the token), at most
//! [`CACHE_TTL`] and never past the token's `exp`, for at most
//! [`MAX_CACHED`] tokens; concurrent checks of one token wait for one
//! introspection.

mod answer;

use super::issuer::{Issuer, form, json};
use super::keys::MIN_REFETCH;
use super::refusal::IntrospectionError;
use super::refusal::{Claims, Refused};
use crate::sync::{MutexExt, RwLockExt};
use answer::{Granted, read_answer};
use reqwest::Url;
use serde_json::Value;
use sha2::Digest as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The longest an introspection answer is used.
pub(super) const CACHE_TTL: Duration = Duration::from_secs(60);
/// The most tokens whose answers are cached.
pub(super) const MAX_CACHED: usize = 4096;
/// The longest opaque token sent to the authorization server.
pub(super) const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// A cached verdict.
struct Entry {
    verdict: Result<Arc<Granted>, &'static str>,
    until: Instant,
}

type TokenHash = [u8; 32];

/// Introspects tokens for one issuer and audience.
pub(super) struct Introspector {
    issuer: Arc<Issuer>,
    audience: String,
    skew: Duration,
    client_id: String,
    client_secret: String,
    /// The endpoint, configured or once discovered.
    endpoint: RwLock<Option<Url>>,
    /// Serialises discovery; holds when it last failed.
    discovering: tokio::sync::Mutex<Option<Instant>>,
    cache: Mutex<HashMap<TokenHash, Entry>>,
    /// One lock per token being introspected now.
    inflight: Mutex<HashMap<TokenHash, Arc<tokio::sync::Mutex<()>>>>,
    /// When refused credentials were last logged as an error.
    refusal_logged: Mutex<Option<Instant>>,
}

/// How often refused introspection credentials are logged as an error (each
/// call with them fails; the log says so once in this long).
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(60);

impl Introspector {
    pub(super) fn new(
        issuer: Arc<Issuer>,
        audience: String,
        skew: Duration,
        (client_id, client_secret): (String, String),
        endpoint: Option<Url>,
    ) -> Self {
        Self {
            issuer,
            audience,
            skew,
            client_id,
            client_secret,
            endpoint: RwLock::new(endpoint),
            discovering: tokio::sync::Mutex::new(None),
            cache: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
            refusal_logged: Mutex::new(None),
        }
    }

    /// The claims of the opaque `token`, if the issuer says it is valid here.
    pub(super) async fn check(&self, token: &str) -> Result<Claims, Refused> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Refused::Invalid("the token is too long"));
        }
        let hash: TokenHash = sha2::Sha256::digest(token.as_bytes()).into();
        let granted = match self.cached(&hash) {
            Some(verdict) => verdict,
            None => {
                let flight = self
                    .inflight
                    .lock_unpoisoned()
                    .entry(hash)
                    .or_default()
                    .clone();
                let held = flight.lock().await;
                // Another check of this token may have answered meanwhile.
                let verdict = match self.cached(&hash) {
                    Some(verdict) => Ok(verdict),
                    None => self.introspect(token, hash).await,
                };
                drop(held);
                {
                    let mut inflight = self.inflight.lock_unpoisoned();
                    // Two: this clone and the map's (no other waiter).
                    if Arc::strong_count(&flight) <= 2 {
                        inflight.remove(&hash);
                    }
                }
                verdict?
            }
        };
        let granted = granted.map_err(Refused::Invalid)?;
        granted
            .live(unix_now(), self.skew.as_secs())
            .map_err(Refused::Invalid)?;
        Ok(Claims::introspected(
            self.issuer.issuer.clone(),
            granted.subject.clone(),
            granted.scopes.clone(),
        ))
    }

    fn cached(&self, hash: &TokenHash) -> Option<Result<Arc<Granted>, &'static str>> {
        let cache = self.cache.lock_unpoisoned();
        let entry = cache.get(hash)?;
        (entry.until > Instant::now()).then(|| entry.verdict.clone())
    }

    /// Asks the endpoint about `token` and caches the verdict.
    async fn introspect(
        &self,
        token: &str,
        hash: TokenHash,
    ) -> Result<Result<Arc<Granted>, &'static str>, IntrospectionError> {
        let endpoint = self.endpoint().await?;
        let body = form(&[("token", token), ("token_type_hint", "access_token")]);
        let (status, body) = self
            .issuer
            .post_form(&endpoint, (&self.client_id, &self.client_secret), body)
            .await?;
        let verdict = if status.is_success() {
            let answer = json(&endpoint, &body)?;
            read_answer(&answer, &self.issuer.issuer, &self.audience).map(Arc::new)
        } else {
            let code = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|b| b.get("error").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_default();
            if code == "unsupported_token_type" {
                Err("the authorization server cannot introspect this kind of token")
            } else if matches!(status.as_u16(), 401 | 403) || code == "invalid_client" {
                let e = IntrospectionError::Credentials {
                    status: status.as_u16(),
                    code: if code.is_empty() {
                        String::new()
                    } else {
                        format!(", {}", code.chars().take(40).collect::<String>())
                    },
                };
                if self.log_refusal_now() {
                    tracing::error!(error = %e, endpoint = %endpoint, "token introspection failed");
                } else {
                    tracing::debug!(error = %e, endpoint = %endpoint, "token introspection failed");
                }
                return Err(e);
            } else {
                return Err(IntrospectionError::Unavailable(format!(
                    "{endpoint}: HTTP {}",
                    status.as_u16()
                )));
            }
        };
        tracing::debug!(active = verdict.is_ok(), "introspected an access token");
        self.remember(hash, verdict.clone());
        Ok(verdict)
    }

    /// Whether refused credentials are to be logged as an error now: the
    /// first time, then once per [`REFUSAL_LOG_EVERY`].
    fn log_refusal_now(&self) -> bool {
        let mut last = self.refusal_logged.lock_unpoisoned();
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < REFUSAL_LOG_EVERY) {
            return false;
        }
        *last = Some(now);
        true
    }

    /// Caches `verdict` for [`CACHE_TTL`], never past the token's `exp`.
    fn remember(&self, hash: TokenHash, verdict: Result<Arc<Granted>, &'static str>) {
        let now = Instant::now();
        let mut ttl = CACHE_TTL;
        if let Ok(granted) = &verdict
            && let Some(exp) = granted.exp
        {
            let left = exp
                .saturating_add(self.skew.as_secs())
                .saturating_sub(unix_now());
            ttl = ttl.min(Duration::from_secs(left));
        }
        let mut cache = self.cache.lock_unpoisoned();
        if cache.len() >= MAX_CACHED && !cache.contains_key(&hash) {
            cache.retain(|_, e| e.until > now);
            if cache.len() >= MAX_CACHED
                && let Some(oldest) = cache.iter().min_by_key(|(_, e)| e.until).map(|(k, _)| *k)
            {
                cache.remove(&oldest);
            }
        }
        cache.insert(
            hash,
            Entry {
                verdict,
                until: now + ttl,
            },
        );
    }

    /// The introspection endpoint: configured, else from the issuer's
    /// metadata (tried again at most once per [`MIN_REFETCH`]).
    async fn endpoint(&self) -> Result<Url, IntrospectionError> {
        if let Some(url) = self.endpoint.read_unpoisoned().clone() {
            return Ok(url);
        }
        let mut last_failure = self.discovering.lock().await;
        if let Some(url) = self.endpoint.read_unpoisoned().clone() {
            return Ok(url);
        }
        if last_failure.is_some_and(|t| t.elapsed() < MIN_REFETCH) {
            return Err(IntrospectionError::Unavailable(
                "finding the introspection endpoint failed moments ago".into(),
            ));
        }
        match self
            .issuer
            .discover("introspection_endpoint", "introspectionEndpoint")
            .await
        {
            Ok(url) => {
                *self.endpoint.write_unpoisoned() = Some(url.clone());
                Ok(url)
            }
            Err(e) => {
                *last_failure = Some(Instant::now());
                tracing::warn!(error = %e, "could not find the authorization server's introspection endpoint");
                Err(e.into())
            }
        }
    }
}

impl std::fmt::Debug for Introspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspector")
            .field("issuer", &self.issuer.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// Seconds since the epoch.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISS: &str = "https://idp.example";
    const AUD: &str = "https://agents.example/mcp";

    /// An introspector for [`ISS`] and [`AUD`] with client `rs`'s `secret`.
    fn introspector(secret: &str) -> Introspector {
        Introspector::new(
            Arc::new(Issuer::new(ISS.into())),
            AUD.into(),
            Duration::ZERO,
            ("rs".into(), secret.into()),
            None,
        )
    }

    #[test]
    fn the_cache_is_bounded_and_never_outlives_exp() {
        let i = introspector("s3cr3t-val");
        let granted = |exp: u64| {
            let answer = serde_json::json!({"active": true, "aud": AUD, "sub": "alice"});
            let mut g = read_answer(&answer, ISS, AUD).unwrap();
            g.exp = Some(exp);
            Ok(Arc::new(g))
        };
        i.remember([1; 32], granted(unix_now() + 3600));
        assert!(i.cached(&[1; 32]).is_some());
        // Expired by now: not kept.
        i.remember([2; 32], granted(unix_now().saturating_sub(1)));
        assert!(i.cached(&[2; 32]).is_none());
        i.remember([3; 32], Err("the token is not active (introspection)"));
        assert_eq!(
            i.cached(&[3; 32]),
            Some(Err("the token is not active (introspection)"))
        );
        for n in 0..MAX_CACHED + 10 {
            let mut key = [0; 32];
            key[..8].copy_from_slice(&(n as u64).to_le_bytes());
            key[31] = 9;
            i.remember(key, Err("x"));
        }
        assert_eq!(i.cache.lock_unpoisoned().len(), MAX_CACHED);
        assert!(!format!("{i:?}").contains("s3cr3t"), "{i:?}");
    }

    #[test]
    fn refused_credentials_are_logged_as_an_error_once_a_minute() {
        let i = introspector("secret");
        assert!(i.log_refusal_now(), "the first refusal is logged");
        assert!(
            !i.log_refusal_now(),
            "the next ones within a minute are not"
        );
        *i.refusal_logged.lock_unpoisoned() = Instant::now().checked_sub(REFUSAL_LOG_EVERY);
        assert!(i.log_refusal_now(), "a minute later it is logged again");
    }
}
