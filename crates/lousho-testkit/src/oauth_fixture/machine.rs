//! The fixture's grants without an operator: `client_credentials` for one
//! pre-registered machine client (`client_secret_basic` or `private_key_jwt`)
//! and enterprise-managed authorization (an identity provider at
//! `<base>/idp` issuing ID-JAGs, redeemed at `/token` with the JWT-bearer
//! grant).

use super::{Shared, oauth_error};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The fixture identity provider's client id for the app.
pub const IDP_CLIENT_ID: &str = "idp-app";
/// That client's secret (`client_secret_basic` at the identity provider).
pub const IDP_CLIENT_SECRET: &str = "idp-secret-value";

/// A test-only EC P-256 key (PKCS#8 PEM) for `private_key_jwt` tests; it
/// protects nothing.
pub const TEST_EC_PRIVATE_KEY_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgnhuJBq+f9dT0EP9w
QWHx9pnggJc9gH5l0APV6XzoSW6hRANCAAQhZh5VIs8di3QOU0ei4//KTtTYzWoT
5Lnaw5Msjp0uK2BHSYEPtVRCwRSH3ydVLQE5yOJcTZxXUCk4l057TCXi
-----END PRIVATE KEY-----
";

/// The public half of [`TEST_EC_PRIVATE_KEY_PEM`].
pub const TEST_EC_PUBLIC_KEY_PEM: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEIWYeVSLPHYt0DlNHouP/yk7U2M1q
E+S52sOTLI6dLitgR0mBD7VUQsEUh98nVS0BOcjiXE2cV1ApOJdOe0wl4g==
-----END PUBLIC KEY-----
";

/// The pre-registered machine client the `client_credentials` grant accepts.
#[derive(Clone, Debug)]
pub enum MachineClient {
    /// `client_secret_basic` with this id and secret.
    SecretBasic {
        /// The client id.
        id: String,
        /// The client secret.
        secret: String,
    },
    /// `private_key_jwt` (ES256) for this id, verified with this public key.
    PrivateKeyJwt {
        /// The client id (`iss` and `sub` of the assertion).
        id: String,
        /// The PEM public key.
        public_key_pem: String,
    },
    /// Enterprise-managed: the identity provider at `<base>/idp` accepts
    /// `id_token` (from [`IDP_CLIENT_ID`] with [`IDP_CLIENT_SECRET`]);
    /// `/token` redeems ID-JAGs for client `id` authenticated with `secret`
    /// (`client_secret_basic`).
    Enterprise {
        /// The app's client id at the MCP server's authorization server.
        id: String,
        /// Its secret.
        secret: String,
        /// The one ID token the identity provider accepts.
        id_token: String,
    },
}

impl Shared {
    /// An access token without a refresh token (the client_credentials grant).
    pub(super) fn issue_access_only(&self) -> Value {
        let access = self.fresh("secret-cc");
        self.state
            .lock()
            .unwrap()
            .access
            .insert(access.clone(), Instant::now() + self.token_lifetime);
        json!({"access_token": access, "token_type": "Bearer",
               "expires_in": self.token_lifetime.as_secs()})
    }

    /// Checks the machine client's authentication; the error is the reason.
    pub(super) fn authenticate_machine(
        &self,
        headers: &HeaderMap,
        form: &BTreeMap<String, String>,
    ) -> Result<(), String> {
        use base64::Engine as _;
        match &self.machine {
            None => Err("no machine client is registered".into()),
            Some(
                MachineClient::SecretBasic { id, secret }
                | MachineClient::Enterprise { id, secret, .. },
            ) => {
                let basic = headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Basic "))
                    .ok_or("no Basic authorization header")?;
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(basic)
                    .map_err(|e| e.to_string())?;
                let decoded = String::from_utf8_lossy(&decoded).into_owned();
                if decoded != format!("{id}:{secret}") {
                    return Err("wrong client id or secret".into());
                }
                Ok(())
            }
            Some(MachineClient::PrivateKeyJwt { id, public_key_pem }) => {
                if form.get("client_assertion_type").map(String::as_str)
                    != Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
                {
                    return Err("wrong client_assertion_type".into());
                }
                if form.contains_key("client_secret") {
                    return Err("a client_secret next to the assertion".into());
                }
                let assertion = form.get("client_assertion").ok_or("no client_assertion")?;
                let key = jsonwebtoken::DecodingKey::from_ec_pem(public_key_pem.as_bytes())
                    .map_err(|e| e.to_string())?;
                let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
                validation.set_audience(&[self.base.as_str()]);
                validation.set_issuer(&[id.as_str()]);
                validation.sub = Some(id.clone());
                validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
                jsonwebtoken::decode::<Value>(assertion, &key, &validation)
                    .map(|_| ())
                    .map_err(|e| format!("assertion rejected: {e}"))
            }
        }
    }

    /// The identity provider's token exchange: the user's ID token for an
    /// ID-JAG bound to this authorization server and the MCP resource.
    pub(super) fn exchange_id_token(
        &self,
        headers: &HeaderMap,
        form: &BTreeMap<String, String>,
    ) -> Response {
        use base64::Engine as _;
        let Some(MachineClient::Enterprise { id, id_token, .. }) = &self.machine else {
            return oauth_error("unsupported_grant_type");
        };
        let refuse = |why: &str| {
            self.log.refusals.lock().unwrap().push(why.to_owned());
            oauth_error("invalid_grant")
        };
        let expected_basic = base64::engine::general_purpose::STANDARD
            .encode(format!("{IDP_CLIENT_ID}:{IDP_CLIENT_SECRET}"));
        if headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            != Some(format!("Basic {expected_basic}").as_str())
        {
            return refuse("idp: wrong client authentication");
        }
        let get = |k: &str| form.get(k).map(String::as_str);
        if get("grant_type") != Some("urn:ietf:params:oauth:grant-type:token-exchange")
            || get("requested_token_type") != Some("urn:ietf:params:oauth:token-type:id-jag")
            || get("subject_token_type") != Some("urn:ietf:params:oauth:token-type:id_token")
        {
            return refuse("idp: not an ID-JAG token exchange");
        }
        if get("subject_token") != Some(id_token.as_str()) {
            return refuse("idp: unknown ID token");
        }
        let resource = format!("{}/mcp", self.base);
        if get("audience") != Some(self.base.as_str()) || get("resource") != Some(resource.as_str())
        {
            return refuse("idp: wrong audience or resource");
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let mut jwt_header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        jwt_header.typ = Some("oauth-id-jag+jwt".into());
        let claims = json!({"iss": format!("{}/idp", self.base), "sub": "alice", "aud": self.base,
            "client_id": id, "resource": resource, "jti": self.fresh("jti"), "iat": now, "exp": now + 300});
        let key =
            jsonwebtoken::EncodingKey::from_ec_pem(TEST_EC_PRIVATE_KEY_PEM.as_bytes()).unwrap();
        let jag = jsonwebtoken::encode(&jwt_header, &claims, &key).unwrap();
        self.log.issued.lock().unwrap().push(jag.clone());
        self.log.token_exchanges.fetch_add(1, Ordering::Relaxed);
        axum::Json(
            json!({"access_token": jag, "token_type": "N_A", "expires_in": 300,
            "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"}),
        )
        .into_response()
    }

    /// The JWT-bearer grant: a valid ID-JAG for the authenticated client.
    pub(super) fn redeem_id_jag(
        &self,
        headers: &HeaderMap,
        form: &BTreeMap<String, String>,
    ) -> Response {
        let Some(MachineClient::Enterprise { id, .. }) = &self.machine else {
            return oauth_error("unsupported_grant_type");
        };
        if let Err(why) = self.authenticate_machine(headers, form) {
            self.log.refusals.lock().unwrap().push(why);
            return (
                StatusCode::UNAUTHORIZED,
                axum::Json(json!({"error": "invalid_client"})),
            )
                .into_response();
        }
        let key =
            jsonwebtoken::DecodingKey::from_ec_pem(TEST_EC_PUBLIC_KEY_PEM.as_bytes()).unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.set_audience(&[self.base.as_str()]);
        validation.set_issuer(&[format!("{}/idp", self.base)]);
        match jsonwebtoken::decode::<Value>(
            form.get("assertion").map_or("", |v| v),
            &key,
            &validation,
        ) {
            Ok(jag) if jag.claims["client_id"] == json!(id) => {
                self.log.jwt_bearer_grants.fetch_add(1, Ordering::Relaxed);
                axum::Json(self.issue_access_only()).into_response()
            }
            Ok(_) => {
                self.log
                    .refusals
                    .lock()
                    .unwrap()
                    .push("as: ID-JAG for another client".into());
                oauth_error("invalid_grant")
            }
            Err(e) => {
                self.log
                    .refusals
                    .lock()
                    .unwrap()
                    .push(format!("as: ID-JAG rejected: {e}"));
                oauth_error("invalid_grant")
            }
        }
    }
}
