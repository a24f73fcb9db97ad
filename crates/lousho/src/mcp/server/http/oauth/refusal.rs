//! What a checked access token gives ([`Claims`]) and why one is refused
//! ([`Refused`]), for JWTs ([`verify`](super::verify)) and introspected
//! opaque tokens ([`introspect`](super::introspect)) alike.

use super::issuer::FetchError;
use super::keys::KeysError;
use serde::Deserialize;
use std::collections::BTreeSet;

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
    /// The claims an introspection answer gave.
    pub(super) fn introspected(iss: String, sub: String, scopes: BTreeSet<String>) -> Self {
        let scope = scopes.into_iter().collect::<Vec<_>>().join(" ");
        Self {
            iss,
            sub,
            scope: Some(scope),
            scp: None,
        }
    }

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
    /// The issuer could not introspect the token: it cannot be checked now.
    #[error(transparent)]
    Introspection(#[from] IntrospectionError),
}

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
