//! Export over OTLP (HTTP/protobuf, feature `otel`): the spans of
//! [`telemetry`](super) to any OpenTelemetry backend (Jaeger, Grafana Tempo,
//! Honeycomb, Langfuse, Logfire, Phoenix, a Collector).
//!
//! Configured by the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (the
//! base URL, `/v1/traces` is appended) or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//! (used as is), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`; or in code with [`OtelConfig`]. Spans leave in
//! batches from a background thread; [`OtelGuard`] sends what is left when it
//! is shut down or dropped.
//!
//! ```no_run
//! # fn main() -> Result<(), lousho::telemetry::otel::OtelError> {
//! use lousho::telemetry::otel::OtelConfig;
//! // With OTEL_EXPORTER_OTLP_ENDPOINT set: export; unset: nothing installed.
//! let _guard = match OtelConfig::from_env() {
//!     Some(config) => Some(config.init()?),
//!     None => None,
//! };
//! # Ok(()) }
//! ```

use super::TARGET;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;

/// The service name when neither [`OtelConfig::service_name`] nor
/// `OTEL_SERVICE_NAME` gives one.
pub const DEFAULT_SERVICE_NAME: &str = "lousho";

/// Where and as whom to export.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct OtelConfig {
    endpoint: Option<String>,
    service_name: Option<String>,
}

/// Export could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The exporter could not be built (a malformed endpoint or variable).
    #[error(
        "could not set up the OTLP exporter: {0}; check OTEL_EXPORTER_OTLP_ENDPOINT (a base URL such as http://127.0.0.1:4318)"
    )]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
    /// A global subscriber is already installed: add [`OtelConfig::layer`]
    /// to it instead of calling [`OtelConfig::init`].
    #[error(
        "a global tracing subscriber is already installed; add OtelConfig::layer() to it instead of calling init()"
    )]
    SubscriberExists(#[source] tracing::subscriber::SetGlobalDefaultError),
    /// Spans could not be sent when shutting down.
    #[error("could not send the last spans: {0}")]
    Shutdown(#[source] opentelemetry_sdk::error::OTelSdkError),
}

/// Names an environment variable set to something other than blanks.
fn env_set(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| !v.trim().is_empty())
}

impl OtelConfig {
    /// Export to the endpoint the variables give, or to an OTLP receiver on
    /// `http://localhost:4318` when they give none.
    pub fn new() -> Self {
        Self::default()
    }

    /// A config when `OTEL_EXPORTER_OTLP_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; `None` (export nothing)
    /// otherwise.
    pub fn from_env() -> Option<Self> {
        (env_set("OTEL_EXPORTER_OTLP_ENDPOINT") || env_set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
            .then(Self::new)
    }

    /// The receiver's base URL (`http://127.0.0.1:4318`); `/v1/traces` is
    /// appended. Takes precedence over the variables.
    pub fn endpoint(mut self, base_url: impl Into<String>) -> Self {
        self.endpoint = Some(base_url.into());
        self
    }

    /// The `service.name` the spans are filed under (else `OTEL_SERVICE_NAME`,
    /// else [`DEFAULT_SERVICE_NAME`]).
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// A layer for your own subscriber, and the guard that flushes it. It
    /// exports every span it sees: filter it (`.with_filter(...)`) to
    /// `lousho::telemetry` if your subscriber enables more.
    pub fn layer<S>(self) -> Result<(impl Layer<S>, OtelGuard), OtelError>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        let provider = self.provider()?;
        let tracer = provider.tracer("lousho");
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_tracked_inactivity(false)
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_level(false);
        Ok((layer, OtelGuard { provider }))
    }

    /// Installs a global subscriber that exports lousho's spans (and nothing
    /// else: no log lines). Use [`layer`](OtelConfig::layer) to add export to
    /// a subscriber of your own.
    pub fn init(self) -> Result<OtelGuard, OtelError> {
        let (layer, guard) = self.layer()?;
        let filter = Targets::new().with_target(TARGET, tracing::Level::INFO);
        let subscriber = tracing_subscriber::registry().with(layer.with_filter(filter));
        tracing::subscriber::set_global_default(subscriber).map_err(OtelError::SubscriberExists)?;
        Ok(guard)
    }

    fn provider(self) -> Result<SdkTracerProvider, OtelError> {
        let mut exporter = SpanExporter::builder().with_http();
        if let Some(base) = &self.endpoint {
            exporter = exporter.with_endpoint(format!("{}/v1/traces", base.trim_end_matches('/')));
        }
        let exporter = exporter.build().map_err(OtelError::Exporter)?;
        let service_name = self
            .service_name
            .or_else(|| {
                std::env::var("OTEL_SERVICE_NAME")
                    .ok()
                    .filter(|v| !v.trim().is_empty())
            })
            .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_owned());
        let resource = Resource::builder().with_service_name(service_name).build();
        Ok(SdkTracerProvider::builder()
            .with_resource(resource)
            .with_batch_exporter(exporter)
            .build())
    }
}

/// Keeps export running; [`shutdown`](OtelGuard::shutdown) (or dropping
/// it) sends the spans still queued and stops the export thread.
#[must_use = "dropping the guard stops the export"]
pub struct OtelGuard {
    provider: SdkTracerProvider,
}

impl std::fmt::Debug for OtelGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelGuard").finish_non_exhaustive()
    }
}

impl OtelGuard {
    /// Sends the spans that ended so far, and waits until they are sent
    /// (blocking: from async code, call it in `spawn_blocking`).
    pub fn flush(&self) -> Result<(), OtelError> {
        self.provider.force_flush().map_err(OtelError::Shutdown)
    }

    /// Sends what is left and stops export (blocking, like
    /// [`flush`](OtelGuard::flush), for at most [`SHUTDOWN_TIMEOUT`]: an
    /// unreachable receiver does not hold the program's exit longer).
    pub fn shutdown(self) -> Result<(), OtelError> {
        self.provider
            .shutdown_with_timeout(SHUTDOWN_TIMEOUT)
            .map_err(OtelError::Shutdown)
    }
}

/// The longest [`OtelGuard::shutdown`] (or the guard's drop) waits for the
/// last spans to be sent.
pub const SHUTDOWN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

impl Drop for OtelGuard {
    fn drop(&mut self) {
        // A second shutdown (after `shutdown()`) only reports that it was done.
        let _ = self.provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT);
    }
}
