//! An OAuth 2.1 resource server's settings ([`OAuthResource`]): which
//! authorization server issues the access tokens a served agent accepts,
//! for which audience, and which scopes open which tools.
//!
//! The checks themselves run in front of rmcp's HTTP service
//! (`http/oauth`); the caller a token names travels with the request as a
//! [`Caller`](super::caller::Caller).

use std::time::Duration;

/// The default allowance for clocks that differ between the authorization
/// server and this one, for `exp` and `nbf` (30 s).
pub const DEFAULT_OAUTH_CLOCK_SKEW: Duration = Duration::from_secs(30);

/// An OAuth-protected HTTP server ([`Auth::oauth`](super::Auth::oauth);
/// spec: `serve.auth: { type: oauth, … }`): it publishes Protected Resource
/// Metadata (RFC 9728) and accepts only JWT access tokens that `issuer`
/// signed (keys from its JWKS, discovered from its metadata) for `audience`
/// (RFC 8707 resource), not expired and not before their time — and, with
/// [`introspection`](Self::introspection), opaque tokens the issuer's
/// introspection endpoint (RFC 7662) says are active for `audience`.
///
/// ```
/// use lousho::mcp::{Auth, OAuthResource};
/// let auth = Auth::oauth(
///     OAuthResource::new("https://idp.example.com", "https://agents.example.com/mcp")
///         .scope("agent:use")
///         .tool_scope("research*", "agent:research"),
/// );
/// # let _ = auth;
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct OAuthResource {
    pub(crate) introspection: Option<IntrospectionClient>,
    pub(crate) introspection_endpoint: Option<String>,
    pub(crate) issuer: String,
    pub(crate) audience: String,
    pub(crate) scopes: Vec<String>,
    pub(crate) tool_scopes: Vec<(String, String)>,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) clock_skew: Duration,
}

impl OAuthResource {
    /// Tokens from `issuer` (its `iss`, an `https` URL; `http` only on
    /// loopback) for `audience`: this server's canonical URL as clients
    /// reach it (e.g. `https://agents.example.com/mcp`), which is also the
    /// `resource` its metadata names and the `aud` a token must carry.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            audience: audience.into(),
            scopes: Vec::new(),
            tool_scopes: Vec::new(),
            jwks_uri: None,
            clock_skew: DEFAULT_OAUTH_CLOCK_SKEW,
            introspection: None,
            introspection_endpoint: None,
        }
    }

    /// A scope every token must carry to call the server at all (past it:
    /// `403 insufficient_scope` naming it).
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scopes.push(scope.into());
        self
    }

    /// The tools whose names match `pattern` (the tool-name glob dialect of
    /// permission rules: `*`, `?`, `[abc]`, `{a,b}`) need `scope` as well:
    /// `tools/list` leaves them out for a token without it, and calling one
    /// gets `403 insufficient_scope` naming the scopes to ask for. A tool
    /// several patterns match needs each of their scopes; a tool no pattern
    /// matches needs only the [`scope`](Self::scope)s.
    pub fn tool_scope(mut self, pattern: impl Into<String>, scope: impl Into<String>) -> Self {
        self.tool_scopes.push((pattern.into(), scope.into()));
        self
    }

    /// The issuer's JWKS URL, if its metadata (RFC 8414
    /// `/.well-known/oauth-authorization-server`, else OpenID
    /// `/.well-known/openid-configuration`) should not be asked for it.
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// Opaque access tokens too: a token that is not a signed JWT is
    /// introspected (RFC 7662) at the issuer's `introspection_endpoint`
    /// (from its metadata, or [`introspection_endpoint`](Self::introspection_endpoint)),
    /// authenticating as `client_id` with `client_secret` (HTTP Basic). It
    /// is accepted if the answer is `active`, names this issuer (if any)
    /// and this audience (`aud`), holds `exp`/`nbf` within the clock skew,
    /// is no sender-constrained token (`cnf`) and names a subject (`sub`,
    /// else `client_id`); its `scope` gives its scopes. Answers are cached a
    /// minute at most, never past the token's `exp`. Signed JWTs are still
    /// checked against the issuer's keys, never introspected.
    ///
    /// ```
    /// use lousho::mcp::{Auth, OAuthResource};
    /// let secret = std::env::var("INTROSPECTION_SECRET").unwrap_or_default();
    /// let auth = Auth::oauth(
    ///     OAuthResource::new("https://idp.example.com", "https://agents.example.com/mcp")
    ///         .scope("agent:use")
    ///         .introspection("agents-api", secret),
    /// );
    /// # let _ = auth;
    /// ```
    pub fn introspection(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.introspection = Some(IntrospectionClient {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        });
        self
    }

    /// The issuer's introspection endpoint, if its metadata should not be
    /// asked for it (needs [`introspection`](Self::introspection)).
    pub fn introspection_endpoint(mut self, url: impl Into<String>) -> Self {
        self.introspection_endpoint = Some(url.into());
        self
    }

    /// The allowance for clock differences on `exp` and `nbf` (default
    /// [`DEFAULT_OAUTH_CLOCK_SKEW`]; whole seconds count).
    pub fn clock_skew(mut self, skew: Duration) -> Self {
        self.clock_skew = skew;
        self
    }
}

/// The client credentials a resource server introspects tokens with (the
/// secret is never printed by `Debug`).
#[derive(Clone)]
pub(crate) struct IntrospectionClient {
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
}

impl std::fmt::Debug for IntrospectionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

/// Why [`OAuthResource`] settings cannot protect a server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthResourceError {
    /// The issuer, audience or JWKS URL is not an absolute URL a client can
    /// reach safely.
    #[error(
        "the OAuth {what} `{value}` must be an absolute https URL (http only on loopback, e.g. http://127.0.0.1:8080), without a fragment"
    )]
    InvalidUrl {
        /// Which setting: `issuer`, `audience`, `jwksUri` or
        /// `introspectionEndpoint`.
        what: &'static str,
        /// The value given.
        value: String,
    },
    /// A tool-scope pattern is not a valid glob.
    #[error("the tool-scope pattern `{pattern}` is invalid: {message}")]
    InvalidToolPattern {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
    /// A scope is empty or holds a space or a quote.
    #[error(
        "the OAuth scope `{0}` is invalid: use printable characters without spaces, `\"` or `\\`"
    )]
    InvalidScope(String),
    /// Introspection is configured with an empty client id.
    #[error(
        "OAuth token introspection needs this server's client id at the authorization server: set `serve.auth.introspection.clientId` (OAuthResource::introspection)"
    )]
    IntrospectionWithoutClientId,
    /// An introspection endpoint is given, but no client to use it with.
    #[error(
        "`introspectionEndpoint` is set but token introspection is not: add `serve.auth.introspection: {{ clientId, clientSecret }}` (OAuthResource::introspection), or drop the endpoint"
    )]
    IntrospectionEndpointWithoutClient,
}

/// Whether `scope` can go into a `WWW-Authenticate` parameter and a
/// space-separated scope list (RFC 6749 §3.3 `scope-token`).
pub(crate) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_tokens_exclude_spaces_and_quotes() {
        assert!(is_scope_token("mcp:tools"));
        assert!(!is_scope_token(""));
        assert!(!is_scope_token("a b"));
        assert!(!is_scope_token("a\"b"));
        assert!(!is_scope_token("a\\b"));
    }

    #[test]
    fn the_introspection_secret_never_shows_in_debug() {
        let r = OAuthResource::new("https://i.example", "https://a.example/mcp")
            .introspection("rs", "s3cr3t-value");
        let shown = format!("{r:?}");
        assert!(shown.contains("rs") && !shown.contains("s3cr3t"), "{shown}");
    }
}
