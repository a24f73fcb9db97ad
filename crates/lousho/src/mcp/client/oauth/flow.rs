//! The authorization-code flow: discovery (the server's `WWW-Authenticate`
//! challenge, then well-known URIs; authorization-server metadata with the
//! OpenID fallback — all done by rmcp's `AuthorizationManager`), client
//! identity (pre-registered, client ID metadata document, or dynamic
//! registration), PKCE S256 and the RFC 8707 `resource`, then the code
//! exchange; and the step-up re-authorization on `403 insufficient_scope`.

use super::error::OAuthError;
use super::store::{ServerCredentials, TokenStore};
use crate::mcp::client::config::{HttpTransport, McpServer, McpTransport, OAuthSettings};
use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    OAuthClientConfig, OAuthState, WWWAuthenticateParams,
};
use std::fmt;
use std::sync::Arc;

/// The client name sent with dynamic client registration.
const CLIENT_NAME: &str = "lousho";

/// Sends the operator (or, in tests, a headless user agent) to the
/// authorization URL and returns the full URL the authorization server
/// redirected back to (`<redirectUri>?code=…&state=…`).
///
/// [`login`](super::login) uses one that prints the URL and listens on the
/// redirect URI's loopback port. Pass one in
/// [`ConnectOptions::authorizer`](crate::mcp::ConnectOptions::authorizer) to
/// let connections sign in (and step up scopes) by themselves.
#[async_trait]
pub trait Authorizer: Send + Sync + fmt::Debug {
    /// Runs the browser part of one authorization and returns the redirect URL.
    async fn authorize(&self, authorization_url: &str) -> Result<String, OAuthError>;
}

/// The HTTP part and the OAuth settings of an entry.
pub(crate) fn oauth_entry(
    server: &McpServer,
) -> Result<(&HttpTransport, &OAuthSettings), OAuthError> {
    let McpTransport::Http(http) = &server.transport else {
        return Err(OAuthError::NotHttp);
    };
    let settings = server.oauth.as_ref().ok_or(OAuthError::NotConfigured)?;
    settings
        .check()
        .map_err(|e| OAuthError::InvalidSettings(e.to_string()))?;
    Ok((http, settings))
}

/// The redirect URI, which must be set.
pub(crate) fn redirect_uri(settings: &OAuthSettings) -> Result<&str, OAuthError> {
    settings
        .redirect_uri
        .as_deref()
        .filter(|u| !u.is_empty())
        .ok_or(OAuthError::MissingRedirectUri)
}

pub(crate) fn sign_in_error(server_url: &str, e: AuthError) -> OAuthError {
    OAuthError::sign_in(server_url, e)
}

/// A manager for `server_url` whose credentials live in `store`.
pub(crate) async fn manager(
    server_url: &str,
    store: &Arc<dyn TokenStore>,
) -> Result<AuthorizationManager, OAuthError> {
    let mut manager = AuthorizationManager::new(server_url)
        .await
        .map_err(|e| sign_in_error(server_url, e))?;
    manager.set_credential_store(ServerCredentials {
        store: store.clone(),
        url: server_url.to_owned(),
    });
    Ok(manager)
}

/// Loads the stored grant into `manager`; false when there is none (or it
/// belongs to another authorization server).
pub(crate) async fn restore(
    manager: &mut AuthorizationManager,
    server_url: &str,
    settings: &OAuthSettings,
) -> Result<bool, OAuthError> {
    if !manager
        .initialize_from_store()
        .await
        .map_err(|e| sign_in_error(server_url, e))?
    {
        return Ok(false);
    }
    // A pre-registered confidential client needs its secret again for refresh.
    if let (Some(id), Some(secret), Ok(redirect)) = (
        &settings.client_id,
        &settings.client_secret,
        redirect_uri(settings),
    ) {
        let (stored_id, _) = manager
            .get_credentials()
            .await
            .map_err(|e| sign_in_error(server_url, e))?;
        if &stored_id == id {
            let config = OAuthClientConfig::new(id.clone(), redirect)
                .with_client_secret(secret.clone())
                .with_scopes(settings.scopes.clone());
            manager
                .configure_client(config)
                .map_err(|e| sign_in_error(server_url, e))?;
        }
    }
    Ok(true)
}

/// Asks the server without credentials and returns its `WWW-Authenticate`
/// challenge (when it answers 401 with one), which seeds discovery and scope
/// selection.
pub(crate) async fn probe_challenge(server_url: &str) -> Option<String> {
    let client = crate::mcp::client::http::shared_client().ok()?;
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE.as_str(),
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = client
        .post(server_url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .json(&body)
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Runs a full sign-in and returns the authorized manager; the grant is in
/// the store when this returns.
pub(crate) async fn authorize(
    server_url: &str,
    settings: &OAuthSettings,
    store: &Arc<dyn TokenStore>,
    challenge: Option<&str>,
    authorizer: &dyn Authorizer,
) -> Result<AuthorizationManager, OAuthError> {
    let redirect = redirect_uri(settings)?;
    let manager = manager(server_url, store).await?;
    let mut state = OAuthState::Unauthorized(manager);
    let mut request = AuthorizationRequest::new(redirect).with_client_name(CLIENT_NAME);
    request = if settings.scopes.is_empty() {
        request.with_initial_scope_selection()
    } else {
        request.with_scopes(settings.scopes.clone())
    };
    if let Some(id) = &settings.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &settings.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    if let Some(url) = &settings.client_metadata_url {
        request = request.with_client_metadata_url(url.clone());
    }
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    let fail = |e: AuthError| sign_in_error(server_url, e);
    state.start_authorization(request).await.map_err(fail)?;
    let url = state.get_authorization_url().await.map_err(fail)?;
    let callback = authorizer.authorize(&url).await?;
    check_denied(&callback)?;
    state.handle_callback_url(&callback).await.map_err(fail)?;
    state
        .into_authorization_manager()
        .ok_or_else(|| OAuthError::sign_in(server_url, "the authorization did not complete"))
}

/// Re-authorizes with the scope a `403 insufficient_scope` challenge asks for
/// (added to the granted ones); rmcp allows at most 3 such upgrades.
pub(crate) async fn step_up(
    manager: &AuthorizationManager,
    server_url: &str,
    challenge: &str,
    authorizer: &dyn Authorizer,
) -> Result<(), OAuthError> {
    let base = reqwest::Url::parse(server_url).map_err(|e| OAuthError::sign_in(server_url, e))?;
    let params = WWWAuthenticateParams::parse(challenge, &base);
    let scope = params.scope.unwrap_or_default();
    let fail = |e: AuthError| sign_in_error(server_url, e);
    let url = manager.request_scope_upgrade(&scope).await.map_err(fail)?;
    let callback = authorizer.authorize(&url).await?;
    check_denied(&callback)?;
    let callback = AuthorizationCallback::from_redirect_url(&callback).map_err(fail)?;
    manager
        .exchange_code_for_token_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(fail)?;
    Ok(())
}

/// Whether a challenge asks for more scope.
pub(crate) fn is_insufficient_scope(challenge: &str, server_url: &str) -> bool {
    reqwest::Url::parse(server_url)
        .map(|base| WWWAuthenticateParams::parse(challenge, &base).is_insufficient_scope())
        .unwrap_or(false)
}

/// The authorization server sent `error=…` instead of a code.
fn check_denied(callback: &str) -> Result<(), OAuthError> {
    let Ok(url) = reqwest::Url::parse(callback) else {
        return Err(OAuthError::Callback(
            "the redirect is not a URL; paste the whole address the browser was sent to".into(),
        ));
    };
    let get = |key: &str| {
        url.query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    };
    match get("error") {
        Some(error) => {
            let detail = get("error_description")
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            Err(OAuthError::Denied(format!("{error}{detail}")))
        }
        None => Ok(()),
    }
}
