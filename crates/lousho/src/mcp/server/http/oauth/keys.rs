//! The issuer's signing keys: its JWKS, found through its metadata (RFC 8414,
//! else OpenID discovery), fetched on first use, kept an hour, fetched again
//! for a key id it does not hold — at most once per [`MIN_REFETCH`], so
//! tokens naming made-up key ids cannot make the server hammer the issuer —
//! and bounded ([`MAX_DOCUMENT_BYTES`](super::issuer::MAX_DOCUMENT_BYTES),
//! [`MAX_KEYS`]).

use super::issuer::{FetchError, Issuer};
use crate::sync::RwLockExt;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use reqwest::Url;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// The least time between two fetches of the JWKS (and of the metadata).
pub(super) const MIN_REFETCH: Duration = Duration::from_secs(10);
/// How long fetched keys are used before they are fetched again.
const MAX_AGE: Duration = Duration::from_secs(3600);
/// The most keys kept from one JWKS.
const MAX_KEYS: usize = 64;

/// A verifying key and the algorithm the JWKS pins it to, if any.
#[derive(Clone)]
pub(super) struct Key {
    pub(super) alg: Option<Algorithm>,
    pub(super) key: Arc<DecodingKey>,
}

/// The keys of one fetch.
#[derive(Default)]
struct Fetched {
    by_kid: HashMap<String, Key>,
    /// Keys without a `kid` (used only for tokens without one).
    unnamed: Vec<Key>,
    at: Option<Instant>,
}

/// Why no key could be had.
#[derive(Debug, thiserror::Error)]
pub(super) enum KeysError {
    /// The issuer's metadata or JWKS could not be fetched or read.
    #[error("cannot fetch the authorization server's keys: {0}")]
    Unavailable(String),
}

impl From<FetchError> for KeysError {
    fn from(e: FetchError) -> Self {
        Self::Unavailable(e.0)
    }
}

/// The issuer's keys, shared by all requests.
pub(super) struct KeyCache {
    issuer: Arc<Issuer>,
    jwks_uri: RwLock<Option<Url>>,
    fetched: RwLock<Arc<Fetched>>,
    /// Serialises fetches; holds when the last one was tried.
    fetching: tokio::sync::Mutex<Option<Instant>>,
}

impl KeyCache {
    /// Keys of `issuer`, from `jwks_uri` if given, else from its metadata.
    pub(super) fn new(issuer: Arc<Issuer>, jwks_uri: Option<Url>) -> Self {
        Self {
            issuer,
            jwks_uri: RwLock::new(jwks_uri),
            fetched: RwLock::new(Arc::new(Fetched::default())),
            fetching: tokio::sync::Mutex::new(None),
        }
    }

    /// The keys a token with this `kid` may be verified with (all unnamed
    /// keys when it has none). `Ok(empty)`: none, even after a fetch.
    pub(super) async fn keys_for(&self, kid: Option<&str>) -> Result<Vec<Key>, KeysError> {
        let current = self.fetched.read_unpoisoned().clone();
        let fresh = current.at.is_some_and(|at| at.elapsed() < MAX_AGE);
        let found = lookup(&current, kid);
        if fresh && !found.is_empty() {
            return Ok(found);
        }
        let mut last_try = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let current = self.fetched.read_unpoisoned().clone();
        let found = lookup(&current, kid);
        let fresh = current.at.is_some_and(|at| at.elapsed() < MAX_AGE);
        if fresh && !found.is_empty() {
            return Ok(found);
        }
        if last_try.is_some_and(|t| t.elapsed() < MIN_REFETCH) {
            if current.at.is_none() {
                return Err(KeysError::Unavailable(
                    "the last try failed moments ago".into(),
                ));
            }
            return Ok(found);
        }
        *last_try = Some(Instant::now());
        match self.fetch().await {
            Ok(fetched) => {
                let found = lookup(&fetched, kid);
                *self.fetched.write_unpoisoned() = Arc::new(fetched);
                Ok(found)
            }
            Err(e) if current.at.is_some() => {
                tracing::warn!(error = %e, "could not refresh the authorization server's keys; keeping the ones held");
                Ok(found)
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not fetch the authorization server's keys");
                Err(e)
            }
        }
    }

    async fn fetch(&self) -> Result<Fetched, KeysError> {
        let known = self.jwks_uri.read_unpoisoned().clone();
        let uri = match known {
            Some(uri) => uri,
            None => {
                let uri = self.issuer.discover("jwks_uri", "jwksUri").await?;
                *self.jwks_uri.write_unpoisoned() = Some(uri.clone());
                uri
            }
        };
        let set: serde_json::Value = self.issuer.get_json(uri.clone()).await?;
        let keys = set
            .get("keys")
            .and_then(|k| k.as_array())
            .ok_or_else(|| KeysError::Unavailable(format!("{uri} holds no `keys` array")))?;
        let mut fetched = Fetched {
            at: Some(Instant::now()),
            ..Fetched::default()
        };
        for value in keys.iter().take(MAX_KEYS) {
            let Ok(jwk) = serde_json::from_value::<Jwk>(value.clone()) else {
                continue;
            };
            let Some(key) = verifying_key(&jwk) else {
                continue;
            };
            match jwk.common.key_id {
                Some(kid) => {
                    fetched.by_kid.insert(kid, key);
                }
                None => fetched.unnamed.push(key),
            }
        }
        tracing::debug!(
            keys = fetched.by_kid.len() + fetched.unnamed.len(),
            jwks = %uri,
            "fetched the authorization server's keys"
        );
        Ok(fetched)
    }
}

/// The keys for `kid` in `fetched`.
fn lookup(fetched: &Fetched, kid: Option<&str>) -> Vec<Key> {
    match kid {
        Some(kid) => fetched.by_kid.get(kid).cloned().into_iter().collect(),
        None => fetched.unnamed.clone(),
    }
}

/// A public key of the JWKS (symmetric keys and keys for encryption are
/// left out: a resource server never shares a secret with the issuer here).
fn verifying_key(jwk: &Jwk) -> Option<Key> {
    use jsonwebtoken::jwk::PublicKeyUse;
    if matches!(
        jwk.common.public_key_use,
        Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
    ) {
        return None;
    }
    let key = DecodingKey::from_jwk(jwk).ok()?;
    if key.family() == jsonwebtoken::AlgorithmFamily::Hmac {
        return None;
    }
    let alg = jwk
        .common
        .key_algorithm
        .and_then(|a| Algorithm::try_from(a).ok());
    Some(Key {
        alg,
        key: Arc::new(key),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_keys_are_never_used() {
        let jwk: Jwk = serde_json::from_value(serde_json::json!({
            "kty": "oct", "kid": "s", "k": "c2VjcmV0"
        }))
        .unwrap();
        assert!(verifying_key(&jwk).is_none());
    }
}
