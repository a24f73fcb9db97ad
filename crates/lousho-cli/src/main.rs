//! `lousho`: run agents from spec files and serve them over MCP.
//!
//! Exit codes: 0 success (a closed stdout included); 1 the run, the model or
//! the tool failed (a tool call that returned an error result, or was
//! denied, included); 2 a bad command line, spec file or setup (a missing
//! API key); 3 an MCP server could not connect; 4 the run paused for
//! approval with no terminal to ask (saved for `lousho resume`); 5 the run
//! stopped at a limit of its `budget:`; 6 a `--replay` run differed from
//! its recording; 130 interrupted (SIGINT); 143 terminated (SIGTERM).

#![allow(
    unreachable_pub,
    reason = "a binary: nothing is reachable from outside; `pub` marks what other modules use"
)]

mod approve;
mod browser;
mod call;
mod cassette;
mod cli;
mod completions;
mod compose;
mod doctor;
mod elicit;
mod elicit_url;
mod exit;
mod import;
mod init;
mod load;
mod logging;
mod login;
mod pin;
mod progress;
mod repl;
mod resume;
mod run;
mod run_json;
mod serve;
mod servers;
mod sessions;
mod signals;
mod store;
#[cfg(target_os = "linux")]
mod supervise;
mod table;
mod tokens;
mod tools;
mod version;

use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let matches = Cli::command().version(version::long()).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    #[cfg(target_os = "linux")]
    let supervised = {
        let starts_servers = matches!(
            cli.command,
            Command::Mcp(_)
                | Command::Run(_)
                | Command::Resume(_)
                | Command::Tools(_)
                | Command::Call(_)
                | Command::Pin(_)
                | Command::Doctor(_)
        );
        let supervised = supervise::is_supervised();
        if starts_servers
            && !supervised
            && let Some(code) = supervise::run()
        {
            return code;
        }
        if supervised {
            supervise::arm_parent_death();
        }
        supervised
    };
    // Kept to the end: dropping it sends the last spans.
    // A spec's `telemetry.endpoint` turns export on too (read quietly
    // here: the command reports a bad spec itself).
    let spec_telemetry = match &cli.command {
        Command::Mcp(a) => a.spec.as_ref(),
        Command::Run(a) => Some(&a.spec),
        Command::Tools(a) => Some(&a.spec),
        Command::Call(a) => Some(&a.spec),
        _ => None,
    }
    .and_then(|path| load::spec(path).ok())
    .map(|spec| spec.telemetry);
    let verbose = cli.verbose;
    let _otel = match logging::init(verbose, cli.trace, spec_telemetry) {
        Ok(guard) => guard,
        Err(e) => return exit::report(&e, verbose),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return exit::report(&anyhow::Error::new(e), verbose),
    };
    let tokens = cli.tokens;
    let store = cli.store;
    let catalog = !cli.no_catalog;
    let result = runtime.block_on(async move {
        // First: from here on SIGINT and SIGTERM are events the commands
        // handle (they close their servers), not the default sudden death.
        let signals = signals::Signals::install()?;
        #[cfg(target_os = "linux")]
        if supervised {
            supervise::unblock_signals();
        }
        let tokens = tokens.as_deref();
        let store = store.as_deref();
        match cli.command {
            Command::Mcp(cli::McpArgs {
                command: Some(cli::McpCommand::Import(args)),
                ..
            }) => import::run(args),
            Command::Mcp(args) => serve::run(args, store, tokens, catalog, &signals).await,
            Command::Run(args) => run::run(args, store, tokens, catalog, &signals).await,
            Command::Resume(args) => resume::run(args, store, tokens, catalog, &signals).await,
            Command::Sessions(command) => tokio::select! {
                r = sessions::run(command, store) => r,
                signal = signals.any() => Ok(signal.exit_code()),
            },
            Command::Tools(args) => tools::run(args, tokens, catalog, &signals).await,
            Command::Call(args) => call::run(args, tokens, catalog, &signals).await,
            Command::Pin(args) => pin::run(args, tokens, &signals).await,
            // No servers to close: stop where they are.
            Command::Login(args) => tokio::select! {
                r = login::login(args, tokens) => r,
                signal = signals.any() => Ok(signal.exit_code()),
            },
            Command::Logout(args) => tokio::select! {
                r = login::logout(args, tokens) => r,
                signal = signals.any() => Ok(signal.exit_code()),
            },
            Command::Init(args) => init::run(args),
            Command::Completions(args) => completions::run(args),
            Command::Doctor(args) => doctor::run(args, store, tokens, &signals).await,
        }
    });
    // Stdio children of MCP servers are stopped by `close()`; do not wait
    // for stray blocking reads (a pending terminal prompt) on the way out.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(code) => code,
        Err(e) => exit::report(&e, verbose),
    }
}
