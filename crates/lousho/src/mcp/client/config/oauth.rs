//! The `oauth` key of an HTTP entry: how the connection gets its token.
//!
//! Two grants:
//! - `authorization_code` (the default): an operator signs the agent in once
//!   (`redirectUri`, optional `clientId`/`clientSecret`/`clientMetadataUrl`,
//!   `scopes`);
//! - `client_credentials` (machine to machine, SEP-1046): the connection
//!   fetches its own token with `clientId` and either `clientSecret`
//!   (`client_secret_basic`/`client_secret_post`) or a private key
//!   (`privateKeyPem` or `privateKeyFile`, `private_key_jwt`);
//! - `enterprise_managed` (cross-app access, SEP-990): the user's ID token
//!   from the enterprise identity provider (`idp`) is exchanged there for an
//!   identity assertion grant, which the MCP server's authorization server
//!   turns into a token for `clientId`.

use super::entry_error::OAuthSettingsError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// Which OAuth grant an entry uses (`grant:` in a spec file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "GrantKind")]
#[non_exhaustive]
pub enum OAuthGrant {
    /// An operator signs in once in a browser (authorization code + PKCE).
    #[default]
    #[serde(alias = "authorizationCode")]
    AuthorizationCode,
    /// The connection gets its own token with the client's credentials; no
    /// operator, no sign-in (SEP-1046).
    #[serde(alias = "clientCredentials")]
    ClientCredentials,
    /// Enterprise-managed authorization (SEP-990): the user's ID token from
    /// the identity provider in [`OAuthSettings::idp`] becomes a token for
    /// this server; no browser, no consent screen.
    #[serde(alias = "enterpriseManaged")]
    EnterpriseManaged,
}

impl OAuthGrant {
    fn is_default(&self) -> bool {
        *self == Self::AuthorizationCode
    }
}

/// How a `private_key_jwt` client assertion is signed (`signingAlgorithm`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "SigningAlgorithmKind")]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// ECDSA P-256 with SHA-256 (the default; an EC P-256 key).
    #[default]
    ES256,
    /// ECDSA P-384 with SHA-384 (an EC P-384 key).
    ES384,
    /// RSASSA-PKCS1-v1_5 with SHA-256 (an RSA key).
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384 (an RSA key).
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512 (an RSA key).
    RS512,
}

/// The enterprise identity provider of `grant: enterprise_managed`
/// (`oauth.idp`).
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(
    rename = "IdpEntry",
    description = "enterprise_managed: the enterprise identity provider and the user's ID token."
)]
#[non_exhaustive]
pub struct IdpSettings {
    /// The identity provider's issuer URL (its OpenID configuration is read
    /// from there unless `tokenEndpoint` is set).
    pub issuer: String,
    /// Its token endpoint (default: from its OpenID configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The client id registered at the identity provider.
    pub client_id: String,
    /// That client's secret (`client_secret_basic`); none for a public client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The user's ID token (from the enterprise sign-in); never logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    /// A file holding the user's ID token, read at every exchange (so a
    /// sign-in helper can keep it fresh; relative to a spec file's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_file: Option<PathBuf>,
}

impl IdpSettings {
    /// An identity provider at `issuer` where this app is `client_id`; add
    /// the user's ID token with [`id_token`](Self::id_token) or
    /// [`id_token_file`](Self::id_token_file).
    pub fn new(issuer: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            client_id: client_id.into(),
            ..Self::default()
        }
    }

    /// The token endpoint (instead of reading the OpenID configuration).
    #[must_use]
    pub fn token_endpoint(mut self, url: impl Into<String>) -> Self {
        self.token_endpoint = Some(url.into());
        self
    }

    /// The IdP client's secret.
    #[must_use]
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The user's ID token.
    #[must_use]
    pub fn id_token(mut self, token: impl Into<String>) -> Self {
        self.id_token = Some(token.into());
        self
    }

    /// A file with the user's ID token (read at every exchange).
    #[must_use]
    pub fn id_token_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.id_token_file = Some(path.into());
        self
    }
}

// Debug never shows the secret or the ID token.
impl fmt::Debug for IdpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted = |set: bool| set.then_some("[redacted]");
        f.debug_struct("IdpSettings")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &redacted(self.client_secret.is_some()))
            .field("id_token", &redacted(self.id_token.is_some()))
            .field("id_token_file", &self.id_token_file)
            .finish()
    }
}

/// OAuth settings of an HTTP entry.
///
/// Operator sign-in (`oauth: { redirectUri }`):
///
/// ```
/// use lousho::mcp::OAuthSettings;
/// let settings = OAuthSettings::new("http://127.0.0.1:8765/callback").scopes(["docs.read"]);
/// # let _ = settings;
/// ```
///
/// Machine to machine (`oauth: { grant: client_credentials, clientId, clientSecret }`
/// or `{ grant: client_credentials, clientId, privateKeyFile }`):
///
/// ```
/// use lousho::mcp::OAuthSettings;
/// let with_secret = OAuthSettings::client_credentials("reporting-bot").client_secret("s3cret");
/// let with_key = OAuthSettings::client_credentials("reporting-bot").private_key_file("bot-key.pem");
/// # let _ = (with_secret, with_key);
/// ```
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(
    rename = "OAuthEntry",
    description = "OAuth sign-in of an HTTP server: `authorization_code` (an operator signs in once with `lousho login`), `client_credentials` or `enterprise_managed`."
)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// Which grant (default `authorization_code`).
    #[serde(default, skip_serializing_if = "OAuthGrant::is_default")]
    pub grant: OAuthGrant,
    /// Where the authorization server sends the operator back
    /// (`authorization_code` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
    /// A pre-registered client id (otherwise dynamic client registration);
    /// required for `client_credentials` and `enterprise_managed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Scopes to request (default: the server's `WWW-Authenticate` scope,
    /// else its `scopes_supported`, else none; `client_credentials` sends
    /// none unless set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The secret of the pre-registered client (`clientId`); never logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// An HTTPS URL of a client ID metadata document, used as the client id
    /// when the authorization server supports it (instead of registration;
    /// `authorization_code` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// `private_key_jwt` (`client_credentials`, `enterprise_managed`): the
    /// client's private key (PEM, PKCS#8 or SEC1/PKCS#1); never logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_pem: Option<String>,
    /// `private_key_jwt` (`client_credentials`, `enterprise_managed`): a file
    /// holding the PEM key (read at each token request; in a spec file,
    /// relative to the file's folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_file: Option<PathBuf>,
    /// How the client assertion is signed (default `ES256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_algorithm: Option<SigningAlgorithm>,
    /// `enterprise_managed`: the identity provider and the user's ID token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdpSettings>,
}

impl OAuthSettings {
    /// Operator sign-in with this redirect URI (a loopback URL such as
    /// `http://127.0.0.1:8765/callback` for `lousho login`).
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        Self {
            redirect_uri: Some(redirect_uri.into()),
            ..Self::default()
        }
    }

    /// Machine-to-machine: the `client_credentials` grant for `client_id`;
    /// add [`client_secret`](Self::client_secret) or a private key
    /// ([`private_key_pem`](Self::private_key_pem) /
    /// [`private_key_file`](Self::private_key_file)).
    pub fn client_credentials(client_id: impl Into<String>) -> Self {
        Self {
            grant: OAuthGrant::ClientCredentials,
            client_id: Some(client_id.into()),
            ..Self::default()
        }
    }

    /// Enterprise-managed authorization (SEP-990): `client_id` is this
    /// app's client at the MCP server's authorization server (add its
    /// [`client_secret`](Self::client_secret) or a private key), `idp` the
    /// identity provider with the user's ID token.
    pub fn enterprise_managed(client_id: impl Into<String>, idp: IdpSettings) -> Self {
        Self {
            grant: OAuthGrant::EnterpriseManaged,
            client_id: Some(client_id.into()),
            idp: Some(idp),
            ..Self::default()
        }
    }

    /// Uses a pre-registered client instead of dynamic registration.
    #[must_use]
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The pre-registered client's secret.
    #[must_use]
    pub fn client_secret(mut self, client_secret: impl Into<String>) -> Self {
        self.client_secret = Some(client_secret.into());
        self
    }

    /// Scopes to request.
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A client ID metadata document URL (used when the server supports it).
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The private key (PEM) that signs `private_key_jwt` assertions.
    #[must_use]
    pub fn private_key_pem(mut self, pem: impl Into<String>) -> Self {
        self.private_key_pem = Some(pem.into());
        self
    }

    /// A PEM file with the private key that signs `private_key_jwt`
    /// assertions.
    #[must_use]
    pub fn private_key_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.private_key_file = Some(path.into());
        self
    }

    /// How assertions are signed (default [`SigningAlgorithm::ES256`]).
    #[must_use]
    pub fn signing_algorithm(mut self, algorithm: SigningAlgorithm) -> Self {
        self.signing_algorithm = Some(algorithm);
        self
    }

    /// Checks that the keys fit the grant; the message names the key to fix.
    pub(crate) fn check(&self) -> Result<(), OAuthSettingsError> {
        let grant_name = match self.grant {
            OAuthGrant::AuthorizationCode => {
                for (key, set) in [
                    ("privateKeyPem", self.private_key_pem.is_some()),
                    ("privateKeyFile", self.private_key_file.is_some()),
                    ("signingAlgorithm", self.signing_algorithm.is_some()),
                    ("idp", self.idp.is_some()),
                ] {
                    if set {
                        return Err(OAuthSettingsError::MachineKey(key));
                    }
                }
                return Ok(());
            }
            OAuthGrant::ClientCredentials => "client_credentials",
            OAuthGrant::EnterpriseManaged => "enterprise_managed",
        };
        if self.client_id.as_deref().is_none_or(str::is_empty) {
            return Err(OAuthSettingsError::NoClientId(grant_name));
        }
        for (key, set) in [
            ("redirectUri", self.redirect_uri.is_some()),
            ("clientMetadataUrl", self.client_metadata_url.is_some()),
        ] {
            if set {
                return Err(OAuthSettingsError::SignInKey {
                    key,
                    grant: grant_name,
                });
            }
        }
        let credentials = [
            self.client_secret.is_some(),
            self.private_key_pem.is_some(),
            self.private_key_file.is_some(),
        ]
        .iter()
        .filter(|set| **set)
        .count();
        if credentials > 1 {
            return Err(OAuthSettingsError::SeveralCredentials(grant_name));
        }
        if self.signing_algorithm.is_some()
            && self.private_key_pem.is_none()
            && self.private_key_file.is_none()
        {
            return Err(OAuthSettingsError::AlgorithmWithoutKey);
        }
        match (self.grant, &self.idp) {
            (OAuthGrant::ClientCredentials, Some(_)) => {
                Err(OAuthSettingsError::IdpWithoutEnterpriseGrant)
            }
            (OAuthGrant::ClientCredentials, None) if credentials == 0 => {
                Err(OAuthSettingsError::NoCredential)
            }
            (OAuthGrant::EnterpriseManaged, None) => Err(OAuthSettingsError::NoIdp),
            (OAuthGrant::EnterpriseManaged, Some(idp)) => {
                if idp.issuer.is_empty() || idp.client_id.is_empty() {
                    return Err(OAuthSettingsError::IdpIncomplete);
                }
                match (&idp.id_token, &idp.id_token_file) {
                    (Some(_), None) | (None, Some(_)) => Ok(()),
                    _ => Err(OAuthSettingsError::IdpToken),
                }
            }
            _ => Ok(()),
        }
    }
}

// Debug never shows the client secret or the private key.
impl fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted = |set: bool| set.then_some("[redacted]");
        f.debug_struct("OAuthSettings")
            .field("grant", &self.grant)
            .field("redirect_uri", &self.redirect_uri)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("client_secret", &redacted(self.client_secret.is_some()))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("private_key_pem", &redacted(self.private_key_pem.is_some()))
            .field("private_key_file", &self.private_key_file)
            .field("signing_algorithm", &self.signing_algorithm)
            .field("idp", &self.idp)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<OAuthSettings, String> {
        let settings: OAuthSettings = serde_json::from_str(json).map_err(|e| e.to_string())?;
        settings.check().map_err(|e| e.to_string())?;
        Ok(settings)
    }

    #[test]
    fn client_credentials_keys_parse_and_are_checked() {
        let s =
            parse(r#"{"grant":"client_credentials","clientId":"bot","clientSecret":"x"}"#).unwrap();
        assert_eq!(s.grant, OAuthGrant::ClientCredentials);
        let s = parse(
            r#"{"grant":"clientCredentials","clientId":"bot","privateKeyFile":"k.pem","signingAlgorithm":"RS256"}"#,
        )
        .unwrap();
        assert_eq!(s.signing_algorithm, Some(SigningAlgorithm::RS256));
        for (json, hint) in [
            (
                r#"{"grant":"client_credentials","clientSecret":"x"}"#,
                "needs `clientId`",
            ),
            (
                r#"{"grant":"client_credentials","clientId":"b"}"#,
                "needs `clientSecret`",
            ),
            (
                r#"{"grant":"client_credentials","clientId":"b","clientSecret":"x","privateKeyPem":"k"}"#,
                "not several",
            ),
            (
                r#"{"grant":"client_credentials","clientId":"b","clientSecret":"x","redirectUri":"http://127.0.0.1:1/"}"#,
                "`redirectUri`",
            ),
            (
                r#"{"redirectUri":"http://127.0.0.1:1/","privateKeyPem":"k"}"#,
                "is for `grant: client_credentials`",
            ),
            (r#"{"grant":"password"}"#, "unknown variant"),
            (
                r#"{"grant":"enterprise_managed","clientId":"b","clientSecret":"x"}"#,
                "needs `idp",
            ),
            (
                r#"{"grant":"enterprise_managed","clientId":"b","idp":{"issuer":"https://idp","clientId":"i"}}"#,
                "one of `idToken` and `idTokenFile`",
            ),
        ] {
            let err = parse(json).unwrap_err();
            assert!(err.contains(hint), "{json}: {err}");
        }
    }

    #[test]
    fn enterprise_managed_keys_parse() {
        let s = parse(
            r#"{"grant":"enterprise_managed","clientId":"app","clientSecret":"x",
                "idp":{"issuer":"https://idp.example.com","clientId":"idp-app","idTokenFile":"id.jwt"}}"#,
        )
        .unwrap();
        assert_eq!(s.grant, OAuthGrant::EnterpriseManaged);
        let shown = format!(
            "{:?}",
            OAuthSettings::enterprise_managed(
                "app",
                IdpSettings::new("https://idp", "i")
                    .id_token("eyJ-very-secret")
                    .client_secret("idp-secret"),
            )
        );
        assert!(
            !shown.contains("very-secret") && !shown.contains("idp-secret"),
            "{shown}"
        );
    }

    #[test]
    fn debug_hides_the_secret_and_the_key() {
        let s = OAuthSettings::client_credentials("bot")
            .private_key_pem("-----BEGIN PRIVATE KEY-----very-secret");
        let shown = format!("{s:?}");
        assert!(!shown.contains("very-secret"), "{shown}");
        let s = OAuthSettings::client_credentials("bot").client_secret("hunter2");
        assert!(!format!("{s:?}").contains("hunter2"));
    }

    #[test]
    fn the_default_grant_is_not_written_out() {
        let json = serde_json::to_value(OAuthSettings::new("http://127.0.0.1:1/cb")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"redirectUri": "http://127.0.0.1:1/cb"})
        );
        let json = serde_json::to_value(OAuthSettings::client_credentials("b").client_secret("s"))
            .unwrap();
        assert_eq!(json["grant"], "client_credentials");
    }
}
