//! A token request made without a browser (`client_credentials`, SEP-1046):
//! the form, the client's authentication (`client_secret_basic`,
//! `client_secret_post` or a `private_key_jwt` assertion, RFC 7523 §2.2) and
//! the response, parsed into rmcp's token type so the rest of the OAuth
//! machinery (stores, the transport's bearer header) treats it like any
//! other grant.
//!
//! (rmcp 3.11 has `AuthorizationManager::exchange_client_credentials`, but
//! with `auth-client-credentials-jwt` its future is not `Send` — it keeps a
//! `form_urlencoded::Serializer` alive across an await — so it cannot run on
//! a connection's task.)

use crate::mcp::client::config::SigningAlgorithm;
use rmcp::transport::auth::AuthorizationMetadata;
use rmcp::transport::auth::OAuthTokenResponse;
use std::time::{SystemTime, UNIX_EPOCH};

/// Why a token request failed. Never holds the secret, the key or the token.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenRequestError {
    /// The token endpoint is not a URL.
    #[error("the token endpoint `{endpoint}` is not a URL")]
    EndpointUrl {
        endpoint: String,
        #[source]
        source: oauth2::url::ParseError,
    },
    /// The token endpoint is plain HTTP to a remote host.
    #[error(
        "the token endpoint `{0}` is not HTTPS; client credentials are only sent over HTTPS (or between loopback hosts)"
    )]
    NotHttps(String),
    /// The server lists no secret method.
    #[error(
        "the authorization server accepts no client secret (it supports {0}); use `privateKeyPem`/`privateKeyFile` if it lists private_key_jwt"
    )]
    NoSecretMethod(String),
    /// The private key cannot be used.
    #[error(
        "the private key is not a usable PEM key for {algorithm}; check `privateKeyPem`/`privateKeyFile` and `signingAlgorithm`"
    )]
    Key {
        algorithm: String,
        #[source]
        source: jsonwebtoken::errors::Error,
    },
    /// Signing the assertion failed.
    #[error("signing the client assertion failed")]
    Sign(#[source] jsonwebtoken::errors::Error),
    /// No HTTP client.
    #[error(transparent)]
    Setup(#[from] crate::mcp::client::http::SetupError),
    /// The request did not get an answer.
    #[error("the token request to {endpoint} failed")]
    Send {
        endpoint: String,
        #[source]
        source: reqwest::Error,
    },
    /// The answer could not be read.
    #[error("reading the token response failed")]
    Read(#[source] reqwest::Error),
    /// The authorization server said no.
    #[error(
        "the authorization server refused the token request: HTTP {status}, {code}{description}; check the client id and its credentials"
    )]
    Refused {
        status: u16,
        code: String,
        description: String,
    },
    /// The answer is not a token.
    #[error("the token response is not a token")]
    NotAToken(#[source] serde_json::Error),
}

/// How long a client assertion is valid.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// How the client proves who it is at the token endpoint.
pub(crate) enum ClientAuth<'a> {
    /// A client secret; basic or post, whichever the server supports.
    Secret(&'a str),
    /// A private key signing a fresh assertion for every request.
    PrivateKeyJwt {
        /// The PEM key.
        pem: &'a [u8],
        /// The signing algorithm.
        algorithm: SigningAlgorithm,
    },
}

/// One token request: grant-specific parameters plus client authentication.
pub(crate) struct TokenRequest<'a> {
    pub(crate) client_id: &'a str,
    pub(crate) auth: ClientAuth<'a>,
    /// `grant_type` and the grant's own parameters.
    pub(crate) params: Vec<(&'a str, String)>,
}

/// The token endpoint must be HTTPS, or plain HTTP between loopback hosts
/// (local development, tests).
fn check_endpoint(
    token_endpoint: &str,
    server_url: &str,
) -> Result<reqwest::Url, TokenRequestError> {
    let endpoint =
        reqwest::Url::parse(token_endpoint).map_err(|source| TokenRequestError::EndpointUrl {
            endpoint: token_endpoint.to_owned(),
            source,
        })?;
    let loopback = |u: &reqwest::Url| match u.host() {
        Some(oauth2::url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(oauth2::url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(oauth2::url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    let server = reqwest::Url::parse(server_url).ok();
    let local = loopback(&endpoint) && server.as_ref().is_some_and(loopback);
    if endpoint.scheme() == "https" || (endpoint.scheme() == "http" && local) {
        Ok(endpoint)
    } else {
        Err(TokenRequestError::NotHttps(token_endpoint.to_owned()))
    }
}

/// Which secret method to use: `client_secret_basic` unless the server
/// lists methods without it but with `client_secret_post` (RFC 8414: basic
/// is the default).
pub(crate) fn use_basic(metadata: &AuthorizationMetadata) -> Result<bool, TokenRequestError> {
    let Some(methods) = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(|v| v.as_array())
    else {
        return Ok(true);
    };
    let has = |m: &str| methods.iter().any(|v| v.as_str() == Some(m));
    if has("client_secret_basic") {
        Ok(true)
    } else if has("client_secret_post") {
        Ok(false)
    } else {
        Err(TokenRequestError::NoSecretMethod(
            serde_json::Value::Array(methods.clone()).to_string(),
        ))
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// A signed RFC 7523 client assertion: `iss` = `sub` = the client id, `aud`
/// = the authorization server's issuer (else its token endpoint).
pub(crate) fn assertion(
    client_id: &str,
    audience: &str,
    pem: &[u8],
    algorithm: SigningAlgorithm,
) -> Result<String, TokenRequestError> {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let (alg, key) = match algorithm {
        SigningAlgorithm::ES384 => (Algorithm::ES384, EncodingKey::from_ec_pem(pem)),
        SigningAlgorithm::RS256 => (Algorithm::RS256, EncodingKey::from_rsa_pem(pem)),
        SigningAlgorithm::RS384 => (Algorithm::RS384, EncodingKey::from_rsa_pem(pem)),
        SigningAlgorithm::RS512 => (Algorithm::RS512, EncodingKey::from_rsa_pem(pem)),
        _ => (Algorithm::ES256, EncodingKey::from_ec_pem(pem)),
    };
    let key = key.map_err(|source| TokenRequestError::Key {
        algorithm: format!("{alg:?}"),
        source,
    })?;
    let now = now_secs();
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME_SECS,
        "jti": format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..)),
    });
    let mut header = Header::new(alg);
    header.typ = Some("JWT".into());
    jsonwebtoken::encode(&header, &claims, &key).map_err(TokenRequestError::Sign)
}

/// Sends `request` to the server's token endpoint and returns the token.
/// Errors never contain the secret, the key or the token.
pub(crate) async fn request_token(
    server_url: &str,
    metadata: &AuthorizationMetadata,
    request: TokenRequest<'_>,
) -> Result<OAuthTokenResponse, TokenRequestError> {
    let endpoint = check_endpoint(&metadata.token_endpoint, server_url)?;
    let mut form = request.params;
    let http = crate::mcp::client::http::shared_client()?;
    let mut builder = http.post(endpoint.clone());
    match request.auth {
        ClientAuth::Secret(secret) => {
            if use_basic(metadata)? {
                // RFC 6749 §2.3.1: both parts form-encoded before Basic encoding.
                let enc = |s: &str| {
                    oauth2::url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
                };
                builder = builder.basic_auth(enc(request.client_id), Some(enc(secret)));
            } else {
                form.push(("client_id", request.client_id.to_owned()));
                form.push(("client_secret", secret.to_owned()));
            }
        }
        ClientAuth::PrivateKeyJwt { pem, algorithm } => {
            let audience = metadata
                .issuer
                .clone()
                .unwrap_or_else(|| metadata.token_endpoint.clone());
            let signed = assertion(request.client_id, &audience, pem, algorithm)?;
            form.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
            ));
            form.push(("client_assertion", signed));
        }
    }
    let body = oauth2::url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    let response = builder
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|source| TokenRequestError::Send {
            endpoint: endpoint.to_string(),
            source,
        })?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(TokenRequestError::Read)?;
    if !status.is_success() {
        let detail: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        let code = detail["error"]
            .as_str()
            .unwrap_or("no error code")
            .to_owned();
        let description = detail["error_description"]
            .as_str()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(TokenRequestError::Refused {
            status: status.as_u16(),
            code,
            description,
        });
    }
    serde_json::from_slice(&bytes).map_err(TokenRequestError::NotAToken)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(methods: Option<serde_json::Value>) -> AuthorizationMetadata {
        let mut m = AuthorizationMetadata::default();
        if let Some(methods) = methods {
            m.additional_fields
                .insert("token_endpoint_auth_methods_supported".into(), methods);
        }
        m
    }

    #[test]
    fn a_secret_goes_in_basic_unless_only_post_is_listed() {
        assert_eq!(use_basic(&metadata(None)).ok(), Some(true));
        let both = serde_json::json!(["client_secret_post", "client_secret_basic"]);
        assert_eq!(use_basic(&metadata(Some(both))).ok(), Some(true));
        let post = serde_json::json!(["client_secret_post"]);
        assert_eq!(use_basic(&metadata(Some(post))).ok(), Some(false));
        let jwt = serde_json::json!(["private_key_jwt"]);
        assert!(
            use_basic(&metadata(Some(jwt)))
                .unwrap_err()
                .to_string()
                .contains("privateKey")
        );
    }

    #[test]
    fn credentials_only_travel_over_https_or_between_loopback_hosts() {
        let remote = "https://mcp.example.com/mcp";
        let local = "http://127.0.0.1:8080/mcp";
        assert!(check_endpoint("https://as.example.com/token", remote).is_ok());
        assert!(check_endpoint("http://localhost:9000/token", local).is_ok());
        assert!(check_endpoint("http://[::1]:9000/token", local).is_ok());
        assert!(check_endpoint("http://as.example.com/token", remote).is_err());
        assert!(check_endpoint("http://127.0.0.1:9000/token", remote).is_err());
        assert!(check_endpoint("not a url", remote).is_err());
    }
}
