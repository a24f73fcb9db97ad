//! The `telemetry:` section: where the `lousho` CLI exports spans, whether
//! spans carry content, and prices over the built-in table.

use crate::AgentBuilder;
use crate::model::{Price, PriceTable};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

/// `telemetry:` as written.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TelemetryFile {
    /// Export spans over OTLP/HTTP to this base URL (`lousho` CLI; `/v1/traces` is appended). OTEL_EXPORTER_OTLP_ENDPOINT, when set, wins.
    pub endpoint: Option<String>,
    /// The service name the spans are filed under (OTEL_SERVICE_NAME, when set, wins; default `lousho`).
    pub service_name: Option<String>,
    /// Put prompts, completions, tool arguments and results on spans (default false: privacy).
    pub record_content: Option<bool>,
    /// Prices in US dollars per million tokens by model (`openai/gpt-4o-mini` or `gpt-4o-mini`), over the built-in table.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
}

/// The `telemetry` section of a spec file.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TelemetrySpec {
    /// The OTLP/HTTP base URL to export to (the CLI reads it).
    pub endpoint: Option<String>,
    /// The service name (the CLI reads it).
    pub service_name: Option<String>,
    /// Whether spans carry content (unset: the environment decides).
    pub record_content: Option<bool>,
    /// Prices over the built-in table.
    pub prices: BTreeMap<String, Price>,
}

impl From<TelemetryFile> for TelemetrySpec {
    fn from(f: TelemetryFile) -> Self {
        Self {
            endpoint: f.endpoint.filter(|e| !e.trim().is_empty()),
            service_name: f.service_name.filter(|s| !s.trim().is_empty()),
            record_content: f.record_content,
            prices: f.prices,
        }
    }
}

impl TelemetrySpec {
    /// Sets what concerns the agent: content recording and prices.
    pub(crate) fn apply(&self, mut builder: AgentBuilder) -> AgentBuilder {
        if let Some(on) = self.record_content {
            builder = builder.record_content(on);
        }
        if !self.prices.is_empty() {
            let table = self
                .prices
                .iter()
                .fold(PriceTable::builtin(), |t, (model, price)| {
                    t.with(model, *price)
                });
            builder = builder.prices(table);
        }
        builder
    }
}
