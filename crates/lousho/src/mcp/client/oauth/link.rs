//! One OAuth server's credentials as its connection uses them: the
//! `AuthClient` rmcp's transport sends requests through (it adds the bearer
//! token, refreshes before expiry and once after a 401, and saves refreshed
//! tokens to the store), plus sign-in and step-up when an
//! [`Authorizer`] is available.

use super::MAX_AUTHORIZATIONS;
use super::error::OAuthError;
use super::flow::{self, Authorizer};
use super::machine::MachineGrant;
use super::store::TokenStore;
use crate::mcp::client::config::{McpServer, McpTransport, OAuthGrant, OAuthSettings};
use crate::mcp::client::http::Pooled;
use crate::mcp::client::http::SetupError;
use rmcp::transport::auth::AuthClient;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// Why a connection cannot get a usable client.
pub(crate) enum LinkError {
    /// `tokens` was not passed to `connect_mcp`.
    NoStore,
    /// Nobody is signed in (or the grant is unusable).
    NeedsAuth,
    /// Discovery or the store failed.
    Failed(OAuthError),
    /// The HTTP transport could not be set up.
    Setup(SetupError),
}

pub(crate) struct OAuthLink {
    url: String,
    settings: OAuthSettings,
    store: Option<Arc<dyn TokenStore>>,
    authorizer: Option<Arc<dyn Authorizer>>,
    client: tokio::sync::Mutex<Option<AuthClient<Pooled>>>,
    authorizations: AtomicU32,
    /// `client_credentials` / `enterprise_managed`: fetches tokens itself.
    machine: Option<Arc<MachineGrant>>,
}

impl OAuthLink {
    /// The link of an `oauth` HTTP entry.
    pub(crate) fn for_entry(
        entry: &McpServer,
        tokens: Option<Arc<dyn TokenStore>>,
        authorizer: Option<Arc<dyn Authorizer>>,
    ) -> Option<Self> {
        match (&entry.transport, &entry.oauth) {
            (McpTransport::Http(http), Some(settings)) => Some(Self::new(
                http.url.clone(),
                settings.clone(),
                tokens,
                authorizer,
            )),
            _ => None,
        }
    }

    pub(crate) fn new(
        url: String,
        settings: OAuthSettings,
        store: Option<Arc<dyn TokenStore>>,
        authorizer: Option<Arc<dyn Authorizer>>,
    ) -> Self {
        let store = store.map(|s| super::keyed::keyed(s, &settings));
        let machine = match (settings.grant, &store) {
            (OAuthGrant::AuthorizationCode, _) | (_, None) => None,
            (_, Some(store)) => Some(Arc::new(MachineGrant::new(
                url.clone(),
                settings.clone(),
                store.clone(),
            ))),
        };
        Self {
            url,
            settings,
            store,
            authorizer,
            client: tokio::sync::Mutex::new(None),
            authorizations: AtomicU32::new(0),
            machine,
        }
    }

    pub(crate) fn has_store(&self) -> bool {
        self.store.is_some()
    }

    /// The client for a new transport: the stored grant, or (with an
    /// authorizer) an unauthenticated one whose 401 starts a sign-in.
    pub(crate) async fn client(&self) -> Result<AuthClient<Pooled>, LinkError> {
        let store = self.store.as_ref().ok_or(LinkError::NoStore)?;
        let mut slot = self.client.lock().await;
        if let Some(client) = slot.as_ref() {
            return Ok(client.clone());
        }
        let http = crate::mcp::client::http::shared_client()
            .map(Pooled)
            .map_err(|e| LinkError::Failed(OAuthError::sign_in(&self.url, e)))?;
        self.settings
            .check()
            .map_err(|e| LinkError::Failed(OAuthError::InvalidSettings(e.to_string())))?;
        if let Some(machine) = &self.machine {
            let manager = machine
                .transport_manager()
                .await
                .map_err(LinkError::Failed)?;
            let client = AuthClient::new(http, manager);
            *slot = Some(client.clone());
            return Ok(client);
        }
        let mut manager = flow::manager(&self.url, store)
            .await
            .map_err(LinkError::Failed)?;
        let restored = flow::restore(&mut manager, &self.url, &self.settings)
            .await
            .map_err(LinkError::Failed)?;
        if !restored && self.authorizer.is_none() {
            return Err(LinkError::NeedsAuth);
        }
        let client = AuthClient::new(http, manager);
        *slot = Some(client.clone());
        Ok(client)
    }

    /// Reacts to a 401/403 challenge: signs in (or steps up the scope) when
    /// an authorizer is available and the attempts are not used up. True when
    /// the request should be retried.
    pub(crate) async fn answer_challenge(&self, challenge: &str) -> Result<bool, OAuthError> {
        if let Some(machine) = &self.machine {
            return self
                .answer_with_client_credentials(machine, challenge)
                .await;
        }
        let (Some(authorizer), Some(store)) = (&self.authorizer, &self.store) else {
            return Ok(false);
        };
        if self.authorizations.fetch_add(1, Ordering::SeqCst) >= MAX_AUTHORIZATIONS {
            tracing::warn!(url = %self.url, "giving up after {MAX_AUTHORIZATIONS} authorizations");
            return Ok(false);
        }
        let client = self.client.lock().await.clone();
        let signed_in = match &client {
            Some(c) => c.auth_manager.lock().await.get_access_token().await.is_ok(),
            None => false,
        };
        if let Some(client) = client
            .as_ref()
            .filter(|_| signed_in && flow::is_insufficient_scope(challenge, &self.url))
        {
            let manager = client.auth_manager.lock().await;
            flow::step_up(&manager, &self.url, challenge, authorizer.as_ref()).await?;
            return Ok(true);
        }
        let manager = flow::authorize(
            &self.url,
            &self.settings,
            store,
            Some(challenge),
            authorizer.as_ref(),
        )
        .await?;
        match client {
            Some(c) => *c.auth_manager.lock().await = manager,
            None => {
                let http = crate::mcp::client::http::shared_client()
                    .map(Pooled)
                    .map_err(|e| OAuthError::sign_in(&self.url, e))?;
                *self.client.lock().await = Some(AuthClient::new(http, manager));
            }
        }
        Ok(true)
    }

    /// `client_credentials` / `enterprise_managed`: a rejected token is
    /// replaced by a new one (at most [`MAX_AUTHORIZATIONS`] times a minute);
    /// more scope cannot be granted by a new fetch, so that is a settings
    /// error.
    async fn answer_with_client_credentials(
        &self,
        machine: &MachineGrant,
        challenge: &str,
    ) -> Result<bool, OAuthError> {
        if flow::is_insufficient_scope(challenge, &self.url) {
            let base = reqwest::Url::parse(&self.url).ok();
            let wanted = base
                .and_then(|b| {
                    rmcp::transport::auth::WWWAuthenticateParams::parse(challenge, &b).scope
                })
                .unwrap_or_default();
            return Err(OAuthError::InvalidSettings(format!(
                "the server needs more scope (`{wanted}`) than the token has; add it to `oauth.scopes`"
            )));
        }
        if !machine.may_refetch_after_rejection() {
            return self.give_up();
        }
        machine.ensure_token(true).await?;
        Ok(true)
    }

    /// A tool call's 401/403 challenge, on the call's `attempt`-th try:
    /// true when the call should be made again (signed in, stepped up, a
    /// fresh token), false when an operator must sign in.
    pub(crate) async fn answer_call_challenge(
        &self,
        challenge: &str,
        attempt: u32,
    ) -> Result<bool, OAuthError> {
        if attempt > MAX_AUTHORIZATIONS {
            self.give_up()
        } else {
            self.answer_challenge(challenge).await
        }
    }

    /// The attempts are used up: `Ok(false)` (the status becomes
    /// `NeedsAuth`) when an operator can help by signing in again; an error
    /// for the grants without an operator, where no sign-in would.
    pub(crate) fn give_up(&self) -> Result<bool, OAuthError> {
        if self.machine.is_none() {
            return Ok(false);
        }
        Err(OAuthError::sign_in(
            &self.url,
            format!(
                "the server rejected {MAX_AUTHORIZATIONS} fresh tokens within a minute; check that the client may use this server"
            ),
        ))
    }

    /// Forgets the in-memory client (after the grant proved unusable), so the
    /// next connect reads the store again.
    pub(crate) async fn reset(&self) {
        *self.client.lock().await = None;
    }

    /// A new connect may authorize again.
    pub(crate) fn reset_attempts(&self) {
        self.authorizations.store(0, Ordering::SeqCst);
    }
}

/// The `WWW-Authenticate` challenge of a 401/403 somewhere in an error chain.
pub(crate) fn challenge_of(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    crate::error_chain::sources(e).find_map(|current| {
        if let Some(a) = current.downcast_ref::<AuthRequiredError>() {
            return Some(a.www_authenticate_header.clone());
        }
        current
            .downcast_ref::<InsufficientScopeError>()
            .map(|s| s.www_authenticate_header.clone())
    })
}
