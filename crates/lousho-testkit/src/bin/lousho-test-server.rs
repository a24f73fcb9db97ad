//! Serves the fixture agent over MCP, for interop tests and benchmarks.
//!
//! `lousho-test-server [--max-line-bytes N]` serves stdio; `lousho-test-server --http [--port N]
//! [--token T] [--allow-approval-tools]` serves Streamable HTTP on 127.0.0.1,
//! prints `listening on <url>` on stdout once bound, and stops on SIGINT or
//! SIGTERM.

use lousho::mcp::server::{Auth, HttpOptions, serve_mcp};
use lousho_testkit::serve::{CancelProbe, fixture_options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("LOUSHO_LOG"))
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let probe = CancelProbe::default();
    let mut options = fixture_options(&probe)
        .allow_approval_tools(args.iter().any(|a| a == "--allow-approval-tools"));
    if let Some(n) = value("--max-line-bytes") {
        options = options.max_line_bytes(n.parse()?);
    }
    let http = args.iter().any(|a| a == "--http");
    if http {
        let port = value("--port").map(|p| p.parse()).transpose()?.unwrap_or(0);
        options = options.http(HttpOptions::new().port(port));
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
