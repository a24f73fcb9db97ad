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

mod machine;

pub use machine::{
    IDP_CLIENT_ID, IDP_CLIENT_SECRET, MachineClient, TEST_EC_PRIVATE_KEY_PEM,
    TEST_EC_PUBLIC_KEY_PEM,
};

/// What the authorization server saw and issued.
#[derive(Debug, Default)]
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
    /// While true, the MCP server rejects every token (401).
    pub reject_tokens: Arc<AtomicBool>,
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
    reject_tokens: Arc<AtomicBool>,
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
        reject_tokens: Arc::default(),
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
                let live = !s.reject_tokens.load(Ordering::Relaxed) && token.is_some_and(|t| {
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
        reject_tokens: shared.reject_tokens.clone(),
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

impl std::fmt::Debug for OAuthFixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthFixture")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}
