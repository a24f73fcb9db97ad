//! One access token checked: a JWT (RFC 9068) signed by one of the issuer's
//! public keys with an asymmetric algorithm (`none` and `HS*` are refused),
//! for this audience, from this issuer, within `nbf`..`exp` give or take the
//! clock skew, naming a subject. With introspection configured, a token
//! that is not shaped like a signed JWT goes to the issuer's introspection
//! endpoint instead ([`Introspector`]).

use super::introspect::Introspector;
use super::keys::{Key, KeyCache};
use super::refusal::{Claims, Refused};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, AlgorithmFamily, Validation};
use std::time::Duration;

/// Checks tokens for one issuer and audience.
pub(super) struct Verifier {
    pub(super) issuer: String,
    pub(super) audience: String,
    pub(super) skew: Duration,
    pub(super) keys: KeyCache,
    /// For opaque tokens, when introspection is configured.
    pub(super) introspector: Option<Introspector>,
}

impl Verifier {
    /// The claims of `token`, if it is valid here.
    pub(super) async fn verify(&self, token: &str) -> Result<Claims, Refused> {
        if let Some(introspector) = &self.introspector
            && !is_jws_shaped(token)
        {
            return introspector.check(token).await;
        }
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

/// Whether `token` looks like a signed JWT (JWS compact form): three parts,
/// the first a base64url JSON object naming an `alg`. Such a token is
/// checked against the issuer's keys and refused if that fails — never
/// introspected; anything else (an opaque token, an encrypted JWT) is
/// introspected when introspection is configured.
fn is_jws_shaped(token: &str) -> bool {
    use base64::Engine as _;
    let mut parts = token.split('.');
    let (Some(header), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header.trim_end_matches('='))
        .ok()
        .and_then(|h| serde_json::from_slice::<serde_json::Value>(&h).ok())
        .is_some_and(|h| h.get("alg").is_some())
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

    #[test]
    fn only_jws_shaped_tokens_skip_introspection() {
        // {"alg":"RS256"} and {"alg":"none"}: JWTs, checked against the keys.
        assert!(is_jws_shaped("eyJhbGciOiJSUzI1NiJ9.e30.c2ln"));
        assert!(is_jws_shaped("eyJhbGciOiJub25lIn0.e30."));
        // Opaque tokens, a JWE (five parts), a header that is no JSON.
        assert!(!is_jws_shaped("2YotnFZFEjr1zCsicMWpAA"));
        assert!(!is_jws_shaped("a.b.c"));
        assert!(!is_jws_shaped("eyJhbGciOiJSU0EtT0FFUCJ9.k.iv.ct.tag"));
        assert!(!is_jws_shaped("e30.e30.c2ln"));
    }
}
