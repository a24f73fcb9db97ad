//! Talking to the authorization server: one HTTP client (bounded time, no
//! redirects), its metadata (RFC 8414, else OpenID discovery) for the
//! endpoints it names, and bounded JSON answers.

use reqwest::Url;
use std::time::Duration;

/// The largest metadata, JWKS or introspection document read.
pub(super) const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// How long one request to the authorization server may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// A request to the authorization server failed; the text names the URL and
/// what went wrong, never a token or a secret.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(super) struct FetchError(pub(super) String);

/// The authorization server as this resource server reaches it.
pub(super) struct Issuer {
    http: reqwest::Client,
    /// Its issuer URL, as configured (compared as a string).
    pub(super) issuer: String,
}

impl Issuer {
    pub(super) fn new(issuer: String) -> Self {
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self { http, issuer }
    }

    /// The URL its metadata names under `field` (`jwks_uri`,
    /// `introspection_endpoint`): RFC 8414 metadata, then OpenID discovery;
    /// the document's `issuer` must be the one configured. `setting` names
    /// the setting that gives the URL instead (for errors).
    pub(super) async fn discover(
        &self,
        field: &'static str,
        setting: &'static str,
    ) -> Result<Url, FetchError> {
        let mut last = String::new();
        for url in metadata_urls(&self.issuer)? {
            match self.get_json(url.clone()).await {
                Ok(meta) => {
                    if meta.get("issuer").and_then(|i| i.as_str()) != Some(self.issuer.as_str()) {
                        last = format!("{url} names another issuer");
                        continue;
                    }
                    let found = meta.get(field).and_then(|j| j.as_str()).ok_or_else(|| {
                        FetchError(format!(
                            "{url} has no {field}; set `{setting}` to the authorization server's URL for it"
                        ))
                    })?;
                    return super::checked_url(setting, found)
                        .map_err(|e| FetchError(e.to_string()));
                }
                Err(e) => last = e.to_string(),
            }
        }
        Err(FetchError(last))
    }

    /// GETs `url` as JSON.
    pub(super) async fn get_json(&self, url: Url) -> Result<serde_json::Value, FetchError> {
        let req = self
            .http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        let (status, body) = self.send(&url, req).await?;
        if !status.is_success() {
            return Err(FetchError(format!("{url}: HTTP {}", status.as_u16())));
        }
        json(&url, &body)
    }

    /// POSTs `form` (already `application/x-www-form-urlencoded`) to `url`
    /// with HTTP Basic client authentication: the status and the body.
    pub(super) async fn post_form(
        &self,
        url: &Url,
        basic: (&str, &str),
        form: String,
    ) -> Result<(reqwest::StatusCode, Vec<u8>), FetchError> {
        let req = self
            .http
            .post(url.clone())
            .basic_auth(form_encode(basic.0), Some(form_encode(basic.1)))
            .header(reqwest::header::ACCEPT, "application/json")
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form);
        self.send(url, req).await
    }

    /// Sends `req` and reads at most [`MAX_DOCUMENT_BYTES`] of its answer.
    async fn send(
        &self,
        url: &Url,
        req: reqwest::RequestBuilder,
    ) -> Result<(reqwest::StatusCode, Vec<u8>), FetchError> {
        // reqwest's errors name the URL (no secret is ever in one here).
        let failed = |what: String| FetchError(format!("{url}: {what}"));
        let mut res = req.send().await.map_err(|e| failed(e.to_string()))?;
        let status = res.status();
        let mut body = Vec::new();
        while let Some(chunk) = res.chunk().await.map_err(|e| failed(e.to_string()))? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(failed(format!("over {MAX_DOCUMENT_BYTES} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, body))
    }
}

/// `body` as JSON.
pub(super) fn json(url: &Url, body: &[u8]) -> Result<serde_json::Value, FetchError> {
    serde_json::from_slice(body).map_err(|e| FetchError(format!("{url}: {e}")))
}

/// `pairs` as an `application/x-www-form-urlencoded` string.
pub(super) fn form(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// `s` by the `application/x-www-form-urlencoded` byte serializer (also what
/// RFC 6749 §2.3.1 applies to client credentials before HTTP Basic).
pub(super) fn form_encode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Where the issuer's metadata may be: RFC 8414's
/// `/.well-known/oauth-authorization-server` inserted before the issuer's
/// path, then OpenID's `/.well-known/openid-configuration` appended to it.
fn metadata_urls(issuer: &str) -> Result<[Url; 2], FetchError> {
    let base = Url::parse(issuer).map_err(|e| FetchError(e.to_string()))?;
    let path = base.path().trim_end_matches('/');
    let mut rfc8414 = base.clone();
    rfc8414.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
    let mut openid = base.clone();
    openid.set_path(&format!("{path}/.well-known/openid-configuration"));
    Ok([rfc8414, openid])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_both_specs_put_it() {
        let [a, b] = metadata_urls("https://idp.example/realms/x").unwrap();
        assert_eq!(
            a.as_str(),
            "https://idp.example/.well-known/oauth-authorization-server/realms/x"
        );
        assert_eq!(
            b.as_str(),
            "https://idp.example/realms/x/.well-known/openid-configuration"
        );
        let [a, b] = metadata_urls("https://idp.example").unwrap();
        assert_eq!(
            a.as_str(),
            "https://idp.example/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            b.as_str(),
            "https://idp.example/.well-known/openid-configuration"
        );
    }

    #[test]
    fn forms_are_url_encoded() {
        assert_eq!(form(&[("a", "x y"), ("b", "+&=")]), "a=x+y&b=%2B%26%3D");
    }
}
