//! A real authorization server for the resource-server tests: panva's
//! `oidc-provider` (pinned in `interop/package.json`), started by
//! `interop/oidc/provider.mjs` on 127.0.0.1 at a free port. It issues JWT
//! access tokens for any loopback resource indicator with the scopes
//! `mcp:use mcp:research mcp:admin`, to the `client_credentials` clients
//! `alice` and `bob` (their `sub` is their client id) and, by
//! authorization code with PKCE, to any user who signs in on its
//! development sign-in and consent pages — which [`sign_in`] fills in as a
//! browser would. The client `carol` gets opaque access tokens instead,
//! which a resource server introspects (RFC 7662) as the client
//! `mcp-server` ([`INTROSPECTION_CLIENT`]); [`Idp::introspections`] counts
//! the introspection requests, [`Idp::revoke`] revokes a token.
//!
//! Its signing key is handed to the test, so tests can forge tokens with
//! the issuer's key but wrong claims ([`Idp::forge`]), or with a key it does
//! not know ([`Idp::forge_stranger`]).

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The client a resource server introspects tokens as, and its secret.
pub const INTROSPECTION_CLIENT: (&str, &str) = ("mcp-server", "mcp-server-secret");

/// A running `oidc-provider`; stops when dropped.
pub struct Idp {
    _child: tokio::process::Child,
    /// Its issuer URL (`http://127.0.0.1:<port>`).
    pub issuer: String,
    /// The key id of its signing key.
    pub kid: String,
    key: EncodingKey,
    stranger: EncodingKey,
}

/// The interop folder of the repository.
fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop")
}

impl Idp {
    /// Starts it, or `None` (the test skips) when `oidc-provider` is not
    /// installed — under `CI=true` that panics instead.
    pub async fn start() -> Option<Idp> {
        let installed = interop_dir().join("node_modules/oidc-provider/package.json");
        if !installed.exists() {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!(
                    "interop peer {} is missing: run interop/install.sh",
                    installed.display()
                );
            }
            eprintln!("skipping: oidc-provider is not installed (run interop/install.sh)");
            return None;
        }
        let mut child = tokio::process::Command::new("node")
            .arg(interop_dir().join("oidc/provider.mjs"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        let mut stdout = BufReader::new(stdout);
        let read = stdout.read_line(&mut line);
        tokio::time::timeout(Duration::from_secs(60), read)
            .await
            .expect("oidc-provider starts within 60 s")
            .expect("oidc-provider's first line");
        let start: Value = serde_json::from_str(&line).expect("oidc-provider's start line");
        let pem = |k: &str| {
            EncodingKey::from_rsa_pem(start[k].as_str().expect("a PEM").as_bytes()).expect("RSA")
        };
        Some(Idp {
            issuer: start["issuer"].as_str().expect("issuer").to_owned(),
            kid: start["kid"].as_str().expect("kid").to_owned(),
            key: pem("privateKeyPem"),
            stranger: pem("strangerKeyPem"),
            _child: child,
        })
    }

    /// A token from the `client_credentials` grant for `client` (`alice` or
    /// `bob`) for `resource`, with `scope` (space-separated).
    pub async fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let res = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", scope),
            ]))
            .send()
            .await
            .expect("the token endpoint answers");
        let status = res.status();
        let body: Value = res.json().await.expect("a JSON token response");
        assert!(status.is_success(), "token request failed: {body}");
        body["access_token"]
            .as_str()
            .expect("an access token")
            .to_owned()
    }

    /// How many introspection requests the issuer has had so far.
    pub async fn introspections(&self) -> u64 {
        let body: Value = reqwest::get(format!("{}/test/introspections", self.issuer))
            .await
            .expect("the issuer answers")
            .json()
            .await
            .expect("a JSON count");
        body["introspections"].as_u64().expect("a count")
    }

    /// Revokes `token` (RFC 7009) as `client`, whose token it is.
    pub async fn revoke(&self, client: &str, token: &str) {
        let res = reqwest::Client::new()
            .post(format!("{}/token/revocation", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[
                ("token", token),
                ("token_type_hint", "access_token"),
            ]))
            .send()
            .await
            .expect("the revocation endpoint answers");
        assert!(res.status().is_success(), "revocation: {}", res.status());
    }

    /// Claims as the issuer would put them, for `sub` and `aud`, valid for
    /// five minutes from now.
    pub fn claims(&self, sub: &str, aud: &str, scope: &str) -> Value {
        let now = now();
        serde_json::json!({
            "iss": self.issuer, "sub": sub, "aud": aud, "scope": scope,
            "iat": now, "exp": now + 300, "client_id": sub, "jti": format!("forged-{now}"),
        })
    }

    /// `claims` signed with the issuer's own key (RS256, its kid).
    pub fn forge(&self, claims: &Value) -> String {
        sign(&self.key, Some(&self.kid), claims)
    }

    /// `claims` signed with a key the issuer does not know, under `kid`.
    pub fn forge_stranger(&self, kid: &str, claims: &Value) -> String {
        sign(&self.stranger, Some(kid), claims)
    }
}

/// Plays the user's browser for one authorization: opens
/// `authorization_url`, keeps the cookies the authorization at `issuer` sets,
/// follows its redirects, fills in its sign-in form as `user` (any password)
/// and posts its consent form, and returns the URL it finally redirects to
/// outside the issuer — the client's redirect URI with `code` and `state`
/// (or `error`), which it does not open.
///
/// Panics on anything a browser would show the user as an error.
pub async fn sign_in(issuer: &str, user: &str, authorization_url: &str) -> String {
    let issuer = reqwest::Url::parse(issuer).expect("the issuer is a URL");
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("an HTTP client");
    let mut cookies = std::collections::BTreeMap::<String, String>::new();
    let mut url = reqwest::Url::parse(authorization_url).expect("the authorization URL is a URL");
    let mut post: Option<String> = None;
    for _ in 0..20 {
        if url.origin() != issuer.origin() {
            return url.to_string();
        }
        let mut request = match post.take() {
            Some(body) => http
                .post(url.clone())
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body),
            None => http.get(url.clone()),
        };
        if !cookies.is_empty() {
            let jar: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
            request = request.header(reqwest::header::COOKIE, jar.join("; "));
        }
        let response = request
            .send()
            .await
            .expect("the authorization server answers");
        for set in response.headers().get_all(reqwest::header::SET_COOKIE) {
            let set = set.to_str().expect("an ASCII cookie");
            let pair = set.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                if value.is_empty() {
                    cookies.remove(name.trim());
                } else {
                    cookies.insert(name.trim().to_owned(), value.to_owned());
                }
            }
        }
        let status = response.status();
        if status.is_redirection() {
            let location = response.headers()[reqwest::header::LOCATION]
                .to_str()
                .expect("an ASCII location");
            url = url.join(location).expect("a redirect to a URL");
            continue;
        }
        let page = response.text().await.unwrap_or_default();
        assert!(status.is_success(), "{url} answered {status}: {page}");
        let (action, mut fields) =
            page_form(&page).unwrap_or_else(|| panic!("no form on {url}: {page}"));
        if page.contains("name=\"login\"") {
            fields.push(("login".into(), user.into()));
            fields.push(("password".into(), "any".into()));
        }
        let pairs: Vec<(&str, &str)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        post = Some(form(&pairs));
        url = url.join(&action).expect("a form action URL");
    }
    panic!("the authorization server never redirected back to the client");
}

/// [`sign_in`] in the background, then opens the redirect (the client's
/// loopback listener catches it) — an `on_authorize_url` for
/// `lousho::mcp::oauth::login`.
pub fn sign_in_in_background(issuer: &str, user: &str, authorization_url: &str) {
    let (issuer, user, url) = (
        issuer.to_owned(),
        user.to_owned(),
        authorization_url.to_owned(),
    );
    tokio::spawn(async move {
        let back = sign_in(&issuer, &user, &url).await;
        let _ = reqwest::get(back).await;
    });
}

/// The first form on `page`: its action and its hidden fields.
fn page_form(page: &str) -> Option<(String, Vec<(String, String)>)> {
    let start = page.find("<form")?;
    let end = page[start..]
        .find("</form>")
        .map_or(page.len(), |e| start + e);
    let form = &page[start..end];
    let tag = &form[..form.find('>')?];
    let action = attribute(tag, "action")?;
    let mut fields = Vec::new();
    for input in form.split("<input").skip(1) {
        let tag = input.split('>').next().unwrap_or_default();
        if attribute(tag, "type").as_deref() == Some("hidden")
            && let (Some(name), Some(value)) = (attribute(tag, "name"), attribute(tag, "value"))
        {
            fields.push((name, value));
        }
    }
    Some((action, fields))
}

/// The value of `name="…"` in an HTML tag, its entities decoded.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let value = &tag[start..start + tag[start..].find('"')?];
    Some(
        value
            .replace("&#x2F;", "/")
            .replace("&#47;", "/")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

/// `pairs` as an `application/x-www-form-urlencoded` body.
fn form(pairs: &[(&str, &str)]) -> String {
    reqwest::Url::parse_with_params("x:", pairs)
        .expect("a URL")
        .query()
        .unwrap_or_default()
        .to_owned()
}

impl std::fmt::Debug for Idp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idp")
            .field("issuer", &self.issuer)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn sign(key: &EncodingKey, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.typ = Some("at+jwt".into());
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, key).expect("signs")
}

/// `claims` as an unsigned token (`alg: none`).
pub fn unsigned(claims: &Value) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = b64.encode(br#"{"alg":"none","typ":"at+jwt"}"#);
    let payload = b64.encode(claims.to_string());
    format!("{header}.{payload}.")
}

/// `claims` signed with HS256 under `secret` and `kid` (what an attacker
/// does with a public key as the "secret").
pub fn hs256(secret: &[u8], kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret)).expect("signs")
}
