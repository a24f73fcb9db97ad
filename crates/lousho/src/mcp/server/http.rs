//! Streamable HTTP: stateless, JSON responses (SSE only when progress streams),
//! POST only, Host/Origin checked, optional auth: a static bearer token or
//! OAuth access tokens ([`oauth`]).

use super::cancel::CancelRegistry;
use super::error::ServeError;
use super::handler::LoushoServer;
use super::options::{Auth, HttpOptions};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

mod admission;
mod bind;
mod client_id;
mod drain;
mod envelope;
mod host;
mod listen;
mod oauth;
mod screen;

use admission::{Admission, CallLimits};
use host::AllowedHosts;
pub(crate) use listen::{ConnLimits, serve};
use oauth::ResourceServer;
use screen::{McpService, Screen, Screened};

/// Binds the listener (port 0 picks a free port) with a backlog for bursts
/// (see [`bind`]).
pub(crate) async fn bind(opts: &HttpOptions) -> Result<TcpListener, ServeError> {
    if !opts.path.starts_with('/') {
        return Err(ServeError::InvalidPath(opts.path.clone()));
    }
    let host = opts.host.trim_start_matches('[').trim_end_matches(']');
    let addr = format!("{}:{}", bracket(host), opts.port);
    bind::bind(addr, bind::listen_backlog(opts.max_connections)).await
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

/// Whether a bind host only listens on this machine.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// What guards the MCP endpoint: [`Auth`], checked and ready.
pub(crate) enum Guard {
    /// The static token's bytes.
    Bearer(Arc<[u8]>),
    /// An OAuth resource server.
    OAuth(Arc<ResourceServer>),
}

impl Guard {
    /// `auth` ready to guard the server named `name` (the OAuth metadata's
    /// `resource_name`); unusable OAuth settings are an error.
    pub(crate) fn new(auth: &Auth, name: &str) -> Result<Self, ServeError> {
        Ok(match auth {
            Auth::Bearer(token) => Guard::Bearer(token.0.as_bytes().into()),
            Auth::OAuth(resource) => Guard::OAuth(Arc::new(ResourceServer::new(resource, name)?)),
        })
    }
}

/// The router: the MCP endpoint at `opts.path`, behind the guard.
pub(crate) fn router(
    server: LoushoServer,
    cancels: CancelRegistry,
    opts: &HttpOptions,
    guard: Option<Guard>,
    bound: SocketAddr,
    shutdown: &CancellationToken,
) -> axum::Router {
    let mut hosts: Vec<String> = vec![
        "localhost".into(),
        "127.0.0.1".into(),
        "::1".into(),
        "[::1]".into(),
    ];
    let host = opts.host.trim_start_matches('[').trim_end_matches(']');
    if !is_loopback(host) {
        hosts.push(host.to_owned());
        hosts.push(bound.ip().to_string());
    }
    hosts.extend(opts.allowed_hosts.iter().cloned());
    let allowed_hosts = AllowedHosts::new(hosts.iter().map(String::as_str));
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .flat_map(|h| [format!("http://{h}:*"), format!("https://{h}:*")])
        .collect();
    origins.extend(opts.allowed_origins.iter().cloned());
    let admission = Admission::new(
        CallLimits {
            max_calls: opts.max_calls,
            max_agent_runs: opts.max_agent_runs,
            client_share_percent: opts.client_share_percent,
        },
        server.agent_tool_names().map(str::to_owned).collect(),
    );
    let limiter = server.limiter().cloned();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(opts.stateful)
        .with_json_response(true)
        // The screen checks the host first, and more strictly (`host.rs`);
        // rmcp's list would parse every entry again for every request. rmcp
        // still refuses a request that names no host at all.
        .disable_allowed_hosts()
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(opts.max_body_bytes)
        .with_cancellation_token(shutdown.child_token());
    // A fresh handler per session (stateful) or request (stateless): each
    // has its own log level.
    let service = if opts.stateful {
        McpService::Stateful(StreamableHttpService::new(
            move || Ok(server.for_session()),
            Arc::new(LocalSessionManager::default()),
            config,
        ))
    } else {
        McpService::Stateless(StreamableHttpService::new(
            move || Ok(server.for_session()),
            Arc::new(NeverSessionManager::default()),
            config,
        ))
    };
    let screened = Screened {
        inner: Arc::new(service),
        screen: Screen {
            hosts: Arc::new(allowed_hosts),
            cancels,
            max_body_bytes: opts.max_body_bytes,
            body_timeout: opts.body_timeout,
            min_body_rate: opts.min_body_rate,
            admission: Arc::new(admission),
            limiter,
        },
    };
    let app = axum::Router::new().route_service(&opts.path, screened);
    match guard {
        Some(Guard::Bearer(expected)) => {
            app.layer(middleware::from_fn_with_state(expected, require_bearer))
        }
        Some(Guard::OAuth(rs)) => rs.protect(app),
        None => app,
    }
}

/// Rejects requests without the right `Authorization: Bearer <token>` header
/// (the scheme is case-insensitive, RFC 7235).
async fn require_bearer(State(expected): State<Arc<[u8]>>, req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| bearer_token(v.as_bytes()));
    if given.is_some_and(|g| constant_time_eq(g, &expected)) {
        return next.run(req).await;
    }
    drain::drain(req).await;
    let mut res = (StatusCode::UNAUTHORIZED, "missing or invalid bearer token").into_response();
    res.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    res
}

/// The token of an `Authorization: Bearer <token>` value, whatever the
/// scheme's case.
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    const SCHEME: &[u8] = b"bearer ";
    let (scheme, rest) = value.split_at_checked(SCHEME.len())?;
    if !scheme.eq_ignore_ascii_case(SCHEME) {
        return None;
    }
    let token = rest.trim_ascii_start();
    (!token.is_empty()).then_some(token)
}

/// Compares in time that depends only on the lengths, not on where the bytes differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let len = a.len().max(b.len());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..len {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= x ^ y;
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_matches_only_equal_bytes() {
        assert!(constant_time_eq(b"Bearer abc", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer abd", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer ab", b"Bearer abc"));
        assert!(!constant_time_eq(b"", b"x"));
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        for v in ["Bearer t", "bearer t", "BEARER t", "bEaReR  t"] {
            assert_eq!(bearer_token(v.as_bytes()), Some(&b"t"[..]), "{v}");
        }
        for v in ["Bearer ", "Bearer", "Basic t", "t", "Bearert"] {
            assert_eq!(bearer_token(v.as_bytes()), None, "{v}");
        }
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for h in ["127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["0.0.0.0", "192.0.2.1", "example.com"] {
            assert!(!is_loopback(h), "{h}");
        }
    }
}
