//! The OAuth 2.1 resource server in front of the screen (MCP authorization,
//! RFC 9728, RFC 6750): Protected Resource Metadata at the well-known path,
//! and every request to the MCP endpoint needs a valid access token —
//! without one `401` with `WWW-Authenticate: Bearer resource_metadata="…"`
//! (and `error="invalid_token"` for a bad one), without a scope every call
//! needs `403 insufficient_scope` naming the scopes to ask for. A valid
//! token's caller goes into the request's extensions as a [`Caller`] and as
//! the [`ClientId`] the call limits count it under.

use super::super::caller::{Caller, ScopePolicy};
use super::super::resource_server::{OAuthResource, OAuthResourceError};
use super::client_id::ClientId;
use super::drain::drain;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

mod introspect;
mod issuer;
mod keys;
mod refusal;
mod verify;

use refusal::Refused;
use verify::Verifier;

/// RFC 9728's well-known path prefix.
const PRM_PATH: &str = "/.well-known/oauth-protected-resource";

/// A resource server ready to check tokens.
pub(crate) struct ResourceServer {
    verifier: Verifier,
    policy: Arc<ScopePolicy>,
    /// The absolute URL of the metadata document (for challenges).
    metadata_url: String,
    /// Its path on this server.
    metadata_path: String,
    /// The document.
    metadata: serde_json::Value,
}

impl ResourceServer {
    /// Checks `resource`'s settings; the server's own name goes into the
    /// metadata as `resource_name`.
    pub(crate) fn new(
        resource: &OAuthResource,
        resource_name: &str,
    ) -> Result<Self, OAuthResourceError> {
        checked_url("issuer", &resource.issuer)?;
        let audience = checked_url("audience", &resource.audience)?;
        let jwks_uri = match &resource.jwks_uri {
            Some(uri) => Some(checked_url("jwksUri", uri)?),
            None => None,
        };
        let introspection_endpoint = match &resource.introspection_endpoint {
            Some(uri) => Some(checked_url("introspectionEndpoint", uri)?),
            None => None,
        };
        let policy = Arc::new(ScopePolicy::of(resource)?);
        let path = audience.path().trim_end_matches('/');
        let metadata_path = format!("{PRM_PATH}{path}");
        let mut metadata_url = audience.clone();
        metadata_url.set_path(&metadata_path);
        metadata_url.set_query(None);
        let metadata = serde_json::json!({
            "resource": resource.audience,
            "authorization_servers": [resource.issuer],
            "scopes_supported": policy.all_scopes(),
            "bearer_methods_supported": ["header"],
            "resource_name": resource_name,
        });
        // The settings keep their spelling: `iss` and `aud` are compared
        // as strings.
        let issuer = Arc::new(issuer::Issuer::new(resource.issuer.clone()));
        let introspector = match &resource.introspection {
            Some(client) if client.client_id.is_empty() => {
                return Err(OAuthResourceError::IntrospectionWithoutClientId);
            }
            Some(client) => Some(introspect::Introspector::new(
                issuer.clone(),
                resource.audience.clone(),
                resource.clock_skew,
                (client.client_id.clone(), client.client_secret.clone()),
                introspection_endpoint,
            )),
            None if introspection_endpoint.is_some() => {
                return Err(OAuthResourceError::IntrospectionEndpointWithoutClient);
            }
            None => None,
        };
        Ok(Self {
            verifier: Verifier {
                issuer: resource.issuer.clone(),
                audience: resource.audience.clone(),
                skew: resource.clock_skew,
                keys: keys::KeyCache::new(issuer, jwks_uri),
                introspector,
            },
            policy,
            metadata_url: metadata_url.to_string(),
            metadata_path,
            metadata,
        })
    }

    /// `app` behind the token check, with the metadata beside it (not
    /// behind it: clients read it before they have a token).
    pub(crate) fn protect(self: Arc<Self>, app: axum::Router) -> axum::Router {
        let doc = Arc::new(self.metadata.clone());
        let serve_doc = move || {
            let doc = doc.clone();
            async move {
                let mut res = axum::Json(doc.as_ref().clone()).into_response();
                res.headers_mut().insert(
                    header::ACCESS_CONTROL_ALLOW_ORIGIN,
                    HeaderValue::from_static("*"),
                );
                res
            }
        };
        let mut app = app
            .layer(middleware::from_fn_with_state(self.clone(), require_token))
            .route(&self.metadata_path, axum::routing::get(serve_doc.clone()));
        if self.metadata_path != PRM_PATH {
            app = app.route(PRM_PATH, axum::routing::get(serve_doc));
        }
        app
    }

    /// `WWW-Authenticate` for a refusal: the metadata URL, and the error and
    /// scopes when there are.
    fn challenge(&self, error: Option<(&str, &str)>, scopes: &[&str]) -> HeaderValue {
        let mut v = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if let Some((code, description)) = error {
            v.push_str(&format!(
                ", error=\"{code}\", error_description=\"{description}\""
            ));
        }
        if !scopes.is_empty() {
            v.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
        }
        HeaderValue::from_str(&v).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
    }

    /// A `401`/`403` answer with its challenge.
    pub(super) fn refuse(
        &self,
        status: StatusCode,
        error: Option<(&str, &str)>,
        scopes: &[&str],
    ) -> Response {
        let body = match error {
            Some((code, description)) => {
                serde_json::json!({ "error": code, "error_description": description })
            }
            None => serde_json::json!({ "error": "invalid_request",
                "error_description": "this server needs an OAuth access token (see the resource_metadata of WWW-Authenticate)" }),
        };
        let mut res = (status, axum::Json(body)).into_response();
        res.headers_mut()
            .insert(header::WWW_AUTHENTICATE, self.challenge(error, scopes));
        res
    }

    /// `403 insufficient_scope` for a call that needs `needed`.
    pub(super) fn insufficient_scope(&self, needed: &[&str]) -> Response {
        self.refuse(
            StatusCode::FORBIDDEN,
            Some((
                "insufficient_scope",
                "the token lacks a scope this call needs; ask for the scopes named",
            )),
            needed,
        )
    }
}

/// `value` as a URL a resource server may trust: `https`, or `http` on a
/// loopback host; no fragment.
fn checked_url(what: &'static str, value: &str) -> Result<reqwest::Url, OAuthResourceError> {
    let invalid = || OAuthResourceError::InvalidUrl {
        what,
        value: value.to_owned(),
    };
    let url = reqwest::Url::parse(value).map_err(|_| invalid())?;
    let loopback = url.host_str().is_some_and(super::is_loopback);
    let scheme_ok = url.scheme() == "https" || (url.scheme() == "http" && loopback);
    if !scheme_ok || url.fragment().is_some() || url.host_str().is_none() {
        return Err(invalid());
    }
    Ok(url)
}

/// Checks the access token of a request to the MCP endpoint.
async fn require_token(
    State(rs): State<Arc<ResourceServer>>,
    mut req: Request,
    next: Next,
) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| super::bearer_token(v.as_bytes()))
        .and_then(|t| std::str::from_utf8(t).ok())
        .map(str::to_owned);
    let required: Vec<&str> = rs.policy.required().iter().map(String::as_str).collect();
    let Some(token) = token else {
        drain(req).await;
        return rs.refuse(StatusCode::UNAUTHORIZED, None, &required);
    };
    let claims = match rs.verifier.verify(&token).await {
        Ok(claims) => claims,
        Err(Refused::Invalid(why)) => {
            tracing::info!(reason = why, "refused an access token");
            drain(req).await;
            return rs.refuse(
                StatusCode::UNAUTHORIZED,
                Some(("invalid_token", why)),
                &required,
            );
        }
        Err(e @ (Refused::Unavailable(_) | Refused::Introspection(_))) => {
            drain(req).await;
            let mut res = (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cannot check the access token now: {e}"),
            )
                .into_response();
            res.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(keys::MIN_REFETCH.as_secs()),
            );
            return res;
        }
    };
    let caller = Caller {
        issuer: claims.iss.as_str().into(),
        subject: claims.sub.as_str().into(),
        scopes: Arc::new(claims.scopes()),
        policy: rs.policy.clone(),
    };
    let lacking = caller.lacks(&required);
    if !lacking.is_empty() {
        tracing::info!(subject = %caller.subject, "refused a token without a scope every call needs");
        drain(req).await;
        return rs.insufficient_scope(&required);
    }
    req.extensions_mut().insert(ClientId::Caller(caller.key()));
    req.extensions_mut().insert(caller);
    req.extensions_mut().insert(rs.clone());
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_urls_are_trusted() {
        for ok in [
            "https://idp.example.com",
            "https://idp.example.com/realms/x",
            "http://127.0.0.1:8080",
            "http://localhost/x",
        ] {
            assert!(checked_url("issuer", ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://idp.example.com",
            "idp.example.com",
            "https://idp.example.com/#x",
            "ftp://127.0.0.1",
        ] {
            assert!(checked_url("issuer", bad).is_err(), "{bad}");
        }
    }
}
