//! The Streamable HTTP transport: one pooled `reqwest::Client` for every
//! server (rmcp's default disables pooling), no global timeout (it would cut
//! long SSE streams), and our redirect policy: same-origin 307/308 only, so
//! credentials and session ids never follow a redirect elsewhere and a POST
//! never turns into a GET. The client is [`Watched`], so a connect can wait for
//! the session's standalone stream ([`standalone`]).

mod standalone;

use standalone::Watched;
pub(crate) use standalone::{STANDALONE_WAIT, StandaloneStream};

use super::config::HttpTransport;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::collections::HashMap;
use std::sync::OnceLock;

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

/// The shared, pooled HTTP client.
pub(crate) fn shared_client() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .redirect(redirect_policy())
                .pool_max_idle_per_host(64)
                .tcp_nodelay(true)
                .build()
                .map_err(|e| format!("could not build the HTTP client: {e}"))
        })
        .clone()
}

/// A transport for `config` and the handle on its standalone stream.
pub(crate) type Transport<C> = (StreamableHttpClientTransport<Watched<C>>, StandaloneStream);

/// Builds the transport for `config`; the error names the bad header.
pub(crate) fn transport(config: &HttpTransport) -> Result<Transport<reqwest::Client>, String> {
    watched(shared_client()?, config)
}

/// The transport of an `oauth` entry: requests go through rmcp's
/// `AuthClient`, which adds the bearer token and refreshes it.
pub(crate) fn auth_transport(
    config: &HttpTransport,
    client: AuthClient<reqwest::Client>,
) -> Result<Transport<AuthClient<reqwest::Client>>, String> {
    watched(client, config)
}

fn watched<C>(client: C, config: &HttpTransport) -> Result<Transport<C>, String>
where
    C: rmcp::transport::streamable_http_client::StreamableHttpClient + Sync,
{
    let (client, standalone) = Watched::new(client);
    let transport = StreamableHttpClientTransport::with_client(client, transport_config(config)?);
    Ok((transport, standalone))
}

fn transport_config(config: &HttpTransport) -> Result<StreamableHttpClientTransportConfig, String> {
    let mut headers = HashMap::new();
    for (name, value) in &config.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header name `{name}` is not a valid HTTP header name"))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header `{name}` is not valid in an HTTP header"))?;
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
