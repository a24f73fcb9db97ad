//! The Streamable HTTP transport: one pooled `reqwest::Client` for every
//! server (rmcp's default disables pooling), no global timeout (it would cut
//! long SSE streams), and our redirect policy: same-origin 307/308 only, so
//! credentials and session ids never follow a redirect elsewhere and a POST
//! never turns into a GET. The client is [`WatchedClient`], so a connect can wait for
//! the session's standalone stream ([`standalone`]).

mod pooled;
mod reply_check;
mod standalone;

pub(crate) use pooled::Pooled;
use standalone::WatchedClient;
pub(crate) use standalone::{STANDALONE_WAIT, StandaloneStream};

use super::config::HttpTransport;
use super::peer_requests::{Overflow, PeerRequestLimit};
use super::replies::Replies;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
#[cfg(feature = "oauth")]
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};
use std::collections::HashMap;
use std::error::Error;
use std::sync::{Arc, OnceLock};

/// More calls in flight than rmcp's default of 16 before POSTs queue.
const MAX_CONCURRENT_REQUESTS: usize = 256;
const MAX_REDIRECTS: usize = 5;

fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt.previous().first().is_some_and(|first| {
            let next = attempt.url();
            first.scheme() == next.scheme()
                && first.host_str() == next.host_str()
                && first.port_or_known_default() == next.port_or_known_default()
        });
        let keeps_method = matches!(attempt.status().as_u16(), 307 | 308);
        if same_origin && keeps_method && attempt.previous().len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Why an HTTP transport could not be set up.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum SetupError {
    /// The HTTP client could not be built (no TLS backend, for one).
    #[error("could not build the HTTP client")]
    Client(#[source] Arc<reqwest::Error>),
    /// A configured header name is not valid.
    #[error("header name `{0}` is not a valid HTTP header name")]
    HeaderName(String),
    /// A configured header value is not valid.
    #[error("the value of header `{0}` is not valid in an HTTP header")]
    HeaderValue(String),
}

/// The shared, pooled HTTP client.
pub(crate) fn shared_client() -> Result<reqwest::Client, SetupError> {
    static CLIENT: OnceLock<Result<reqwest::Client, SetupError>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .redirect(redirect_policy())
                .pool_max_idle_per_host(64)
                .tcp_nodelay(true)
                .build()
                .map_err(|e| SetupError::Client(Arc::new(e)))
        })
        .clone()
}

/// A transport for rmcp and what the connection keeps of it.
pub(crate) struct Dialed<C: StreamableHttpClient + Sync + 'static> {
    /// The transport, with a bound on the server's open requests (the
    /// excess is dropped, see [`PeerRequestLimit`]).
    pub(crate) transport: PeerRequestLimit<StreamableHttpClientTransport<WatchedClient<C>>>,
    /// What the connection keeps once rmcp runs the transport.
    pub(crate) watch: HttpWatch,
}

/// What a connection keeps of its HTTP transport.
pub(crate) struct HttpWatch {
    /// The session's standalone stream.
    pub(crate) standalone: StandaloneStream,
    /// Invalid replies the transport turned into errors.
    pub(crate) replies: Replies,
}

/// Builds the transport for `config`; the error names the bad header.
/// `max_server_requests` bounds the server's open requests.
pub(crate) fn transport(
    config: &HttpTransport,
    max_server_requests: usize,
) -> Result<Dialed<Pooled>, SetupError> {
    watched(Pooled(shared_client()?), config, max_server_requests)
}

/// The transport of an `oauth` entry: requests go through rmcp's
/// `AuthClient`, which adds the bearer token and refreshes it.
#[cfg(feature = "oauth")]
pub(crate) fn auth_transport(
    config: &HttpTransport,
    client: AuthClient<Pooled>,
    max_server_requests: usize,
) -> Result<Dialed<AuthClient<Pooled>>, SetupError> {
    watched(client, config, max_server_requests)
}

fn watched<C>(
    client: C,
    config: &HttpTransport,
    max_server_requests: usize,
) -> Result<Dialed<C>, SetupError>
where
    C: StreamableHttpClient + Sync + 'static,
{
    let replies = Replies::default();
    let (client, standalone) = WatchedClient::new(client, replies.clone());
    let transport = StreamableHttpClientTransport::with_client(client, transport_config(config)?);
    Ok(Dialed {
        transport: PeerRequestLimit::new(transport, Overflow::Drop, max_server_requests),
        watch: HttpWatch {
            standalone,
            replies,
        },
    })
}

fn transport_config(
    config: &HttpTransport,
) -> Result<StreamableHttpClientTransportConfig, SetupError> {
    let mut headers = HashMap::new();
    for (name, value) in &config.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| SetupError::HeaderName(name.clone()))?;
        let mut value =
            HeaderValue::from_str(value).map_err(|_| SetupError::HeaderValue(name.to_string()))?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    Ok(
        StreamableHttpClientTransportConfig::with_uri(config.url.as_str())
            .custom_headers(headers)
            .max_concurrent_requests(MAX_CONCURRENT_REQUESTS),
    )
}

/// The URL without user info or query (for messages).
pub(crate) fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.to_string()
        }
        Err(_) => url.to_owned(),
    }
}

/// The HTTP status a failure carries, read from the typed errors along its
/// chain (never from its words: a `:443` in a URL is no status).
pub(crate) fn status_of(e: &(dyn Error + 'static)) -> Option<u16> {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::{
        AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
    };
    crate::error_chain::sources(e).find_map(|e| {
        if let Some(init) = e.downcast_ref::<ClientInitializeError>() {
            return init_status(init);
        }
        if e.is::<AuthRequiredError>() {
            return Some(401);
        }
        if e.is::<InsufficientScopeError>() {
            return Some(403);
        }
        if let Some(s) = e.downcast_ref::<HttpStatusError>() {
            return Some(s.status);
        }
        if let Some(r) = e.downcast_ref::<reqwest::Error>() {
            return r.status().map(|s| s.as_u16());
        }
        match e.downcast_ref::<StreamableHttpError<reqwest::Error>>()? {
            StreamableHttpError::Client(r) => r.status().map(|s| s.as_u16()),
            StreamableHttpError::SessionExpired => Some(404),
            StreamableHttpError::HttpStatus(s) => Some(s.status),
            _ => None,
        }
    })
}

/// `ClientInitializeError` does not expose its transport error as a source.
fn init_status(e: &rmcp::service::ClientInitializeError) -> Option<u16> {
    use rmcp::service::ClientInitializeError as E;
    match e {
        E::TransportError { error, .. } => status_of(error),
        E::LegacyFallbackFailed { discover, fallback } => {
            init_status(fallback).or_else(|| init_status(discover))
        }
        _ => None,
    }
}
