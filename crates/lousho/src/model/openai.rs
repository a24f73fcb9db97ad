//! OpenAI Chat Completions, streaming — and every server that speaks it:
//! OpenRouter, Ollama, vLLM, llama.cpp's server, LM Studio and others.

mod body;
mod decode;
mod error;

use super::provider::http::{self, Transport, secret_header};
use super::provider::{
    ApiKey, EnvLookup, HttpSettings, KeySource, RateLimits, RetryPolicy, SchemaCache,
    SchemaProfile, base_url, limit, process_env,
};
use super::{Model, ModelError, ModelRef, ModelRequest, ModelStream};
pub(crate) use body::rounded;
use body::{BodyOptions, MaxTokensField};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// OpenAI's API.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// OpenRouter's OpenAI-compatible API.
pub const OPENROUTER_BASE_URL: &str = "https://openrouter.ai/api/v1";
/// A local Ollama server's OpenAI-compatible API.
pub const OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434/v1";

/// A Chat Completions model. Build one with [`OpenAi::builder`],
/// [`OpenAi::openrouter`], [`OpenAi::ollama`] or [`OpenAi::compatible`], or
/// let a model string pick it (`"openai/gpt-4o-mini"`).
///
/// ```no_run
/// use lousho::{Agent, model::OpenAi};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Key from OPENAI_API_KEY (checked here, before any request).
/// let model = OpenAi::builder("gpt-4o-mini").build()?;
/// let agent = Agent::builder().model(model).build()?;
///
/// // Any OpenAI-compatible server: vLLM, llama.cpp, LM Studio…
/// let local = OpenAi::compatible("http://127.0.0.1:8000/v1", "Qwen/Qwen2.5-7B-Instruct");
/// let agent = Agent::builder().model(local).build()?; // builders work too
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct OpenAi {
    name: String,
    model: String,
    url: String,
    headers: HeaderMap,
    transport: Arc<Transport>,
    schemas: Arc<SchemaCache>,
    options: BodyOptions,
}

impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("api_key", &self.transport.key)
            .field("retry", &self.transport.retry)
            .finish_non_exhaustive()
    }
}

impl OpenAi {
    /// OpenAI itself: key from `OPENAI_API_KEY`, base URL from
    /// `OPENAI_BASE_URL` or [`OPENAI_BASE_URL`].
    pub fn builder(model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder::new("openai", model, KeySource::Env("OPENAI_API_KEY".into()))
            .base_url_env("OPENAI_BASE_URL", OPENAI_BASE_URL)
            .max_tokens_field(MaxTokensField::MaxCompletionTokens)
    }

    /// OpenRouter: `model` is `<vendor>/<model>` (`"openai/gpt-4o-mini"`), key
    /// from `OPENROUTER_API_KEY`. Tool schemas use [`SchemaProfile::Portable`]
    /// since OpenRouter forwards them to many vendors.
    pub fn openrouter(model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder::new(
            "openrouter",
            model,
            KeySource::Env("OPENROUTER_API_KEY".into()),
        )
        .base_url(OPENROUTER_BASE_URL)
        .schema_profile(SchemaProfile::Portable)
    }

    /// A local Ollama server: no key, base URL from `OLLAMA_BASE_URL` or
    /// [`OLLAMA_BASE_URL`].
    pub fn ollama(model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder::new("ollama", model, KeySource::None)
            .base_url_env("OLLAMA_BASE_URL", OLLAMA_BASE_URL)
    }

    /// Any OpenAI-compatible server at `base_url` (the part before
    /// `/chat/completions`, usually ending in `/v1`). No key unless you give
    /// one with [`api_key`](OpenAiBuilder::api_key) or
    /// [`api_key_env`](OpenAiBuilder::api_key_env).
    pub fn compatible(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder::new("openai-compatible", model, KeySource::None).base_url(base_url)
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
            (&body::tool_list, false, || {
                body::request_body(&self.model, request, self.options)
            }),
            decode::Decoder::new(self.transport.provider.clone()),
            error::classify,
            fail_fast,
        )
    }
}

impl Model for OpenAi {
    fn name(&self) -> &str {
        &self.name
    }

    fn stream(&self, request: &ModelRequest) -> ModelStream {
        self.start(request, false)
    }

    fn stream_with_fallback(&self, request: &ModelRequest) -> ModelStream {
        self.start(request, true)
    }
}

/// Configures an [`OpenAi`] model; [`build`](OpenAiBuilder::build) reads the
/// environment and checks everything. An `OpenAiBuilder` can also be given to
/// [`AgentBuilder::model`](crate::AgentBuilder::model) directly: the agent's
/// `build()` then reports a missing key.
#[derive(Debug, Clone)]
#[must_use]
pub struct OpenAiBuilder {
    provider: String,
    model: String,
    key: KeySource,
    base_url: Option<String>,
    base_url_env: Option<(String, String)>,
    http: HttpSettings,
    schema: SchemaProfile,
    max_tokens_field: MaxTokensField,
    include_usage: bool,
}

impl OpenAiBuilder {
    fn new(provider: &str, model: impl Into<String>, key: KeySource) -> Self {
        Self {
            provider: provider.to_owned(),
            model: model.into(),
            key,
            base_url: None,
            base_url_env: None,
            http: HttpSettings::default(),
            schema: SchemaProfile::OpenAi,
            max_tokens_field: MaxTokensField::MaxTokens,
            include_usage: true,
        }
    }

    fn base_url_env(mut self, var: &str, default: &str) -> Self {
        self.base_url_env = Some((var.to_owned(), default.to_owned()));
        self
    }

    fn max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = field;
        self
    }

    /// The API key (instead of the environment variable).
    pub fn api_key(mut self, key: impl Into<ApiKey>) -> Self {
        self.key = KeySource::Explicit(key.into());
        self
    }

    /// Reads the key from this environment variable at `build()`; unset is
    /// an error naming it (e.g. `GROQ_API_KEY` for a compatible server).
    pub fn api_key_env(mut self, var: impl Into<String>) -> Self {
        self.key = KeySource::Env(var.into());
        self
    }

    /// The base URL, the part before `/chat/completions` (overrides the
    /// environment variable).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The provider's name in model names, logs and errors (default: `openai`,
    /// `openrouter`, `ollama` or `openai-compatible`).
    pub fn provider_name(mut self, name: impl Into<String>) -> Self {
        self.provider = name.into();
        self
    }

    /// Retries of 429, 5xx and connection failures (see [`RetryPolicy`]).
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

    /// The longest silence between two reads of a response (default 300 s).
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.http.read_timeout = timeout;
        self
    }

    /// A header sent with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http.headers.push((name.into(), value.into()));
        self
    }

    /// OpenRouter's optional app attribution: `HTTP-Referer` (your app's URL)
    /// and `X-Title` / `X-OpenRouter-Title` (its name).
    pub fn attribution(self, app_url: impl Into<String>, app_name: impl Into<String>) -> Self {
        let name = app_name.into();
        self.header("HTTP-Referer", app_url)
            .header("X-Title", name.clone())
            .header("X-OpenRouter-Title", name)
    }

    /// Which JSON Schema subset tool schemas are normalised to.
    pub fn schema_profile(mut self, profile: SchemaProfile) -> Self {
        self.schema = profile;
        self
    }

    /// Whether to ask for usage in the stream (`stream_options.include_usage`,
    /// default true); turn off for old servers that reject it.
    pub fn include_usage(mut self, include: bool) -> Self {
        self.include_usage = include;
        self
    }

    /// Reads the environment and builds the model. Fails with
    /// [`ModelError::MissingApiKey`] naming the variable when the key is
    /// needed and unset, before any request.
    pub fn build(self) -> Result<OpenAi, ModelError> {
        self.build_with_env(&process_env)
    }

    pub(crate) fn build_with_env(self, env: EnvLookup<'_>) -> Result<OpenAi, ModelError> {
        let provider = self.provider;
        if self.model.trim().is_empty() {
            return Err(ModelError::InvalidConfig {
                provider,
                message: "the model name is empty".into(),
            });
        }
        let key = self.key.resolve(&provider, env)?;
        let url = match (self.base_url, self.base_url_env) {
            (Some(url), _) => url,
            (None, Some((var, default))) => env(&var).unwrap_or(default),
            (None, None) => {
                return Err(ModelError::InvalidConfig {
                    provider,
                    message: "no base URL".into(),
                });
            }
        };
        let url = format!("{}/chat/completions", base_url(&provider, &url)?);
        let mut headers = self.http.header_map(&provider)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = &key {
            headers.insert(
                AUTHORIZATION,
                secret_header(&provider, &format!("Bearer {}", key.expose()))?,
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
        Ok(OpenAi {
            name: format!("{provider}/{}", self.model),
            model: self.model,
            url,
            headers,
            schemas: Arc::new(SchemaCache::new(self.schema)),
            transport: Arc::new(Transport {
                provider,
                client,
                retry: self.http.retry,
                key,
                limiter,
            }),
            options: BodyOptions {
                max_tokens_field: self.max_tokens_field,
                include_usage: self.include_usage,
            },
        })
    }
}

impl From<OpenAiBuilder> for ModelRef {
    fn from(builder: OpenAiBuilder) -> Self {
        ModelRef::deferred(move || Ok(Arc::new(builder.clone().build()?)))
    }
}
