//! Logs on stderr: which filter applies, colours, crate names.
//!
//! The filter: `-v`/`-vv` when given; else `LOUSHO_LOG`; else `RUST_LOG`;
//! else the default (warnings of lousho and the crates it uses). rmcp's own
//! lines sit one step below lousho's: off by default (lousho reports what
//! failed, with the cause, in its own words), warnings at `-v`, everything
//! at `-vv`. An empty variable counts as unset.
//!
//! Colours only when stderr is a terminal and `NO_COLOR` is unset or empty
//! (<https://no-color.org>). Log lines name their crate (target) at `-vv`.

use lousho::spec::TelemetrySpec;
use lousho::telemetry::otel::{OtelConfig, OtelGuard};
use std::io::IsTerminal;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The variable that sets lousho's log filter.
pub const LOUSHO_LOG: &str = "LOUSHO_LOG";

/// The filter for `-v` given `verbose` times (0: none).
fn flag_filter(verbose: u8) -> &'static str {
    match verbose {
        0 => "warn,rmcp=off",
        1 => "info,lousho=debug,rmcp=warn",
        _ => "debug",
    }
}

/// A non-empty environment variable.
fn env_value(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

/// Whether log lines may carry ANSI colours.
pub fn colours() -> bool {
    env_value("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

/// Installs the subscriber: log lines on stderr, and with `trace` (or
/// `OTEL_EXPORTER_OTLP_ENDPOINT` set) lousho's spans exported over OTLP; the
/// guard sends the last spans when dropped. A malformed log variable is
/// reported and the default used instead.
#[allow(clippy::print_stderr)]
pub fn init(
    verbose: u8,
    trace: bool,
    spec: Option<TelemetrySpec>,
) -> anyhow::Result<Option<OtelGuard>> {
    let from_env = (verbose == 0)
        .then(|| {
            [LOUSHO_LOG, "RUST_LOG"]
                .into_iter()
                .find_map(|var| env_value(var).map(|value| (var, value)))
        })
        .flatten();
    let filter = match from_env {
        Some((var, value)) => EnvFilter::try_new(&value).unwrap_or_else(|e| {
            eprintln!("lousho: {var}={value:?} is not a valid log filter ({e}); using the default");
            EnvFilter::new(flag_filter(0))
        }),
        None => EnvFilter::new(flag_filter(verbose)),
    };
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colours())
        .with_target(verbose >= 2)
        // A closed stderr must not matter: by default a failed log write is
        // reported with eprintln!, whose panic dropped the HTTP connection
        // that logged (e.g. every request refused for its Host).
        .log_internal_errors(false)
        .with_filter(filter);
    let registry = tracing_subscriber::registry().with(fmt);
    let config = otel_config(trace, spec.unwrap_or_default());
    let Some(config) = config else {
        registry.init();
        return Ok(None);
    };
    let (otel, guard) = config.layer()?;
    let spans = Targets::new().with_target(lousho::telemetry::TARGET, tracing::Level::INFO);
    registry.with(otel.with_filter(spans)).init();
    Ok(Some(guard))
}

/// Export when `--trace`, the variables or the spec's `telemetry.endpoint`
/// ask for it; the variables win over the spec (an operator redirects a
/// checked-in spec without editing it).
fn otel_config(trace: bool, spec: TelemetrySpec) -> Option<OtelConfig> {
    let mut config = match (OtelConfig::from_env(), &spec.endpoint) {
        (Some(config), _) => config,
        (None, Some(endpoint)) => OtelConfig::new().endpoint(endpoint),
        (None, None) if trace => OtelConfig::new(),
        (None, None) => return None,
    };
    if env_value("OTEL_SERVICE_NAME").is_none()
        && let Some(name) = spec.service_name
    {
        config = config.service_name(name);
    }
    Some(config)
}

/// `LOUSHO_LOG` is this process's setting: a stdio server (often another
/// `lousho mcp`) gets it only when its entry asks (`env: {LOUSHO_LOG: …}`);
/// otherwise it is set empty there, which lousho reads as unset.
pub fn keep_from_children(servers: &mut lousho::mcp::McpServers) {
    if std::env::var_os(LOUSHO_LOG).is_none() {
        return;
    }
    for entry in servers.values_mut() {
        if let lousho::mcp::McpTransport::Stdio(stdio) = &mut entry.transport {
            stdio.env.entry(LOUSHO_LOG.to_owned()).or_default();
        }
    }
}
