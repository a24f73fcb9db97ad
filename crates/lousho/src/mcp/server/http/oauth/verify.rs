//! One access token checked: a JWT (RFC 9068) signed by one of the issuer's
//! public keys with an asymmetric algorithm (`none` and `HS*` are refused),
//! for this audience, from this issuer, within `nbf`..`exp` give or take the
//! clock skew, naming a subject.

use super::keys::{Key, KeyCache, KeysError};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, AlgorithmFamily, Validation};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::time::Duration;

/// The claims lousho reads from an access token.
#[derive(Debug, Deserialize)]
pub(super) struct Claims {
    pub(super) iss: String,
    pub(super) sub: String,
    /// RFC 9068 / RFC 8693: space-separated.
    #[serde(default)]
    scope: Option<String>,
    /// Some issuers (Azure AD, Okta) put scopes in `scp`, as an array or a
    /// space-separated string.
    #[serde(default)]
    scp: Option<serde_json::Value>,
}

impl Claims {
    /// The scopes granted.
    pub(super) fn scopes(&self) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = self
            .scope
            .as_deref()
            .unwrap_or_default()
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect();
        match &self.scp {
            Some(serde_json::Value::String(s)) => {
                out.extend(s.split_ascii_whitespace().map(str::to_owned));
            }
            Some(serde_json::Value::Array(a)) => {
                out.extend(a.iter().filter_map(|v| v.as_str()).map(str::to_owned));
            }
            _ => {}
        }
        out
    }
}

/// Why a token was refused. The descriptions go into `error_description`,
/// so they are fixed ASCII texts and never quote the token.
#[derive(Debug, thiserror::Error)]
pub(super) enum Refused {
    /// The token is not valid (RFC 6750 `invalid_token`).
    #[error("{0}")]
    Invalid(&'static str),
    /// The issuer's keys could not be had: the token cannot be checked now.
    #[error(transparent)]
    Unavailable(#[from] KeysError),
}

/// Checks tokens for one issuer and audience.
pub(super) struct Verifier {
    pub(super) issuer: String,
    pub(super) audience: String,
    pub(super) skew: Duration,
    pub(super) keys: KeyCache,
}

impl Verifier {
    /// The claims of `token`, if it is valid here.
    pub(super) async fn verify(&self, token: &str) -> Result<Claims, Refused> {
        // `alg: none` (and any algorithm jsonwebtoken does not know) fails
        // here: it is no `Algorithm`.
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            Refused::Invalid("the token is not a JWT signed with a known algorithm")
        })?;
        if header.alg.family() == AlgorithmFamily::Hmac {
            return Err(Refused::Invalid(
                "the token is signed with a shared-secret algorithm (HS*); only the issuer's public keys are accepted",
            ));
        }
        let keys = self.keys.keys_for(header.kid.as_deref()).await?;
        let keys: Vec<&Key> = keys
            .iter()
            .filter(|k| k.alg.is_none_or(|a| a == header.alg))
            .filter(|k| k.key.family() == header.alg.family())
            .collect();
        if keys.is_empty() {
            return Err(Refused::Invalid(
                "the token's key id names no key of the issuer for its algorithm",
            ));
        }
        let validation = self.validation(header.alg);
        let mut last = Refused::Invalid("the token's signature does not verify");
        for key in keys {
            match jsonwebtoken::decode::<Claims>(token, &key.key, &validation) {
                Ok(data) => return Ok(data.claims),
                Err(e) => last = Refused::Invalid(describe(e.kind())),
            }
        }
        Err(last)
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut v = Validation::new(alg);
        v.set_issuer(&[&self.issuer]);
        v.set_audience(&[&self.audience]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.leeway = self.skew.as_secs();
        v.validate_exp = true;
        v.validate_nbf = true;
        v
    }
}

/// What a jsonwebtoken error means to the caller.
fn describe(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)",
        ErrorKind::InvalidAudience => "the token was not issued for this server (aud)",
        ErrorKind::InvalidIssuer => "the token is from another issuer (iss)",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::MissingRequiredClaim(_) => {
            "the token lacks a required claim (exp, iss, aud, sub)"
        }
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
            "the token's algorithm does not fit the issuer's key"
        }
        _ => "the token is malformed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_come_from_scope_and_scp() {
        let c: Claims = serde_json::from_value(serde_json::json!({
            "iss": "i", "sub": "s", "scope": "a b", "scp": ["c"]
        }))
        .unwrap();
        assert_eq!(c.scopes().into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        let c: Claims = serde_json::from_value(serde_json::json!({
            "iss": "i", "sub": "s", "scp": "d e"
        }))
        .unwrap();
        assert_eq!(c.scopes().len(), 2);
    }
}
