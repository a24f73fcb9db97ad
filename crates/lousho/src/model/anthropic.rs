//! Anthropic's Messages API, streaming.

mod body;
mod decode;
mod error;

use super::provider::http::{self, Transport, secret_header};
use super::provider::{
    ApiKey, EnvLookup, HttpSettings, KeySource, RateLimits, RetryPolicy, SchemaCache,
    SchemaProfile, base_url, limit, process_env,
};
use super::{Model, ModelError, ModelRef, ModelRequest, ModelStream};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Anthropic's API (without `/v1`, like the official SDKs' base URL).
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent by default.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` when neither the request nor the builder sets one (the API
/// requires it; every current Claude model can produce this many).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A Claude model over the Messages API. Build one with
/// [`Anthropic::builder`], or let a model string pick it
/// (`"anthropic/claude-sonnet-4-5"`).
///
/// ```no_run
/// use lousho::{Agent, model::Anthropic};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Key from ANTHROPIC_API_KEY (checked here, before any request).
/// let model = Anthropic::builder("claude-sonnet-4-5").max_tokens(2048).build()?;
/// let agent = Agent::builder().model(model).prompt("Be brief.").build()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Anthropic {
    name: String,
    model: String,
    url: String,
    headers: HeaderMap,
    max_tokens: u32,
    transport: Arc<Transport>,
    schemas: Arc<SchemaCache>,
    native_tool_search: bool,
}

/// The context window of current Claude models (200k tokens).
const CONTEXT_WINDOW: usize = 200_000;

impl fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Anthropic")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("api_key", &self.transport.key)
            .field("max_tokens", &self.max_tokens)
            .field("retry", &self.transport.retry)
            .finish_non_exhaustive()
    }
}

impl Anthropic {
    /// Key from `ANTHROPIC_API_KEY`, base URL from `ANTHROPIC_BASE_URL` or
    /// [`ANTHROPIC_BASE_URL`].
    pub fn builder(model: impl Into<String>) -> AnthropicBuilder {
        AnthropicBuilder {
            model: model.into(),
            key: KeySource::Env("ANTHROPIC_API_KEY".into()),
            base_url: None,
            version: ANTHROPIC_VERSION.to_owned(),
            max_tokens: DEFAULT_MAX_TOKENS,
            http: HttpSettings::default(),
            native_tool_search: true,
        }
    }

    /// The model id sent in requests.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// One turn's stream; `fail_fast` when a model list has a next model.
    fn start(&self, request: &ModelRequest, fail_fast: bool) -> ModelStream {
        http::stream_request(
            &self.transport,
            &self.schemas,
            (&self.url, &self.headers),
            request,
            (&body::tool_list, body::caches(request), || {
                body::request_body(&self.model, request, self.max_tokens)
            }),
            decode::Decoder::new(self.transport.provider.clone()),
            error::classify,
            fail_fast,
        )
    }
}

impl Model for Anthropic {
    fn name(&self) -> &str {
        &self.name
    }

    fn stream(&self, request: &ModelRequest) -> ModelStream {
        self.start(request, false)
    }

    fn stream_with_fallback(&self, request: &ModelRequest) -> ModelStream {
        self.start(request, true)
    }

    fn context_window(&self) -> Option<usize> {
        Some(CONTEXT_WINDOW)
    }

    fn native_tool_search(&self) -> bool {
        self.native_tool_search
    }
}

/// Configures an [`Anthropic`] model; [`build`](AnthropicBuilder::build)
/// reads the environment and checks everything. Can also be given to
/// [`AgentBuilder::model`](crate::AgentBuilder::model) directly.
#[derive(Debug, Clone)]
#[must_use]
pub struct AnthropicBuilder {
    model: String,
    key: KeySource,
    base_url: Option<String>,
    version: String,
    max_tokens: u32,
    http: HttpSettings,
    native_tool_search: bool,
}

impl AnthropicBuilder {
    /// Whether tool search uses the API's own (`tool_search_tool_bm25`,
    /// deferred tools sent with `defer_loading: true`; default true) or
    /// lousho's client-side `tool_search` tool (false: for models or
    /// gateways without it). See [`crate::tool::search`].
    pub fn native_tool_search(mut self, native: bool) -> Self {
        self.native_tool_search = native;
        self
    }

    /// The API key (instead of `ANTHROPIC_API_KEY`).
    pub fn api_key(mut self, key: impl Into<ApiKey>) -> Self {
        self.key = KeySource::Explicit(key.into());
        self
    }

    /// Reads the key from this environment variable at `build()`.
    pub fn api_key_env(mut self, var: impl Into<String>) -> Self {
        self.key = KeySource::Env(var.into());
        self
    }

    /// The base URL, the part before `/v1/messages` (overrides `ANTHROPIC_BASE_URL`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The `anthropic-version` header (default [`ANTHROPIC_VERSION`]).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// `max_tokens` for requests whose settings do not set it (default
    /// [`DEFAULT_MAX_TOKENS`]).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Retries of 429, 5xx, 529 and connection failures (see [`RetryPolicy`]).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.http.retry = retry;
        self
    }

    /// Client-side rate limits for this provider account (see
    /// [`RateLimits`]): every model of the process with the same provider,
    /// base URL and key shares them, the last configured winning.
    pub fn rate_limits(mut self, limits: RateLimits) -> Self {
        self.http.limits = limits;
        self
    }

    /// How long connecting may take (default 15 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.http.connect_timeout = timeout;
        self
    }

    /// The longest silence between two reads of a response (default 300 s;
    /// Anthropic sends `ping` events while it works).
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.http.read_timeout = timeout;
        self
    }

    /// A header sent with every request (e.g. `anthropic-beta`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http.headers.push((name.into(), value.into()));
        self
    }

    /// Reads the environment and builds the model. Fails with
    /// [`ModelError::MissingApiKey`] naming `ANTHROPIC_API_KEY` when no key
    /// is set, before any request.
    pub fn build(self) -> Result<Anthropic, ModelError> {
        self.build_with_env(&process_env)
    }

    pub(crate) fn build_with_env(self, env: EnvLookup<'_>) -> Result<Anthropic, ModelError> {
        let provider = "anthropic".to_owned();
        if self.model.trim().is_empty() {
            return Err(ModelError::InvalidConfig {
                provider,
                message: "the model name is empty".into(),
            });
        }
        if self.max_tokens == 0 {
            return Err(ModelError::InvalidConfig {
                provider,
                message: "max_tokens must be at least 1".into(),
            });
        }
        let key = self.key.resolve(&provider, env)?;
        let base = self
            .base_url
            .or_else(|| env("ANTHROPIC_BASE_URL"))
            .unwrap_or_else(|| ANTHROPIC_BASE_URL.to_owned());
        let url = format!("{}/v1/messages", base_url(&provider, &base)?);
        let mut headers = self.http.header_map(&provider)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let version =
            HeaderValue::from_str(&self.version).map_err(|_| ModelError::InvalidConfig {
                provider: provider.clone(),
                message: format!("`{}` is not a valid anthropic-version", self.version),
            })?;
        headers.insert(HeaderName::from_static("anthropic-version"), version);
        if let Some(key) = &key {
            headers.insert(
                HeaderName::from_static("x-api-key"),
                secret_header(&provider, key.expose())?,
            );
        }
        let limiter = limit::shared(
            &provider,
            &url,
            key.as_ref().map(ApiKey::expose),
            self.http.limits,
        );
        let client =
            http::build_client(&provider, self.http.connect_timeout, self.http.read_timeout)?;
        Ok(Anthropic {
            name: format!("anthropic/{}", self.model),
            model: self.model,
            url,
            headers,
            max_tokens: self.max_tokens,
            schemas: Arc::new(SchemaCache::new(SchemaProfile::Anthropic)),
            native_tool_search: self.native_tool_search,
            transport: Arc::new(Transport {
                provider,
                client,
                retry: self.http.retry,
                key,
                limiter,
            }),
        })
    }
}

impl From<AnthropicBuilder> for ModelRef {
    fn from(builder: AnthropicBuilder) -> Self {
        ModelRef::deferred(move || Ok(Arc::new(builder.clone().build()?)))
    }
}
