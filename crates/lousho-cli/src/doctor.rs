//! `lousho doctor [SPEC]`: what a newcomer trips over, checked before a run.
//! Each check passes, warns or fails, with what to do next; the exit code is
//! 1 when any check failed (warnings do not count).
//!
//! Without a spec: the folders lousho writes to, and which providers' API
//! keys are set. With one: also that it loads, that its model has its key
//! (the variable is named, never its value), and per MCP server that its
//! command is on `PATH`, that an `npx`/`uvx` package is pinned, and that it
//! starts and lists its tools (how long it took, how many, about how many
//! tokens their definitions cost the model).

mod checks;

use crate::cli::DoctorArgs;
use crate::exit;
use checks::{Check, Status};
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;

/// Runs the command.
pub async fn run(
    args: DoctorArgs,
    store: Option<&str>,
    tokens: Option<&std::path::Path>,
    signals: &crate::signals::Signals,
) -> anyhow::Result<ExitCode> {
    let mut found: Vec<Check> = Vec::new();
    if let Some(path) = &args.spec {
        match crate::load::spec(path) {
            Ok(spec) => {
                found.push(Check::ok(
                    "spec",
                    format!(
                        "{} loads ({} MCP server{})",
                        path.display(),
                        spec.mcp_servers.len(),
                        if spec.mcp_servers.len() == 1 { "" } else { "s" }
                    ),
                ));
                let model = args.model.as_deref().or(spec.model.as_deref());
                found.push(checks::model(model));
                found.extend(checks::commands(&spec));
                let servers = tokio::select! {
                    checks = checks::servers(&spec, tokens) => checks,
                    signal = signals.any() => return Ok(signal.exit_code()),
                };
                found.extend(servers);
            }
            Err(e) => found.push(Check::fail("spec", format!("{e:#}")).next(
                "fix the file at the line and key the message names, then run lousho doctor again",
            )),
        }
    } else {
        found.push(checks::keys_present());
        found.push(checks::runners());
    }
    found.extend(checks::folders(store, tokens));
    let failed = found.iter().any(|c| c.status == Status::Fail);
    let mut out = std::io::stdout().lock();
    if args.json {
        let checks: Vec<_> = found
            .iter()
            .map(|c| json!({"check": c.name, "status": c.status.as_str(), "detail": c.detail, "next": c.next}))
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({"ok": !failed, "checks": checks}))?
        )?;
    } else {
        let mut table = crate::table::new(&["CHECK", "RESULT", "DETAIL"]);
        for c in &found {
            table.add_row(vec![
                c.name.clone(),
                c.status.as_str().to_owned(),
                c.detail.clone(),
            ]);
        }
        writeln!(out, "{}", crate::table::render(&mut table))?;
        let next: Vec<&Check> = found.iter().filter(|c| c.next.is_some()).collect();
        if !next.is_empty() {
            writeln!(out)?;
            writeln!(out, "What to do next:")?;
            for c in next {
                writeln!(
                    out,
                    "- {}: {}",
                    c.name,
                    c.next.as_deref().unwrap_or_default()
                )?;
            }
        }
        let (fails, warns) = (
            found.iter().filter(|c| c.status == Status::Fail).count(),
            found.iter().filter(|c| c.status == Status::Warn).count(),
        );
        writeln!(out)?;
        writeln!(
            out,
            "{} checks: {} failed, {} warnings",
            found.len(),
            fails,
            warns
        )?;
    }
    Ok(ExitCode::from(if failed { exit::FAILED } else { exit::OK }))
}
