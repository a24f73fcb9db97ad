//! The HTTP side of a provider: a pooled client, one streaming request with
//! retries before the first output, and the mapping of HTTP failures to
//! [`ModelError`].

use super::retry::{RetryNotice, RetryPolicy};
use super::secret::ApiKey;
use super::sse::{SseEvent, SseParser};
use crate::error_chain::error_chain;
use crate::model::{ModelError, ModelEvent, ModelStream};
use futures::FutureExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The default connect timeout.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// The default longest silence between two reads of a streaming response.
pub(crate) const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);
/// The most of an error body kept for the message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Builds the pooled client a provider keeps for all its requests.
pub(crate) fn build_client(
    provider: &str,
    connect_timeout: Duration,
    read_timeout: Duration,
) -> Result<reqwest::Client, ModelError> {
    reqwest::Client::builder()
        .user_agent(concat!("lousho/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(connect_timeout)
        .read_timeout(read_timeout)
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_nodelay(true)
        .build()
        .map_err(|e| ModelError::InvalidConfig {
            provider: provider.to_owned(),
            message: format!("cannot create the HTTP client: {}", error_chain(&e)),
        })
}

/// A header value holding a secret: marked sensitive so HTTP tooling never logs it.
pub(crate) fn secret_header(provider: &str, value: &str) -> Result<HeaderValue, ModelError> {
    let mut v = HeaderValue::from_str(value).map_err(|_| ModelError::InvalidConfig {
        provider: provider.to_owned(),
        message: "the API key contains characters not allowed in an HTTP header".into(),
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// One provider's connection: its name, client, retry policy and key.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    pub provider: String,
    pub client: reqwest::Client,
    pub retry: RetryPolicy,
    /// Only used to scrub what the provider sends back (error bodies, events).
    pub key: Option<ApiKey>,
    /// The account's client-side rate limiter, shared by the process's
    /// models of the same provider, base URL and key (none unless limits
    /// were set).
    pub limiter: Option<Arc<super::limit::Limiter>>,
}

/// One request, ready to send (again, on retry).
#[derive(Debug, Clone)]
pub(crate) struct PreparedRequest {
    pub url: String,
    pub headers: HeaderMap,
    /// Cloned per attempt without copying.
    pub body: bytes::Bytes,
}

/// A failure, with the server's requested delay when it gave one.
#[derive(Debug)]
pub(crate) struct Failure {
    pub error: ModelError,
    pub retry_after: Option<Duration>,
}

impl From<ModelError> for Failure {
    fn from(error: ModelError) -> Self {
        Self {
            error,
            retry_after: None,
        }
    }
}

/// Turns a provider's event stream into [`ModelEvent`]s.
pub(crate) trait StreamDecoder: Clone + Send + 'static {
    /// Handles one SSE event. Returns `true` when the response is complete.
    fn event(
        &mut self,
        event: SseEvent,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<bool, ModelError>;

    /// The body ended without the completion marker: flush what is complete
    /// or report a truncated response.
    fn finish(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError>;
}

/// Maps a non-2xx response to an error: `(provider, status, body, retry_after)`.
pub(crate) type ClassifyError = fn(&str, u16, &str, Option<Duration>) -> ModelError;

/// The error for a status, given the provider's message. Providers handle
/// their special cases (context length, quota) before falling back here.
pub(crate) fn error_for_status(
    provider: &str,
    status: u16,
    message: String,
    retry_after: Option<Duration>,
) -> ModelError {
    let provider = provider.to_owned();
    match status {
        401 | 403 => ModelError::Authentication {
            provider,
            status,
            message,
        },
        429 => ModelError::RateLimited {
            provider,
            retry_after,
            message,
        },
        503 | 529 => ModelError::Overloaded {
            provider,
            status,
            message,
        },
        500..=599 => ModelError::Server {
            provider,
            status,
            message,
        },
        _ => ModelError::BadRequest {
            provider,
            status,
            message,
        },
    }
}

/// A provider's request, from a [`ModelRequest`](crate::model::ModelRequest)
/// to a model stream: the tools' schemas normalised for `transport.provider`
/// (an unfixable schema fails the stream at once) and built into the
/// provider's `tools` array by `tools` — serialised once per tool set (see
/// [`SchemaCache::tools_json`](super::schema::SchemaCache::tools_json)) —,
/// the rest of the JSON body built by `body` (with `"tools": null` where the
/// array goes when the request has tools), then [`stream`] to `url` with
/// `headers`. `cache_breakpoint` is passed to `tools`. One path for every
/// wire format. `fail_fast`: a model list has a next model, so errors that
/// [fail over at once](ModelError::fails_over_at_once) are not retried.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stream_request<D: StreamDecoder>(
    transport: &Arc<Transport>,
    schemas: &super::schema::SchemaCache,
    (url, headers): (&str, &HeaderMap),
    request: &crate::model::ModelRequest,
    (tools, cache_breakpoint, body): (ToolList<'_>, bool, impl FnOnce() -> serde_json::Value),
    decoder: D,
    classify: ClassifyError,
    fail_fast: bool,
) -> ModelStream {
    let tools =
        match schemas.tools_json(&transport.provider, &request.tools, cache_breakpoint, tools) {
            Ok(tools) => tools,
            Err(e) => return Box::pin(futures::stream::once(async move { Err(e) })),
        };
    let prepared = PreparedRequest {
        url: url.to_owned(),
        headers: headers.clone(),
        body: serialize_body(&body(), tools.as_deref()).into(),
    };
    stream(transport.clone(), prepared, decoder, classify, fail_fast)
}

pub(crate) use super::schema::ToolList;

/// `body` as JSON, the serialised tool list written in place of its
/// `"tools"` placeholder (see [`stream_request`]).
fn serialize_body(body: &serde_json::Value, tools: Option<&str>) -> Vec<u8> {
    let (serde_json::Value::Object(map), Some(tools)) = (body, tools) else {
        return body.to_string().into_bytes();
    };
    let mut out = Vec::with_capacity(tools.len() + 4096);
    out.push(b'{');
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing a string or a `Value` into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut out, key);
        out.push(b':');
        if key == "tools" {
            out.extend_from_slice(tools.as_bytes());
        } else {
            let _ = serde_json::to_writer(&mut out, value);
        }
    }
    out.push(b'}');
    out
}

/// Starts a streaming request. Nothing happens until the stream is polled;
/// dropping the stream closes the connection.
pub(crate) fn stream<D: StreamDecoder>(
    transport: Arc<Transport>,
    request: PreparedRequest,
    decoder: D,
    classify: ClassifyError,
    fail_fast: bool,
) -> ModelStream {
    let driver = Driver {
        transport,
        request,
        fresh_decoder: decoder.clone(),
        classify,
        fail_fast,
        retries: 0,
        started: false,
        response: None,
        parser: SseParser::default(),
        decoder,
        queue: VecDeque::new(),
        error: None,
        done: false,
        admitted: None,
        throttled: false,
        used: None,
    };
    Box::pin(futures::stream::unfold(driver, |mut d| async move {
        let item = d.next().await?;
        Some((item, d))
    }))
}

struct Driver<D> {
    transport: Arc<Transport>,
    request: PreparedRequest,
    /// The decoder's initial state, for a retry.
    fresh_decoder: D,
    classify: ClassifyError,
    /// A model list has a next model: errors that fail over at once are
    /// returned without retries.
    fail_fast: bool,
    retries: u32,
    /// An event reached the caller: no more retries.
    started: bool,
    response: Option<reqwest::Response>,
    parser: SseParser,
    decoder: D,
    queue: VecDeque<ModelEvent>,
    /// The final error, yielded after the events decoded before it.
    error: Option<ModelError>,
    done: bool,
    /// With a limiter: the tokens estimated for the attempt it let through.
    admitted: Option<u64>,
    /// With a limiter: whether the caller was told of a wait.
    throttled: bool,
    /// With a limiter: the usage the provider reported.
    used: Option<crate::model::Usage>,
}

impl<D> Drop for Driver<D> {
    /// Tells the limiter what the admitted attempt used, when the provider
    /// said (else the estimate stands).
    fn drop(&mut self) {
        if let (Some(limiter), Some(estimate), Some(used)) =
            (&self.transport.limiter, self.admitted.take(), self.used)
        {
            limiter.settle(estimate, used);
        }
    }
}

impl<D: StreamDecoder> Driver<D> {
    async fn next(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                self.started = true;
                if let (ModelEvent::Usage(u), Some(_)) = (&event, &self.transport.limiter) {
                    *self.used.get_or_insert_default() += *u;
                }
                return Some(Ok(event));
            }
            if let Some(error) = self.error.take() {
                return Some(Err(error));
            }
            if self.done {
                return None;
            }
            if self.response.is_none()
                && let Some(limiter) = &self.transport.limiter
                && self.admitted.is_none()
            {
                let estimate = u64::try_from(self.request.body.len() / 4).unwrap_or(u64::MAX);
                match limiter.try_admit(estimate) {
                    Ok(()) => self.admitted = Some(estimate),
                    Err(wait) => {
                        if !self.throttled {
                            self.throttled = true;
                            tracing::info!(
                                provider = %self.transport.provider, ?wait,
                                "the client-side rate limit holds the model request back"
                            );
                            return Some(Ok(ModelEvent::Throttled(wait)));
                        }
                        // Cancel-safe: nothing is reserved while waiting.
                        tokio::time::sleep(wait).await;
                        continue;
                    }
                }
            }
            let Err(failure) = self.step().await else {
                continue;
            };
            self.response = None;
            if let (Some(limiter), Some(estimate)) = (&self.transport.limiter, self.admitted.take())
            {
                // A failed attempt: its tokens (as far as they were read) go
                // back; a retry is admitted again.
                limiter.settle(estimate, self.used.take().unwrap_or_default());
            }
            let error = failure.error;
            let retry = error.is_retryable() && !(self.fail_fast && error.fails_over_at_once());
            if !self.started && retry {
                let attempt = self.retries + 1;
                if let Some((delay, from_retry_after)) =
                    self.transport.retry.delay(attempt, failure.retry_after)
                {
                    tracing::debug!(
                        provider = %self.transport.provider, attempt, ?delay, error = %error,
                        "retrying the model request"
                    );
                    if let Some(hook) = &self.transport.retry.on_retry {
                        hook(&RetryNotice {
                            provider: &self.transport.provider,
                            attempt,
                            delay,
                            from_retry_after,
                            error: &error,
                        });
                    }
                    tokio::time::sleep(delay).await;
                    self.retries = attempt;
                    self.parser = SseParser::default();
                    self.decoder = self.fresh_decoder.clone();
                    self.queue.clear();
                    continue;
                }
            }
            self.done = true;
            self.error = Some(error);
        }
    }

    /// Connects, or reads and decodes the next chunk.
    async fn step(&mut self) -> Result<(), Failure> {
        let Some(response) = &mut self.response else {
            self.response = Some(self.connect().await?);
            return Ok(());
        };
        let chunk = response.chunk().await.map_err(|e| self.network(e))?;
        let ended = chunk.is_none();
        let mut events = Vec::new();
        match chunk {
            Some(bytes) => self.parser.feed(&bytes, &mut events),
            None => self.parser.finish(&mut events),
        }
        .map_err(|e| self.invalid(e.0))?;
        for mut event in events {
            if let Some(key) = &self.transport.key {
                key.scrub_in_place(&mut event.data);
            }
            if self.decoder.event(event, &mut self.queue)? {
                self.complete();
                return Ok(());
            }
        }
        if ended {
            self.decoder.finish(&mut self.queue)?;
            self.done = true;
            self.response = None;
        }
        Ok(())
    }

    /// The decoder saw the end marker: drain what the server already sent
    /// (so the connection can go back to the pool) and stop.
    fn complete(&mut self) {
        self.done = true;
        if let Some(mut response) = self.response.take() {
            while let Some(Ok(Some(_))) = response.chunk().now_or_never() {}
        }
    }

    async fn connect(&mut self) -> Result<reqwest::Response, Failure> {
        let t = &self.transport;
        tracing::debug!(provider = %t.provider, url = %self.request.url, retry = self.retries, "model request");
        let response = t
            .client
            .post(&self.request.url)
            .headers(self.request.headers.clone())
            .body(self.request.body.clone())
            .send()
            .await
            .map_err(|e| self.network(e))?;
        let status = response.status();
        if let Some(limiter) = &t.limiter {
            let blocked = (status.as_u16() == 429).then(|| retry_after(response.headers()));
            limiter.observe(response.headers(), blocked.flatten());
        }
        if !status.is_success() {
            let retry_after = retry_after(response.headers());
            let body = read_error_body(response, t.key.as_ref()).await;
            let error = (self.classify)(&t.provider, status.as_u16(), &body, retry_after);
            return Err(Failure { error, retry_after });
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !content_type.is_empty() && !content_type.contains("text/event-stream") {
            let body = read_error_body(response, self.transport.key.as_ref()).await;
            return Err(self.invalid(format!(
                "expected an event stream, got `{content_type}`: {}",
                truncate(&body, 500)
            )));
        }
        Ok(response)
    }

    fn network(&self, e: reqwest::Error) -> Failure {
        ModelError::Network {
            provider: self.transport.provider.clone(),
            source: Box::new(e),
        }
        .into()
    }

    fn invalid(&self, message: String) -> Failure {
        ModelError::InvalidResponse {
            provider: self.transport.provider.clone(),
            message,
        }
        .into()
    }
}

/// The start of an error body, with the API key (should the provider echo
/// it) scrubbed out.
async fn read_error_body(mut response: reqwest::Response, key: Option<&ApiKey>) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_ERROR_BODY {
            body.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    let mut text = String::from_utf8_lossy(&body).into_owned();
    if let Some(key) = key {
        key.scrub_in_place(&mut text);
    }
    text
}

/// The first `max` characters of `text`.
pub(crate) fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an HTTP
/// date, else the reset time of an exhausted limit (OpenAI's
/// `x-ratelimit-reset-requests` / `-tokens` where the matching
/// `x-ratelimit-remaining-*` is 0).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    sent_retry_after(headers).or_else(|| exhausted_limit_reset(headers))
}

/// When OpenAI's exhausted limits reset.
fn exhausted_limit_reset(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    ["requests", "tokens"]
        .into_iter()
        .filter(|kind| text(&format!("x-ratelimit-remaining-{kind}")) == Some("0"))
        .filter_map(|kind| text(&format!("x-ratelimit-reset-{kind}")))
        .filter_map(super::limit::go_duration)
        .max()
}

/// `retry-after-ms`, else `Retry-After`.
fn sent_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text(RETRY_AFTER.as_str())?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                *k,
                HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")),
            );
        }
        h
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_http_dates() {
        assert_eq!(
            retry_after(&headers(&[("retry-after", "7")])),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "1.5")])),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "250"), ("retry-after", "9")])),
            Some(Duration::from_millis(250))
        );
        let in_a_minute = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(61));
        let d = retry_after(&headers(&[("retry-after", &in_a_minute)])).unwrap_or_default();
        assert!(
            d > Duration::from_secs(55) && d <= Duration::from_secs(61),
            "{d:?}"
        );
        let past = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(30));
        assert_eq!(
            retry_after(&headers(&[("retry-after", &past)])),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")])), None);
        assert_eq!(retry_after(&headers(&[])), None);
        // OpenAI's exhausted limit, without Retry-After.
        assert_eq!(
            retry_after(&headers(&[
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "1m2s"),
                ("x-ratelimit-remaining-tokens", "150"),
                ("x-ratelimit-reset-tokens", "9m"),
            ])),
            Some(Duration::from_secs(62))
        );
    }
}
