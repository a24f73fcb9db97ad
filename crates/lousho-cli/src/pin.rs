//! `lousho pin`: write the MCP servers' live tool definitions to the lock
//! file next to the spec, or (`--check`) compare them with it.

use crate::cli::PinArgs;
use crate::exit;
use crate::load::{self, Approvals, ModelChoice};
use crate::signals::Signals;
use lousho::policy::{PinState, Pins, ToolDrift, lock_path};
use std::io::Write;
use std::process::ExitCode;

/// Runs the command.
pub async fn run(
    args: PinArgs,
    tokens: Option<&std::path::Path>,
    signals: &Signals,
) -> anyhow::Result<ExitCode> {
    let spec = load::spec(&args.spec)?;
    // Pins compare live definitions: no manifests.
    let (agent, mcp) = load::build(
        &spec,
        ModelChoice::Named("test"),
        Approvals::Nobody,
        tokens,
        false,
    )?;
    let Some(mcp) = mcp else {
        return Err(exit::Usage(format!(
            "{}: the spec has no mcpServers, so there is nothing to pin",
            spec.path.display()
        ))
        .into());
    };
    let connected = tokio::select! {
        r = load::connect(&mcp, false, true) => r,
        signal = signals.any() => {
            agent.close().await;
            return Ok(signal.exit_code());
        }
    };
    let live = mcp.client().live_pins();
    agent.close().await;
    connected?;
    let lock = lock_path(&spec.path);
    let pinned = if lock.exists() {
        Some(Pins::load(&lock)?)
    } else {
        None
    };
    let drift = pinned.as_ref().map(|p| full_drift(p, &live));
    let mut out = std::io::stdout().lock();
    let tools: usize = live.servers.values().map(|s| s.tools.len()).sum();
    let counts = format!("{tools} tools of {} servers", live.servers.len());
    if args.check {
        let Some(drift) = drift else {
            writeln!(
                out,
                "{}: no lock file; run `lousho pin {}` to write it",
                lock.display(),
                args.spec.display()
            )?;
            return Ok(ExitCode::from(exit::FAILED));
        };
        for d in &drift {
            writeln!(out, "{d}")?;
        }
        if drift.is_empty() {
            writeln!(out, "{}: up to date ({counts})", lock.display())?;
            return Ok(ExitCode::SUCCESS);
        }
        writeln!(
            out,
            "{}: {} tools drifted; review them, then run `lousho pin {}` to accept",
            lock.display(),
            drift.len(),
            args.spec.display()
        )?;
        return Ok(ExitCode::from(exit::FAILED));
    }
    for d in drift.iter().flatten() {
        writeln!(out, "accepting {d}")?;
    }
    if live.save(&lock)? {
        writeln!(out, "wrote {} ({counts})", lock.display())?;
    } else {
        writeln!(out, "{}: up to date ({counts})", lock.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The drift of every server of the spec, plus the pinned servers the spec
/// no longer has (all their tools removed).
fn full_drift(pinned: &Pins, live: &Pins) -> Vec<ToolDrift> {
    let mut drift = pinned.drift(live);
    for (server, pins) in &pinned.servers {
        if !live.servers.contains_key(server) {
            for tool in pins.tools.keys() {
                drift.push(ToolDrift::new(server, tool, PinState::Removed, Vec::new()));
            }
        }
    }
    drift
}
