//! Serves the fixture agent over MCP, for interop tests and benchmarks.
//!
//! `lousho-test-server [--max-line-bytes N]` serves stdio; `lousho-test-server --http [--port N]
//! [--token T] [--stateful]` serves Streamable HTTP on 127.0.0.1, prints
//! `listening on <url>` on stdout once bound, and stops on SIGINT or SIGTERM.
//! Either: `--approvals deny|elicit|allow` (`--allow-approval-tools` is
//! `allow`; with any of them the agent can also call `delete_order`, which
//! needs approval: ask it to "delete order 42") and `--approval-timeout-ms N`.
//! `--agents` serves several agents instead (`serve::team_options`);
//! `--sampling` agents on the client's model (`serve::sampling_options`);
//! `--chain` an agent-as-tool chain whose every level waits until cancelled
//! (`serve::chain_options`); `--talk-back` also serves `serve::talk_back`,
//! `serve::sample_back` and `serve::slow_wait` as direct tools; `--task-tool`
//! `serve::long_steps`, a direct tool served as a task; `--grow` also serves
//! `serve::add_tool`, which adds a tool while serving. `--output` serves an
//! agent with an output schema (`serve::output_options`), `--budget` agents
//! with budgets (`serve::budget_options`); `--sessions`
//! keeps the agent tools' conversations (in memory).

use lousho::mcp::{Auth, HttpOptions, ServeApprovals};
use lousho::serve_mcp;
use lousho_testkit::serve::{
    CancelProbe, ChainProbe, add_tool, approvals_agent, budget_options, chain_options,
    fixture_options, fixture_options_for, long_steps, output_options, sample_back,
    sampling_options, slow_wait, talk_back, team_options,
};
use std::time::Duration;

#[cfg(not(feature = "otel"))]
fn init_logging() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("LOUSHO_LOG"))
        .init();
    Ok(())
}

#[cfg(feature = "otel")]
fn init_logging() -> Result<Option<lousho::telemetry::otel::OtelGuard>, Box<dyn std::error::Error>>
{
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(tracing_subscriber::EnvFilter::from_env("LOUSHO_LOG"));
    let registry = tracing_subscriber::registry().with(fmt);
    match lousho::telemetry::otel::OtelConfig::from_env() {
        Some(config) => {
            let (layer, guard) = config.layer()?;
            let filter = tracing_subscriber::filter::Targets::new()
                .with_target(lousho::telemetry::TARGET, tracing::Level::INFO);
            registry.with(layer.with_filter(filter)).init();
            Ok(Some(guard))
        }
        None => {
            registry.init();
            Ok(None)
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // With the `otel` feature and OTEL_EXPORTER_OTLP_ENDPOINT set, the
    // spans are exported too (the guard sends the last ones at exit).
    let _otel = init_logging()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let probe = CancelProbe::default();
    let approvals = match value("--approvals") {
        Some(mode) => Some(mode.parse::<ServeApprovals>()?),
        None if args.iter().any(|a| a == "--allow-approval-tools") => Some(ServeApprovals::Allow),
        None => None,
    };
    let mut options = match approvals {
        _ if args.iter().any(|a| a == "--agents") => team_options(),
        _ if args.iter().any(|a| a == "--sampling") => sampling_options(),
        _ if args.iter().any(|a| a == "--chain") => chain_options(&ChainProbe::default()),
        _ if args.iter().any(|a| a == "--output") => output_options(),
        _ if args.iter().any(|a| a == "--budget") => budget_options(),
        Some(mode) => fixture_options_for(approvals_agent(&probe), &probe).approvals(mode),
        None => fixture_options(&probe),
    };
    if args.iter().any(|a| a == "--talk-back") {
        options = options
            .tool(talk_back())
            .tool(sample_back())
            .tool(slow_wait(&probe));
    }
    if args.iter().any(|a| a == "--sessions") {
        options = options.sessions(std::sync::Arc::new(lousho::session::MemoryStore::new()));
    }
    if args.iter().any(|a| a == "--task-tool") {
        options = options.tool(long_steps());
    }
    let grown = std::sync::Arc::new(std::sync::OnceLock::new());
    if args.iter().any(|a| a == "--grow") {
        options = options.tool(add_tool(grown.clone()));
    }
    if let Some(ms) = value("--approval-timeout-ms") {
        options = options.approval_timeout(Duration::from_millis(ms.parse()?));
    }
    if let Some(n) = value("--max-line-bytes") {
        options = options.max_line_bytes(n.parse()?);
    }
    let http = args.iter().any(|a| a == "--http");
    if http {
        let port = value("--port").map(|p| p.parse()).transpose()?.unwrap_or(0);
        let stateful = args.iter().any(|a| a == "--stateful");
        options = options.http(HttpOptions::new().port(port).stateful(stateful));
        if let Some(token) = value("--token") {
            options = options.auth(Auth::bearer(token));
        }
    }
    // stdio is fastest on one thread; HTTP spreads connections over the cores.
    let runtime = if http {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    };
    runtime.block_on(async move {
        let server = serve_mcp(options).await?;
        let _ = grown.set(server.catalog().clone());
        if let Some(url) = server.url() {
            println!("listening on {url}");
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            tokio::select! {
                r = tokio::signal::ctrl_c() => r?,
                _ = term.recv() => {}
            }
            server.close().await?;
        } else {
            server.wait().await?;
        }
        Ok(())
    })
}
