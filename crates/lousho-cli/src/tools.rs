//! `lousho tools`: every tool the agent would see, its decision, and each
//! MCP server's status.

use crate::cli::ToolsArgs;
use crate::load::{self, Approvals, ModelChoice};
use lousho::mcp::ServerStatus;
use lousho::tool::ToolOrigin;
use serde_json::{Value, json};
use std::io::Write;
use std::process::ExitCode;

/// Runs the command. The model is not needed to list tools, so the offline
/// test model stands in (no API key is needed).
pub async fn run(
    args: ToolsArgs,
    tokens: Option<&std::path::Path>,
    signals: &crate::signals::Signals,
) -> anyhow::Result<ExitCode> {
    let spec = load::spec(&args.spec)?;
    let (agent, mcp) = load::build(&spec, ModelChoice::Named("test"), Approvals::Nobody, tokens)?;
    if let Some(mcp) = &mcp {
        // A server that fails is reported in the output, not as an error.
        tokio::select! {
            _ = load::connect(mcp, !args.json) => {}
            signal = signals.any() => {
                agent.close().await;
                return Ok(signal.exit_code());
            }
        }
    }
    let mut tools: Vec<Value> = Vec::new();
    for tool in agent.tools()?.iter() {
        let spec = tool.spec();
        let server = spec.origin.server();
        let decision = agent.tool_decision(&spec.name);
        tools.push(json!({
            "name": spec.name,
            "server": server,
            "origin": origin_kind(&spec.origin),
            "decision": decision.decision.as_str(),
            "reason": decision.reason.to_string(),
            "annotations": serde_json::to_value(&spec.annotations)?,
        }));
    }
    tools.sort_by_key(|t| {
        (
            t["server"].as_str().map(str::to_owned),
            t["name"].as_str().unwrap_or_default().to_owned(),
        )
    });
    let mut servers = serde_json::Map::new();
    if let Some(mcp) = &mcp {
        for (name, status) in mcp.status() {
            let (status, error) = match status {
                ServerStatus::Connected => ("connected", None),
                ServerStatus::Failed(e) => ("failed", Some(e)),
                ServerStatus::NeedsAuth => ("needs-auth", None),
                _ => ("idle", None),
            };
            servers.insert(name, json!({ "status": status, "error": error }));
        }
    }
    agent.close().await;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({ "tools": tools, "servers": servers }))?
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<32} {:<12} {:<8} REASON",
        "TOOL", "ORIGIN", "DECISION"
    )?;
    for t in &tools {
        writeln!(
            out,
            "{:<32} {:<12} {:<8} {}",
            t["name"].as_str().unwrap_or_default(),
            t["server"]
                .as_str()
                .or(t["origin"].as_str())
                .unwrap_or_default(),
            t["decision"].as_str().unwrap_or_default(),
            t["reason"].as_str().unwrap_or_default(),
        )?;
    }
    if !servers.is_empty() {
        writeln!(out)?;
        writeln!(out, "{:<20} STATUS", "MCP SERVER")?;
        for (name, s) in &servers {
            let status = s["status"].as_str().unwrap_or_default();
            match s["error"].as_str() {
                Some(e) => writeln!(out, "{name:<20} {status}: {e}")?,
                None => writeln!(out, "{name:<20} {status}")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `"local"`, `"builtin"` or `"mcp"`.
fn origin_kind(origin: &ToolOrigin) -> &'static str {
    match origin {
        ToolOrigin::Builtin => "builtin",
        ToolOrigin::Mcp { .. } => "mcp",
        _ => "local",
    }
}
