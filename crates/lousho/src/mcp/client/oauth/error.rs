use super::store::TokenStoreError;
use crate::error_chain::error_chain;
use std::sync::Arc;
use std::time::Duration;

/// Why an OAuth sign-in or sign-out failed. Messages never hold tokens,
/// codes or secrets.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The entry has no `oauth` settings.
    #[error(
        "the server entry has no `oauth` settings; add `oauth: {{ redirectUri: \"http://127.0.0.1:8765/callback\" }}` to it"
    )]
    NotConfigured,
    /// The `oauth` settings do not fit together (e.g. `grant:
    /// client_credentials` without `clientId`).
    #[error("invalid `oauth` settings: {0}")]
    InvalidSettings(String),
    /// OAuth is for HTTP entries.
    #[error("OAuth sign-in is only for HTTP servers (entries with `url`)")]
    NotHttp,
    /// `oauth.redirectUri` is missing.
    #[error(
        "`oauth.redirectUri` is missing; set it to a loopback URL such as http://127.0.0.1:8765/callback and register that URL with the authorization server if it needs pre-registration"
    )]
    MissingRedirectUri,
    /// The redirect URI cannot be listened on.
    #[error("`oauth.redirectUri` `{uri}` {reason}")]
    RedirectUri {
        /// The configured URI.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Discovery, registration, authorization or the code exchange failed.
    #[error("signing in to {server_url} failed: {}", error_chain(source.as_ref()))]
    SignIn {
        /// The MCP server's URL.
        server_url: String,
        /// What went wrong (the HTTP, OAuth or store error, with its sources).
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
    },
    /// The authorization server sent an error back instead of a code.
    #[error(
        "the authorization was not granted: {0}; run the sign-in again and approve the request"
    )]
    Denied(String),
    /// The redirect back to us could not be used.
    #[error("the authorization redirect could not be used: {0}")]
    Callback(String),
    /// Nobody completed the authorization in time.
    #[error("nobody completed the authorization within {0:?}; run the sign-in again")]
    Timeout(Duration),
    /// The token store failed.
    #[error(transparent)]
    Store(#[from] TokenStoreError),
}

impl OAuthError {
    /// A failed sign-in at `server_url` because of `source` (an error, or a
    /// sentence when nothing failed below us).
    pub(crate) fn sign_in(
        server_url: &str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        OAuthError::SignIn {
            server_url: server_url.to_owned(),
            source: Arc::from(source.into()),
        }
    }
}
