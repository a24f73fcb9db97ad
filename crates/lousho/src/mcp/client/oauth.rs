//! OAuth for HTTP MCP servers, as the MCP authorization spec describes: an
//! operator signs the agent in once per server ([`login`]), the grant is kept
//! in a [`TokenStore`] keyed by the server's URL, and connections use it —
//! refreshing it before and after expiry and saving the refreshed tokens.
//!
//! A server whose entry has `oauth` and no usable grant reports
//! [`ServerStatus::NeedsAuth`](crate::mcp::ServerStatus::NeedsAuth); its tools
//! are left out and the agent keeps working. Tokens never appear in logs,
//! errors or `Debug` output.
//!
//! Machine-to-machine entries (`grant: client_credentials`, SEP-1046) and
//! enterprise-managed ones (`grant: enterprise_managed`, SEP-990: the user's
//! ID token from the company's identity provider) need no operator: the
//! connection fetches its token itself, keeps it in the store, and fetches a
//! new one before it expires or when the server rejects it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use lousho::mcp::oauth::{self, FileTokenStore, TokenStore};
//! use lousho::mcp::OAuthSettings;
//! use lousho::{McpServer, connect_mcp};
//! use lousho::mcp::ConnectOptions;
//! use std::sync::Arc;
//! let entry = McpServer::http("https://mcp.example.com/mcp")
//!     .oauth(OAuthSettings::new("http://127.0.0.1:8765/callback"));
//! let tokens: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new("tokens.json"));
//! // Once, by an operator:
//! oauth::login(&entry, tokens.clone(), |url| eprintln!("Open {url}")).await?;
//! // Every start after that:
//! let mcp = connect_mcp([("docs", entry)], ConnectOptions::default().tokens(tokens)).await?;
//! # let _ = mcp; Ok(()) }
//! ```

mod enterprise;
mod error;
mod flow;
mod glue;
mod keyed;
mod link;
mod loopback;
mod machine;
mod store;
mod token_request;

pub use error::OAuthError;
pub use flow::Authorizer;
pub use loopback::LOGIN_TIMEOUT;
pub use store::{FileTokenStore, MemoryTokenStore, StoredToken, TokenStore, TokenStoreError};

pub(crate) use glue::serve_oauth;
pub(crate) use link::{LinkError, OAuthLink, challenge_of};

use crate::mcp::client::config::{McpServer, OAuthGrant};
use std::sync::Arc;

/// Sign-ins plus step-ups one connection may run before it gives up (and
/// fresh tokens a machine grant may fetch within a minute).
pub(crate) const MAX_AUTHORIZATIONS: u32 = 3;

/// Signs in to `server` once and stores the grant in `store`, keyed by the
/// server's URL.
///
/// It binds the entry's `oauth.redirectUri` port on 127.0.0.1 first, then
/// discovers the authorization server (the server's `WWW-Authenticate`
/// challenge, then well-known URIs), registers or identifies the client,
/// calls `on_authorize_url` with the URL the operator must open, waits (up to
/// [`LOGIN_TIMEOUT`]) for the browser's redirect with the code, and exchanges
/// it (PKCE S256, RFC 8707 `resource`). It prints nothing itself.
///
/// For `grant: client_credentials` and `enterprise_managed` there is nobody
/// to send anywhere: it fetches a token (which proves the credentials work),
/// stores it and never calls `on_authorize_url`.
pub async fn login<F>(
    server: &McpServer,
    store: Arc<dyn TokenStore>,
    on_authorize_url: F,
) -> Result<StoredToken, OAuthError>
where
    F: FnOnce(&str) + Send,
{
    let authorizer = {
        let (_, settings) = flow::oauth_entry(server)?;
        if settings.grant != OAuthGrant::AuthorizationCode {
            return fetch_without_operator(server, store).await;
        }
        loopback::LoopbackAuthorizer::bind(
            flow::redirect_uri(settings)?,
            on_authorize_url,
            LOGIN_TIMEOUT,
        )
        .await?
    };
    sign_in(server, store, &authorizer).await
}

/// Signs in to `server` through any [`Authorizer`] (what [`login`] does with
/// its loopback listener) and returns the stored grant (for the grants
/// without an operator: fetches and stores a token, as [`login`]).
pub async fn sign_in(
    server: &McpServer,
    store: Arc<dyn TokenStore>,
    authorizer: &dyn Authorizer,
) -> Result<StoredToken, OAuthError> {
    let (http, settings) = flow::oauth_entry(server)?;
    if settings.grant != OAuthGrant::AuthorizationCode {
        return fetch_without_operator(server, store).await;
    }
    let store = keyed::keyed(store, settings);
    let challenge = flow::probe_challenge(&http.url).await;
    flow::authorize(
        &http.url,
        settings,
        &store,
        challenge.as_deref(),
        authorizer,
    )
    .await?;
    kept(store.as_ref(), &http.url, "grant").await
}

/// `client_credentials` / `enterprise_managed`: fetches a token now
/// (proving the credentials work) and stores it.
async fn fetch_without_operator(
    server: &McpServer,
    store: Arc<dyn TokenStore>,
) -> Result<StoredToken, OAuthError> {
    let (http, settings) = flow::oauth_entry(server)?;
    let store = keyed::keyed(store, settings);
    machine::MachineGrant::new(http.url.clone(), settings.clone(), store.clone())
        .ensure_token(true)
        .await?;
    kept(store.as_ref(), &http.url, "token").await
}

/// What `store` holds for `server_url` right after it was given `what`.
async fn kept(
    store: &dyn TokenStore,
    server_url: &str,
    what: &str,
) -> Result<StoredToken, OAuthError> {
    store.load(server_url).await?.ok_or_else(|| {
        OAuthError::sign_in(
            server_url,
            format!("the token store did not keep the {what}"),
        )
    })
}

/// The key under which a [`TokenStore`] keeps the grant for `server`: its URL
/// plus, for an entry with credentials of its own (client id, secret or key,
/// grant, identity provider), `#cred=` and a digest of their identity, so a
/// changed credential never reuses a token fetched with the old one. The key
/// never holds a secret. An entry without credentials of its own keeps the
/// bare URL.
pub fn store_key(server: &McpServer) -> Result<String, OAuthError> {
    let (http, settings) = flow::oauth_entry(server)?;
    Ok(keyed::key_for(&http.url, settings))
}

/// Forgets the grant for `server`; true when there was one.
pub async fn logout(server: &McpServer, store: &dyn TokenStore) -> Result<bool, OAuthError> {
    let key = store_key(server)?;
    let had = store.load(&key).await?.is_some();
    store.remove(&key).await?;
    Ok(had)
}

/// The stored grant for `server`, if any (for `status`-like displays).
pub async fn stored_token(
    server: &McpServer,
    store: &dyn TokenStore,
) -> Result<Option<StoredToken>, OAuthError> {
    Ok(store.load(&store_key(server)?).await?)
}
