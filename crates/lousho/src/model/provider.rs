//! What the HTTP providers share: API keys, retries, the SSE parser, the
//! streaming driver and tool-schema normalisation.

pub(crate) mod http;
pub(crate) mod limit;
mod retry;
mod schema;
mod secret;
pub(crate) mod sse;

pub use limit::RateLimits;
pub use retry::{RetryNotice, RetryPolicy};
pub use schema::SchemaProfile;
pub use secret::ApiKey;

pub(crate) use schema::SchemaCache;
pub(crate) use secret::{EnvLookup, KeySource, process_env};

use std::time::Duration;

/// Settings every HTTP provider builder has.
#[derive(Debug, Clone)]
pub(crate) struct HttpSettings {
    pub retry: super::RetryPolicy,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub headers: Vec<(String, String)>,
    /// Client-side rate limits (none by default).
    pub limits: super::RateLimits,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            retry: super::RetryPolicy::default(),
            connect_timeout: http::DEFAULT_CONNECT_TIMEOUT,
            read_timeout: http::DEFAULT_READ_TIMEOUT,
            headers: Vec::new(),
            limits: super::RateLimits::default(),
        }
    }
}

impl HttpSettings {
    /// Extra headers as a map; a bad name or value is a configuration error.
    pub(crate) fn header_map(
        &self,
        provider: &str,
    ) -> Result<reqwest::header::HeaderMap, super::ModelError> {
        use reqwest::header::{HeaderName, HeaderValue};
        let mut map = reqwest::header::HeaderMap::new();
        for (name, value) in &self.headers {
            let bad = |what: &str| super::ModelError::InvalidConfig {
                provider: provider.to_owned(),
                message: format!("header `{name}`: invalid {what}"),
            };
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad("name"))?;
            let value = HeaderValue::from_str(value).map_err(|_| bad("value"))?;
            map.insert(name, value);
        }
        Ok(map)
    }
}

/// Checks a base URL and strips its trailing slash.
pub(crate) fn base_url(provider: &str, url: &str) -> Result<String, super::ModelError> {
    let trimmed = url.trim().trim_end_matches('/');
    let ok = (trimmed.starts_with("http://") || trimmed.starts_with("https://"))
        && reqwest::Url::parse(trimmed).is_ok();
    if !ok {
        return Err(super::ModelError::InvalidConfig {
            provider: provider.to_owned(),
            message: format!("base URL `{url}` is not an http(s) URL"),
        });
    }
    Ok(trimmed.to_owned())
}
