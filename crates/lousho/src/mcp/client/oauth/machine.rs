//! The grants without an operator: `client_credentials` (machine to
//! machine, SEP-1046) and `enterprise_managed` (SEP-990, see
//! [`enterprise`](super::enterprise)). The connection discovers the
//! authorization server (as for a sign-in), gets a token itself
//! (`client_secret_basic` / `client_secret_post` with `clientSecret`, or a
//! `private_key_jwt` assertion signed with the configured key) and keeps it
//! in the token store.
//!
//! The transport's credential store is [`MachineCredentials`]: every read
//! first makes sure a token with some life left is stored, fetching a new one
//! when it is missing or about to expire. A token the server rejects (401)
//! is replaced by a fresh fetch through
//! [`OAuthLink::answer_challenge`](super::link::OAuthLink::answer_challenge).
//! These tokens are never refreshed with a refresh token: fetching anew is
//! what the grants are for.

use super::error::OAuthError;
use super::flow::{self, sign_in_error};
use super::store::{ServerCredentials, StoredToken, TokenStore};
use super::token_request::{ClientAuth, TokenRequest, request_token};
use crate::mcp::client::config::{OAuthGrant, OAuthSettings};
use crate::sync::MutexExt;
use async_trait::async_trait;
use oauth2::TokenResponse as _;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, CredentialStore, StoredCredentials,
};
use std::sync::Arc;
use std::time::Duration;

/// A token with less life left than this is replaced before it is used
/// (half its lifetime for short-lived tokens).
const REFETCH_MARGIN: Duration = Duration::from_secs(60);

/// Tokens fetched again because the server rejected them: at most
/// [`MAX_AUTHORIZATIONS`](super::MAX_AUTHORIZATIONS) within this window
/// (a server that rejects every token is not hammered; a long session
/// survives the odd revocation).
const REJECTION_WINDOW: Duration = Duration::from_secs(60);

/// Fetches tokens for one server without an operator: the
/// `client_credentials` grant, or enterprise-managed authorization.
pub(crate) struct MachineGrant {
    url: String,
    settings: OAuthSettings,
    store: Arc<dyn TokenStore>,
    /// The discovered authorization server's metadata; one fetch at a time.
    fetcher: tokio::sync::Mutex<Option<AuthorizationMetadata>>,
    /// When tokens were fetched again after a rejection.
    rejections: std::sync::Mutex<std::collections::VecDeque<std::time::Instant>>,
}

impl MachineGrant {
    pub(crate) fn new(url: String, settings: OAuthSettings, store: Arc<dyn TokenStore>) -> Self {
        Self {
            url,
            settings,
            store,
            fetcher: tokio::sync::Mutex::new(None),
            rejections: std::sync::Mutex::default(),
        }
    }

    /// Whether another token may be fetched after the server rejected one
    /// (and records it when so).
    pub(crate) fn may_refetch_after_rejection(&self) -> bool {
        let now = std::time::Instant::now();
        let mut recent = self.rejections.lock_unpoisoned();
        while recent
            .front()
            .is_some_and(|t| now.duration_since(*t) > REJECTION_WINDOW)
        {
            recent.pop_front();
        }
        if recent.len() >= super::MAX_AUTHORIZATIONS as usize {
            return false;
        }
        recent.push_back(now);
        true
    }

    fn client_id(&self) -> &str {
        self.settings.client_id.as_deref().unwrap_or_default()
    }

    /// Makes sure the store holds a token with life left (`force`: a new one
    /// whatever is stored) and returns the authorization server's metadata.
    pub(crate) async fn ensure_token(
        &self,
        force: bool,
    ) -> Result<AuthorizationMetadata, OAuthError> {
        let mut fetcher = self.fetcher.lock().await;
        // Discovered once per connection; after a failed request, again (the
        // authorization server may have moved).
        let metadata = match fetcher.take() {
            Some(metadata) => metadata,
            None => self.discover().await?,
        };
        if !force && self.stored_is_fresh().await? {
            *fetcher = Some(metadata.clone());
            return Ok(metadata);
        }
        let token = self.fetch(&metadata).await?;
        let scopes = token
            .scopes()
            .map(|s| s.iter().map(|s| s.to_string()).collect())
            .unwrap_or_else(|| self.settings.scopes.clone());
        let stored = StoredCredentials::new(
            self.client_id().to_owned(),
            Some(token),
            scopes,
            Some(now_secs()),
        )
        .with_issuer(metadata.issuer.clone());
        self.store.save(&self.url, StoredToken(stored)).await?;
        tracing::debug!(url = %self.url, grant = ?self.settings.grant, "fetched an access token without an operator");
        *fetcher = Some(metadata.clone());
        Ok(metadata)
    }

    /// One token: the grant's request(s).
    async fn fetch(
        &self,
        metadata: &AuthorizationMetadata,
    ) -> Result<rmcp::transport::auth::OAuthTokenResponse, OAuthError> {
        if self.settings.grant == OAuthGrant::EnterpriseManaged {
            return super::enterprise::exchange(&self.url, metadata, &self.settings).await;
        }
        let key = match (
            &self.settings.private_key_pem,
            &self.settings.private_key_file,
        ) {
            (Some(pem), _) => Some(pem.clone().into_bytes()),
            (None, Some(path)) => Some(tokio::fs::read(path).await.map_err(|e| {
                OAuthError::InvalidSettings(format!(
                    "cannot read `privateKeyFile` {}: {e}",
                    path.display()
                ))
            })?),
            (None, None) => None,
        };
        let auth = match (&self.settings.client_secret, &key) {
            (Some(secret), _) => ClientAuth::Secret(secret),
            (None, Some(pem)) => ClientAuth::PrivateKeyJwt {
                pem,
                algorithm: self.settings.signing_algorithm.unwrap_or_default(),
            },
            (None, None) => {
                return Err(OAuthError::InvalidSettings(
                    "`grant: client_credentials` needs `clientSecret`, `privateKeyPem` or `privateKeyFile`".into(),
                ));
            }
        };
        let mut params = vec![
            ("grant_type", "client_credentials".to_owned()),
            // RFC 8707: the token is for this server.
            ("resource", self.url.clone()),
        ];
        if !self.settings.scopes.is_empty() {
            params.push(("scope", self.settings.scopes.join(" ")));
        }
        let request = TokenRequest {
            client_id: self.client_id(),
            auth,
            params,
        };
        request_token(&self.url, metadata, request)
            .await
            .map_err(|e| OAuthError::sign_in(&self.url, e))
    }

    /// Whether the stored token is ours and has more than the margin left.
    async fn stored_is_fresh(&self) -> Result<bool, OAuthError> {
        let Some(stored) = self.store.load(&self.url).await? else {
            return Ok(false);
        };
        Ok(stored.0.client_id == self.client_id() && has_life_left(&stored.0))
    }

    /// Finds the authorization server: the server's challenge, protected
    /// resource metadata, then authorization-server metadata (rmcp's
    /// discovery, with its issuer and resource checks).
    async fn discover(&self) -> Result<AuthorizationMetadata, OAuthError> {
        let store: Arc<dyn TokenStore> = self.store.clone();
        let manager = flow::manager(&self.url, &store).await?;
        let challenge = flow::probe_challenge(&self.url).await;
        let resolution = manager
            .resolve_metadata_from_challenge(challenge.as_deref())
            .await
            .map_err(|e| sign_in_error(&self.url, e))?;
        // The 2025-03-26 fallback guesses `/token` on the server's origin;
        // long-lived client credentials are not sent to a guessed endpoint.
        if !resolution.source.is_discovered() {
            return Err(OAuthError::sign_in(
                &self.url,
                "the server publishes no OAuth metadata (protected-resource or authorization-server); client credentials are only sent to a discovered token endpoint",
            ));
        }
        Ok(resolution.metadata)
    }

    /// The manager the transport's `AuthClient` uses: it reads tokens
    /// through [`MachineCredentials`] (which fetches them) and never
    /// refreshes (stored tokens are handed out without refresh tokens).
    pub(crate) async fn transport_manager(
        self: &Arc<Self>,
    ) -> Result<AuthorizationManager, OAuthError> {
        let metadata = self.ensure_token(false).await?;
        let mut manager = AuthorizationManager::new(self.url.as_str())
            .await
            .map_err(|e| sign_in_error(&self.url, e))?;
        manager.set_credential_store(MachineCredentials {
            grant: self.clone(),
        });
        manager.set_metadata(metadata);
        // A configured client, so a rejected token reads as "authorization
        // required" (no refresh token) rather than as an internal error.
        manager
            .configure_client_id(self.client_id())
            .map_err(|e| sign_in_error(&self.url, e))?;
        Ok(manager)
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// Whether a stored token exists and has more than the margin left (tokens
/// without an expiry count as fresh until the server rejects them).
fn has_life_left(stored: &StoredCredentials) -> bool {
    let Some(token) = &stored.token_response else {
        return false;
    };
    let (Some(lifetime), Some(received)) = (token.expires_in(), stored.token_received_at) else {
        return true;
    };
    let now = now_secs();
    let left = lifetime
        .as_secs()
        .saturating_sub(now.saturating_sub(received));
    left > REFETCH_MARGIN.as_secs().min(lifetime.as_secs() / 2)
}

/// The credential store of a connection without an operator: reads make
/// sure a fresh token is stored first.
struct MachineCredentials {
    grant: Arc<MachineGrant>,
}

fn store_error(e: OAuthError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait]
impl CredentialStore for MachineCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.grant.ensure_token(false).await.map_err(store_error)?;
        let inner = ServerCredentials {
            store: self.grant.store.clone(),
            url: self.grant.url.clone(),
        };
        Ok(inner.load().await?.map(|mut stored| {
            if let Some(token) = stored.token_response.as_mut() {
                token.set_refresh_token(None);
            }
            stored
        }))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.grant
            .store
            .save(&self.grant.url, StoredToken(credentials))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.grant
            .store
            .remove(&self.grant.url)
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }
}
