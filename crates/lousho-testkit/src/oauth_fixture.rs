//! An OAuth-protected MCP server on 127.0.0.1: a small authorization server
//! (protected-resource and authorization-server metadata, dynamic client
//! registration, `/authorize` that approves at once with a 302, `/token`
//! for codes and refresh tokens) in front of the [`Fixture`] MCP server,
//! which only answers requests with a live bearer token.
//!
//! The authorization server checks what a real one would: PKCE S256
//! (`code_verifier` against the stored challenge), the RFC 8707 `resource`
//! in both requests, the redirect URI, single-use codes and refresh tokens.
//!
//! With [`MachineClient`] it also serves the `client_credentials` grant
//! (SEP-1046) for one pre-registered client, authenticated with
//! `client_secret_basic` or a `private_key_jwt` assertion (ES256, verified
//! against [`TEST_EC_PUBLIC_KEY_PEM`]), or enterprise-managed authorization
//! (SEP-990): an identity provider at `<base>/idp` exchanges one user's ID
//! token for an ID-JAG (signed with the test key), which `/token` redeems
//! with the JWT-bearer grant.

use crate::mcp_fixture::Fixture;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the authorization server saw and issued.
#[derive(Default)]
pub struct AuthLog {
    /// `/register` calls.
    pub registrations: AtomicU64,
    /// `/authorize` calls.
    pub authorizations: AtomicU64,
    /// Code exchanges.
    pub code_exchanges: AtomicU64,
    /// Refresh-token grants.
    pub refreshes: AtomicU64,
    /// Every access and refresh token issued (to look for them in logs).
    pub issued: Mutex<Vec<String>>,
    /// The `resource` of each authorize and token request.
    pub resources: Mutex<Vec<String>>,
    /// Requests to `/mcp` with a live token.
    pub authorized_mcp_requests: AtomicU64,
    /// `client_credentials` grants that succeeded.
    pub client_credentials_grants: AtomicU64,
    /// Why `client_credentials` / enterprise requests were refused.
    pub refusals: Mutex<Vec<String>>,
    /// Token exchanges at the identity provider that issued an ID-JAG.
    pub token_exchanges: AtomicU64,
    /// JWT-bearer grants that issued an access token.
    pub jwt_bearer_grants: AtomicU64,
}

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

#[derive(Default)]
struct AsState {
    codes: HashMap<String, (String, String)>, // code → (code_challenge, redirect_uri)
    access: HashMap<String, Instant>,         // token → expiry
    refresh: HashMap<String, ()>,
}

/// The running fixture.
pub struct OAuthFixture {
    /// The MCP endpoint (`http://127.0.0.1:<port>/mcp`).
    pub url: String,
    /// What the authorization server saw.
    pub log: Arc<AuthLog>,
    /// While true, refresh grants are rejected with `invalid_grant`.
    pub reject_refresh: Arc<AtomicBool>,
    state: Arc<Mutex<AsState>>,
    shutdown: tokio_util::sync::CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl OAuthFixture {
    /// Forgets every access token issued so far (the server then answers
    /// them with 401, as after a revocation).
    pub fn revoke_access_tokens(&self) {
        self.state.lock().unwrap().access.clear();
    }

    /// Stops the server.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

#[derive(Clone)]
struct Shared {
    base: String,
    token_lifetime: Duration,
    log: Arc<AuthLog>,
    state: Arc<Mutex<AsState>>,
    reject_refresh: Arc<AtomicBool>,
    counter: Arc<AtomicU64>,
    machine: Option<MachineClient>,
}

impl Shared {
    fn fresh(&self, prefix: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let token = format!("{prefix}-{n}-{nanos:x}");
        self.log.issued.lock().unwrap().push(token.clone());
        token
    }

    /// An access token without a refresh token (the client_credentials grant).
    fn issue_access_only(&self) -> Value {
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
    fn authenticate_machine(
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
    fn exchange_id_token(&self, headers: &HeaderMap, form: &BTreeMap<String, String>) -> Response {
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
    fn redeem_id_jag(&self, headers: &HeaderMap, form: &BTreeMap<String, String>) -> Response {
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

    fn issue(&self) -> Value {
        let access = self.fresh("secret-at");
        let refresh = self.fresh("secret-rt");
        let mut st = self.state.lock().unwrap();
        st.access
            .insert(access.clone(), Instant::now() + self.token_lifetime);
        st.refresh.insert(refresh.clone(), ());
        json!({"access_token": access, "token_type": "Bearer",
               "expires_in": self.token_lifetime.as_secs(), "refresh_token": refresh})
    }
}

fn pairs(raw: &str) -> BTreeMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{raw}"))
        .map(|u| {
            u.query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

fn s256(verifier: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()))
}

fn oauth_error(code: &str) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": code}))).into_response()
}

/// Serves the fixture; access tokens live `token_lifetime` (the token
/// response says so in `expires_in`).
pub async fn serve_oauth(token_lifetime: Duration) -> OAuthFixture {
    serve_oauth_with(token_lifetime, None).await
}

/// Serves the fixture with a pre-registered machine client for the
/// `client_credentials` grant (advertised in the metadata with its
/// authentication method; dynamic registration stays available).
pub async fn serve_oauth_with(
    token_lifetime: Duration,
    machine: Option<MachineClient>,
) -> OAuthFixture {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let ct = tokio_util::sync::CancellationToken::new();
    let shared = Shared {
        base: base.clone(),
        token_lifetime,
        log: Arc::default(),
        state: Arc::default(),
        reject_refresh: Arc::default(),
        counter: Arc::default(),
        machine,
    };
    let fixture = Fixture::new();
    let svc = StreamableHttpService::new(
        move || Ok(fixture.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token()),
    );
    let guard = shared.clone();
    let mcp = axum::Router::new().nest_service("/mcp", svc).layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let s = guard.clone();
            async move {
                let token = req
                    .headers()
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .map(str::to_owned);
                let live = token.is_some_and(|t| {
                    s.state.lock().unwrap().access.get(&t).is_some_and(|exp| *exp > Instant::now())
                });
                if !live {
                    let challenge = format!(
                        "Bearer error=\"invalid_token\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                        s.base
                    );
                    return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
                }
                s.log.authorized_mcp_requests.fetch_add(1, Ordering::Relaxed);
                next.run(req).await
            }
        },
    ));
    let s = shared.clone();
    let prm = move || {
        let s = s.clone();
        async move {
            axum::Json(
                json!({"resource": format!("{}/mcp", s.base), "authorization_servers": [s.base]}),
            )
        }
    };
    let s = shared.clone();
    let asm = move || {
        let s = s.clone();
        async move {
            let b = &s.base;
            let mut metadata = json!({
                "issuer": b,
                "authorization_endpoint": format!("{b}/authorize"),
                "token_endpoint": format!("{b}/token"),
                "registration_endpoint": format!("{b}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"]
            });
            match &s.machine {
                Some(MachineClient::SecretBasic { .. }) => {
                    metadata["grant_types_supported"] = json!(["client_credentials"]);
                    metadata["token_endpoint_auth_methods_supported"] =
                        json!(["client_secret_basic"]);
                }
                Some(MachineClient::Enterprise { .. }) => {
                    metadata["grant_types_supported"] =
                        json!(["urn:ietf:params:oauth:grant-type:jwt-bearer"]);
                    metadata["token_endpoint_auth_methods_supported"] =
                        json!(["client_secret_basic"]);
                }
                Some(MachineClient::PrivateKeyJwt { .. }) => {
                    metadata["grant_types_supported"] = json!(["client_credentials"]);
                    metadata["token_endpoint_auth_methods_supported"] = json!(["private_key_jwt"]);
                    metadata["token_endpoint_auth_signing_alg_values_supported"] = json!(["ES256"]);
                }
                None => {}
            }
            axum::Json(metadata)
        }
    };
    let s = shared.clone();
    let register = move |body: Bytes| {
        let s = s.clone();
        async move {
            s.log.registrations.fetch_add(1, Ordering::Relaxed);
            let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            (
                StatusCode::CREATED,
                axum::Json(
                    json!({"client_id": "fixture-client", "redirect_uris": req["redirect_uris"]}),
                ),
            )
        }
    };
    let s = shared.clone();
    let authorize = move |uri: Uri| {
        let s = s.clone();
        async move {
            s.log.authorizations.fetch_add(1, Ordering::Relaxed);
            let q = pairs(uri.query().unwrap_or_default());
            s.log
                .resources
                .lock()
                .unwrap()
                .push(q.get("resource").cloned().unwrap_or_default());
            if q.get("code_challenge_method").map(String::as_str) != Some("S256")
                || q.get("resource") != Some(&format!("{}/mcp", s.base))
            {
                return oauth_error("invalid_request");
            }
            let code = s.fresh("code");
            let redirect = q.get("redirect_uri").cloned().unwrap_or_default();
            s.state.lock().unwrap().codes.insert(
                code.clone(),
                (
                    q.get("code_challenge").cloned().unwrap_or_default(),
                    redirect.clone(),
                ),
            );
            let mut to = reqwest::Url::parse(&redirect).unwrap();
            to.query_pairs_mut()
                .append_pair("code", &code)
                .append_pair("state", q.get("state").map_or("", |v| v));
            (StatusCode::FOUND, [(header::LOCATION, to.to_string())]).into_response()
        }
    };
    let s = shared.clone();
    let token = move |headers: HeaderMap, body: Bytes| {
        let s = s.clone();
        async move {
            let f = pairs(&String::from_utf8_lossy(&body));
            if f.get("grant_type").map(String::as_str)
                == Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
            {
                // The ID-JAG carries the resource; nothing else is sent.
                return s.redeem_id_jag(&headers, &f);
            }
            s.log
                .resources
                .lock()
                .unwrap()
                .push(f.get("resource").cloned().unwrap_or_default());
            if f.get("resource") != Some(&format!("{}/mcp", s.base)) {
                return oauth_error("invalid_target");
            }
            match f.get("grant_type").map(String::as_str) {
                Some("authorization_code") => {
                    let entry = s
                        .state
                        .lock()
                        .unwrap()
                        .codes
                        .remove(f.get("code").map_or("", |v| v));
                    let Some((challenge, redirect)) = entry else {
                        return oauth_error("invalid_grant");
                    };
                    let verifier = f.get("code_verifier").cloned().unwrap_or_default();
                    if s256(&verifier) != challenge || f.get("redirect_uri") != Some(&redirect) {
                        return oauth_error("invalid_grant");
                    }
                    s.log.code_exchanges.fetch_add(1, Ordering::Relaxed);
                    axum::Json(s.issue()).into_response()
                }
                Some("refresh_token") => {
                    let presented = f.get("refresh_token").cloned().unwrap_or_default();
                    let known = s.state.lock().unwrap().refresh.remove(&presented).is_some();
                    if !known || s.reject_refresh.load(Ordering::Relaxed) {
                        return oauth_error("invalid_grant");
                    }
                    s.log.refreshes.fetch_add(1, Ordering::Relaxed);
                    axum::Json(s.issue()).into_response()
                }
                Some("client_credentials") => match s.authenticate_machine(&headers, &f) {
                    Ok(()) => {
                        s.log
                            .client_credentials_grants
                            .fetch_add(1, Ordering::Relaxed);
                        axum::Json(s.issue_access_only()).into_response()
                    }
                    Err(why) => {
                        s.log.refusals.lock().unwrap().push(why);
                        (
                            StatusCode::UNAUTHORIZED,
                            axum::Json(json!({"error": "invalid_client"})),
                        )
                            .into_response()
                    }
                },
                _ => oauth_error("unsupported_grant_type"),
            }
        }
    };
    let s = shared.clone();
    let idp_config = move || {
        let s = s.clone();
        async move {
            let idp = format!("{}/idp", s.base);
            axum::Json(
                json!({"issuer": idp, "token_endpoint": format!("{idp}/token"),
                "authorization_endpoint": format!("{idp}/authorize"),
                "grant_types_supported": ["urn:ietf:params:oauth:grant-type:token-exchange"]}),
            )
        }
    };
    let s = shared.clone();
    let idp_token = move |headers: HeaderMap, body: Bytes| {
        let s = s.clone();
        async move { s.exchange_id_token(&headers, &pairs(&String::from_utf8_lossy(&body))) }
    };
    let app = axum::Router::new()
        .route("/idp/.well-known/openid-configuration", get(idp_config))
        .route("/idp/token", post(idp_token))
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(asm))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .merge(mcp);
    let stop = ct.clone();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    });
    OAuthFixture {
        url: format!("{base}/mcp"),
        log: shared.log.clone(),
        reject_refresh: shared.reject_refresh.clone(),
        state: shared.state.clone(),
        shutdown: ct,
        task: Some(task),
    }
}

/// Plays the operator's browser for a URL `login` hands out: follows the
/// authorization server's redirect to the loopback listener.
pub fn approve_in_background(authorization_url: &str) {
    let url = authorization_url.to_owned();
    tokio::spawn(async move {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let response = http.get(&url).send().await.unwrap();
        let location = response.headers()[header::LOCATION.as_str()]
            .to_str()
            .unwrap()
            .to_owned();
        let _ = http.get(location).send().await;
    });
}

/// A free loopback port for a redirect URI.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
