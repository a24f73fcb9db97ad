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

use super::issuer::{FetchError, Issuer, form, json};
use super::keys::MIN_REFETCH;
use super::verify::{Claims, Refused};
use crate::sync::{MutexExt, RwLockExt};
use reqwest::Url;
use serde_json::Value;
use sha2::Digest as _;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The longest an introspection answer is used.
pub(super) const CACHE_TTL: Duration = Duration::from_secs(60);
/// The most tokens whose answers are cached.
pub(super) const MAX_CACHED: usize = 4096;
/// The longest opaque token sent to the authorization server.
pub(super) const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// Why a token could not be introspected (the server answers `503`). The
/// texts never hold the token or the client secret.
#[derive(Debug, thiserror::Error)]
pub(super) enum IntrospectionError {
    /// The endpoint could not be found, reached or read.
    #[error("cannot introspect the token: {0}")]
    Unavailable(String),
    /// The authorization server refused this server's client credentials.
    #[error(
        "the authorization server refused this server's introspection credentials (HTTP {status}{code}): check the client id and secret of `serve.auth.introspection` (OAuthResource::introspection) and that the client may introspect tokens"
    )]
    Credentials {
        /// The HTTP status.
        status: u16,
        /// `, invalid_client` or nothing.
        code: String,
    },
}

impl From<FetchError> for IntrospectionError {
    fn from(e: FetchError) -> Self {
        Self::Unavailable(e.0)
    }
}

/// What an active introspection answer grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Granted {
    pub(super) subject: String,
    pub(super) scopes: BTreeSet<String>,
    exp: Option<u64>,
    nbf: Option<u64>,
}

impl Granted {
    /// Refused if, `now`, the token has expired or is not valid yet, give
    /// or take `skew` seconds.
    pub(super) fn live(&self, now: u64, skew: u64) -> Result<(), &'static str> {
        if self.exp.is_some_and(|exp| exp.saturating_add(skew) < now) {
            return Err("the token has expired");
        }
        if self.nbf.is_some_and(|nbf| nbf > now.saturating_add(skew)) {
            return Err("the token is not valid yet (nbf)");
        }
        Ok(())
    }
}

/// An introspection `answer` read against this issuer and audience (the
/// time is checked apart, by [`Granted::live`], on every use).
pub(super) fn read_answer(
    answer: &Value,
    issuer: &str,
    audience: &str,
) -> Result<Granted, &'static str> {
    const MALFORMED: &str = "the introspection answer is malformed";
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err("the token is not active (introspection)");
    }
    match answer.get("iss") {
        None | Some(Value::Null) => {}
        Some(Value::String(iss)) if iss == issuer => {}
        Some(Value::String(_)) => return Err("the token is from another issuer (iss)"),
        Some(_) => return Err(MALFORMED),
    }
    let for_us = match answer.get("aud") {
        Some(Value::String(aud)) => aud == audience,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(audience)),
        None | Some(Value::Null) => return Err("the introspection answer names no audience (aud)"),
        Some(_) => return Err(MALFORMED),
    };
    if !for_us {
        return Err("the token was not issued for this server (aud)");
    }
    if let Some(kind) = answer.get("token_type").and_then(Value::as_str)
        && !kind.eq_ignore_ascii_case("bearer")
        && kind != "access_token"
    {
        return Err("the token is not a bearer access token (token_type)");
    }
    if answer.get("cnf").is_some_and(|c| !c.is_null()) {
        return Err("the token is bound to a key (cnf); this server accepts bearer tokens only");
    }
    let named = |key: &str| {
        answer
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let subject = named("sub")
        .or_else(|| named("client_id"))
        .ok_or("the introspection answer names no subject (sub or client_id)")?;
    let scopes = match answer.get("scope") {
        None | Some(Value::Null) => BTreeSet::new(),
        Some(Value::String(s)) => s.split_ascii_whitespace().map(str::to_owned).collect(),
        Some(_) => return Err(MALFORMED),
    };
    let time = |key: &str| match answer.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .map(Some)
            .ok_or(MALFORMED),
    };
    Ok(Granted {
        subject: subject.to_owned(),
        scopes,
        exp: time("exp")?,
        nbf: time("nbf")?,
    })
}

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
}

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
                tracing::error!(error = %e, endpoint = %endpoint, "token introspection failed");
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
    use serde_json::json;

    const ISS: &str = "https://idp.example";
    const AUD: &str = "https://agents.example/mcp";
    const NOW: u64 = 1_800_000_000;
    const SKEW: u64 = 30;

    /// An answer the issuer gives for a good token, with `change` applied.
    fn answer(change: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
        let mut a = json!({
            "active": true, "iss": ISS, "aud": AUD, "sub": "alice", "client_id": "app",
            "scope": "mcp:use mcp:research", "exp": NOW + 300, "iat": NOW, "token_type": "Bearer",
        });
        change(a.as_object_mut().unwrap());
        a
    }

    fn verdict(answer: &Value) -> Result<Granted, &'static str> {
        let granted = read_answer(answer, ISS, AUD)?;
        granted.live(NOW, SKEW)?;
        Ok(granted)
    }

    #[test]
    fn an_active_answer_for_this_audience_names_the_caller_and_scopes() {
        let g = verdict(&answer(|_| {})).unwrap();
        assert_eq!(g.subject, "alice");
        assert_eq!(
            g.scopes.into_iter().collect::<Vec<_>>(),
            ["mcp:research", "mcp:use"]
        );
    }

    #[test]
    fn the_claim_checks_refuse_what_they_should() {
        // (case, change, the refusal's words)
        type Change = fn(&mut serde_json::Map<String, Value>);
        let cases: Vec<(&str, Change, &str)> = vec![
            (
                "inactive",
                |a| {
                    a.insert("active".into(), json!(false));
                },
                "not active",
            ),
            (
                "active as a string",
                |a| {
                    a.insert("active".into(), json!("true"));
                },
                "not active",
            ),
            (
                "only active: false",
                |a| {
                    a.clear();
                    a.insert("active".into(), json!(false));
                },
                "not active",
            ),
            (
                "exp past",
                |a| {
                    a.insert("exp".into(), json!(NOW - SKEW - 1));
                },
                "expired",
            ),
            (
                "nbf future",
                |a| {
                    a.insert("nbf".into(), json!(NOW + SKEW + 1));
                },
                "not valid yet",
            ),
            (
                "another issuer",
                |a| {
                    a.insert("iss".into(), json!("https://evil.example"));
                },
                "another issuer",
            ),
            (
                "another audience",
                |a| {
                    a.insert("aud".into(), json!("https://other.example/mcp"));
                },
                "not issued for this server",
            ),
            (
                "audiences without ours",
                |a| {
                    a.insert(
                        "aud".into(),
                        json!(["https://x.example", "https://y.example"]),
                    );
                },
                "not issued for this server",
            ),
            (
                "no audience",
                |a| {
                    a.remove("aud");
                },
                "no audience",
            ),
            (
                "no sub, no client_id",
                |a| {
                    a.remove("sub");
                    a.remove("client_id");
                },
                "no subject",
            ),
            (
                "empty sub, no client_id",
                |a| {
                    a.insert("sub".into(), json!(""));
                    a.remove("client_id");
                },
                "no subject",
            ),
            (
                "a refresh token",
                |a| {
                    a.insert("token_type".into(), json!("refresh_token"));
                },
                "not a bearer",
            ),
            (
                "DPoP-bound",
                |a| {
                    a.insert("cnf".into(), json!({"jkt": "x"}));
                },
                "bound to a key",
            ),
            (
                "scope not a string",
                |a| {
                    a.insert("scope".into(), json!(["a"]));
                },
                "malformed",
            ),
            (
                "exp not a number",
                |a| {
                    a.insert("exp".into(), json!("soon"));
                },
                "malformed",
            ),
        ];
        for (case, change, words) in cases {
            let refused = verdict(&answer(change)).expect_err(case);
            assert!(refused.contains(words), "{case}: {refused}");
        }
    }

    #[test]
    fn the_cache_is_bounded_and_never_outlives_exp() {
        let i = Introspector::new(
            Arc::new(Issuer::new(ISS.into())),
            AUD.into(),
            Duration::ZERO,
            ("rs".into(), "s3cr3t-val".into()),
            None,
        );
        let granted = |exp: u64| {
            let mut g = read_answer(&answer(|_| {}), ISS, AUD).unwrap();
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
    fn lenient_where_rfc_7662_is() {
        // (case, change, the subject named)
        type Change = fn(&mut serde_json::Map<String, Value>);
        let cases: Vec<(&str, Change, &str)> = vec![
            (
                "aud array with ours",
                |a| {
                    a.insert("aud".into(), json!(["https://x.example", AUD]));
                },
                "alice",
            ),
            (
                "no sub: client_id names it",
                |a| {
                    a.remove("sub");
                },
                "app",
            ),
            (
                "no iss",
                |a| {
                    a.remove("iss");
                },
                "alice",
            ),
            (
                "no exp",
                |a| {
                    a.remove("exp");
                },
                "alice",
            ),
            (
                "exp within the skew",
                |a| {
                    a.insert("exp".into(), json!(NOW - SKEW));
                },
                "alice",
            ),
            (
                "nbf within the skew",
                |a| {
                    a.insert("nbf".into(), json!(NOW + SKEW));
                },
                "alice",
            ),
            (
                "no token_type",
                |a| {
                    a.remove("token_type");
                },
                "alice",
            ),
            (
                "no scope",
                |a| {
                    a.remove("scope");
                },
                "alice",
            ),
            (
                "cnf null",
                |a| {
                    a.insert("cnf".into(), Value::Null);
                },
                "alice",
            ),
        ];
        for (case, change, subject) in cases {
            let g = verdict(&answer(change)).unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(g.subject, subject, "{case}");
        }
    }
}
