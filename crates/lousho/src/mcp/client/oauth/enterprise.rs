//! Enterprise-managed authorization (cross-app access, SEP-990): the user's
//! ID token from the enterprise identity provider is exchanged there (RFC
//! 8693) for an identity assertion grant (ID-JAG) bound to the MCP server,
//! which the server's authorization server redeems (RFC 7523 JWT-bearer
//! grant) for an access token. rmcp's `transport::auth::enterprise` does the
//! two requests and checks the assertion's bindings; this module supplies
//! the settings, the identity provider's token endpoint and the client
//! authentication.

use super::error::OAuthError;
use super::token_request::{assertion, use_basic};
use crate::mcp::client::config::{IdpSettings, OAuthSettings, SigningAlgorithm};
use async_trait::async_trait;
use oauth2::ClientSecret;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAssertion, EmaClientAssertionProvider,
    EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage,
};
use rmcp::transport::auth::{AuthorizationMetadata, OAuthTokenResponse, default_oauth_http_client};
use std::sync::Arc;

/// Signs RFC 7523 client assertions with the configured key.
struct KeyAssertion {
    pem: Vec<u8>,
    algorithm: SigningAlgorithm,
}

#[async_trait]
impl EmaClientAssertionProvider for KeyAssertion {
    async fn create_assertion(
        &self,
        server: &EmaAuthorizationServer,
    ) -> Result<EmaClientAssertion, Box<dyn std::error::Error + Send + Sync>> {
        let signed = assertion(&server.client_id, &server.issuer, &self.pem, self.algorithm)?;
        Ok(EmaClientAssertion::new(signed))
    }
}

/// Reads the user's ID token (the file at every exchange, so a helper can
/// keep it fresh).
async fn id_token(idp: &IdpSettings) -> Result<String, OAuthError> {
    if let Some(token) = &idp.id_token {
        return Ok(token.trim().to_owned());
    }
    let Some(path) = &idp.id_token_file else {
        return Err(OAuthError::InvalidSettings(
            "`idp` needs one of `idToken` and `idTokenFile`".into(),
        ));
    };
    let text = tokio::fs::read_to_string(path).await.map_err(|e| {
        OAuthError::InvalidSettings(format!(
            "cannot read `idp.idTokenFile` {}: {e}",
            path.display()
        ))
    })?;
    Ok(text.trim().to_owned())
}

/// Why the identity provider's token endpoint could not be found.
#[derive(Debug, thiserror::Error)]
enum IdpDiscoveryError {
    #[error(transparent)]
    Setup(#[from] crate::mcp::client::http::SetupError),
    #[error("reading {url} failed")]
    Read {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("{url} answered HTTP {status}; set `idp.tokenEndpoint`")]
    Status { url: String, status: u16 },
    #[error("{url} is not JSON")]
    NotJson {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("the OpenID configuration at {0} names another issuer; check `idp.issuer`")]
    OtherIssuer(String),
    #[error("{0} has no token_endpoint; set `idp.tokenEndpoint`")]
    NoTokenEndpoint(String),
}

/// The identity provider's token endpoint: configured, or from its OpenID
/// configuration (whose `issuer` must be the configured one).
async fn idp_token_endpoint(idp: &IdpSettings) -> Result<String, IdpDiscoveryError> {
    if let Some(endpoint) = &idp.token_endpoint {
        return Ok(endpoint.clone());
    }
    let issuer = idp.issuer.trim_end_matches('/');
    let url = format!("{issuer}/.well-known/openid-configuration");
    let http = crate::mcp::client::http::shared_client()?;
    let response = http
        .get(&url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|source| IdpDiscoveryError::Read {
            url: url.clone(),
            source,
        })?;
    if !response.status().is_success() {
        return Err(IdpDiscoveryError::Status {
            url,
            status: response.status().as_u16(),
        });
    }
    let metadata: serde_json::Value =
        response
            .json()
            .await
            .map_err(|source| IdpDiscoveryError::NotJson {
                url: url.clone(),
                source,
            })?;
    if metadata["issuer"].as_str().map(|i| i.trim_end_matches('/')) != Some(issuer) {
        return Err(IdpDiscoveryError::OtherIssuer(url));
    }
    metadata["token_endpoint"]
        .as_str()
        .map(str::to_owned)
        .ok_or(IdpDiscoveryError::NoTokenEndpoint(url))
}

/// How this app authenticates at the MCP server's authorization server.
async fn resource_client_auth(
    settings: &OAuthSettings,
    metadata: &AuthorizationMetadata,
) -> Result<EmaClientAuthentication, OAuthError> {
    if let Some(secret) = &settings.client_secret {
        let secret = ClientSecret::new(secret.clone());
        let basic = use_basic(metadata).map_err(|e| OAuthError::InvalidSettings(e.to_string()))?;
        return Ok(if basic {
            EmaClientAuthentication::ClientSecretBasic(secret)
        } else {
            EmaClientAuthentication::ClientSecretPost(secret)
        });
    }
    let pem = match (&settings.private_key_pem, &settings.private_key_file) {
        (Some(pem), _) => pem.clone().into_bytes(),
        (None, Some(path)) => tokio::fs::read(path).await.map_err(|e| {
            OAuthError::InvalidSettings(format!(
                "cannot read `privateKeyFile` {}: {e}",
                path.display()
            ))
        })?,
        (None, None) => return Ok(EmaClientAuthentication::None),
    };
    Ok(EmaClientAuthentication::JwtAssertion(Arc::new(
        KeyAssertion {
            pem,
            algorithm: settings.signing_algorithm.unwrap_or_default(),
        },
    )))
}

fn describe(e: &EmaError) -> String {
    match e {
        EmaError::InvalidGrant(EmaExchangeStage::IdentityProvider)
        | EmaError::InsufficientUserAuthentication(EmaExchangeStage::IdentityProvider) => format!(
            "{e}: the identity provider refused the user's ID token (expired?); sign in to it again and update `idp.idToken`/`idp.idTokenFile`"
        ),
        other => format!("enterprise-managed authorization failed: {other}"),
    }
}

/// Both exchanges; returns the MCP server's access token.
pub(crate) async fn exchange(
    server_url: &str,
    metadata: &AuthorizationMetadata,
    settings: &OAuthSettings,
) -> Result<OAuthTokenResponse, OAuthError> {
    let fail = |e: Box<dyn std::error::Error + Send + Sync>| OAuthError::sign_in(server_url, e);
    let idp = settings.idp.as_ref().ok_or_else(|| {
        OAuthError::InvalidSettings("`grant: enterprise_managed` needs `idp`".into())
    })?;
    let issuer = metadata.issuer.clone().ok_or_else(|| {
        fail("the authorization server's metadata has no issuer, which the identity assertion must name".into())
    })?;
    let subject = id_token(idp).await?;
    let idp_auth = match &idp.client_secret {
        Some(secret) => {
            EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(secret.clone()))
        }
        None => EmaClientAuthentication::None,
    };
    let idp_server = EmaAuthorizationServer::new(
        idp.issuer.clone(),
        idp_token_endpoint(idp).await.map_err(|e| fail(e.into()))?,
        idp.client_id.clone(),
    )
    .with_client_authentication(idp_auth);
    let resource_server = EmaAuthorizationServer::new(
        issuer,
        metadata.token_endpoint.clone(),
        settings.client_id.clone().unwrap_or_default(),
    )
    .with_client_authentication(resource_client_auth(settings, metadata).await?);
    let http = default_oauth_http_client().map_err(|e| fail(e.into()))?;
    let token =
        EmaExchangeRequest::new_with_id_token(idp_server, resource_server, server_url, &subject)
            .with_scopes(settings.scopes.iter().cloned())
            .exchange(&http, &http)
            .await
            .map_err(|e| fail(describe(&e).into()))?;
    let mut scopes: Vec<&str> = token.scopes.iter().map(String::as_str).collect();
    scopes.sort_unstable();
    let mut response = serde_json::json!({
        "access_token": token.access_token.secret(),
        "token_type": "Bearer",
    });
    if let Some(lifetime) = token.expires_in {
        response["expires_in"] = lifetime.as_secs().into();
    }
    if !scopes.is_empty() {
        response["scope"] = scopes.join(" ").into();
    }
    serde_json::from_value(response).map_err(|e| fail(e.into()))
}
