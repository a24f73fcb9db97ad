//! `lousho tools`: every tool the agent would see, its decision, and each
//! MCP server's status.

use crate::cli::ToolsArgs;
use crate::load::{self, Approvals, ModelChoice};
use crate::servers::Servers;
use lousho::mcp::ServerStatus;
use lousho::mcp::qualified_name;
use lousho::policy::PinState;
use lousho::tool::ToolOrigin;
use serde_json::{Value, json};
use std::io::Write;
use std::process::ExitCode;
use std::time::SystemTime;

/// Runs the command. The model is not needed to list tools, so the offline
/// test model stands in (no API key is needed).
pub async fn run(
    args: ToolsArgs,
    tokens: Option<&std::path::Path>,
    catalog: bool,
    signals: &crate::signals::Signals,
) -> anyhow::Result<ExitCode> {
    let spec_file = load::spec(&args.spec)?;
    let (agent, mcp) = load::build(
        &spec_file,
        ModelChoice::Named("test"),
        Approvals::Nobody,
        tokens,
        catalog,
    )?;
    if let Some(mcp) = &mcp {
        // A server that fails is reported in the output, not as an error.
        tokio::select! {
            _ = load::connect(mcp, !args.json, args.refresh) => {}
            signal = signals.any() => {
                agent.close().await;
                return Ok(signal.exit_code());
            }
        }
    }
    let status = mcp.as_ref().map(Servers::status).unwrap_or_default();
    // A server's manifest age, while its tools come from the manifest.
    let manifest_age = |server: &str| -> Option<u64> {
        let mcp = mcp.as_ref()?;
        let listed = mcp.client().listed_at(server).ok()??;
        Some(
            SystemTime::now()
                .duration_since(listed)
                .unwrap_or_default()
                .as_secs(),
        )
    };
    // Estimated tokens of the definitions, and what tool search holds back.
    let budget = agent.tool_budget()?;
    let mut server_tokens: std::collections::BTreeMap<String, usize> = Default::default();
    let mut tools: Vec<Value> = Vec::new();
    for tool in agent.tools()?.iter() {
        let spec = tool.spec();
        let server = spec.origin.server();
        let decision = agent.tool_decision(&spec.name);
        let pin = spec.pin.as_ref();
        let mut entry = json!({
            "name": spec.name,
            "server": server,
            "origin": origin_kind(&spec.origin),
            "decision": decision.decision.as_str(),
            "reason": decision.reason.to_string(),
            "annotations": serde_json::to_value(&spec.annotations)?,
            "fingerprint": spec.fingerprint,
            "pin": pin.map(|p| p.state.as_str()),
            "drift": pin.map(|p| p.changes.clone()).unwrap_or_default(),
            // As the tool gives it (an MCP server's keys in the server's order).
            "inputSchema": spec.input_schema,
            "tokens": budget.tool_tokens.get(&spec.name),
            "deferred": budget.deferred.contains(&spec.name),
        });
        if let (Some(server), Some(n)) = (server, budget.tool_tokens.get(&spec.name)) {
            *server_tokens.entry(server.to_owned()).or_default() += n;
        }
        if let Some(server) = server {
            let cataloged = status.get(server) == Some(&ServerStatus::Cataloged);
            entry["source"] = json!(if cataloged { "catalog" } else { "live" });
            if cataloged {
                entry["manifestAgeSecs"] = json!(manifest_age(server));
            }
        }
        tools.push(entry);
    }
    // Pinned tools the servers no longer list.
    if let Some(mcp) = &mcp {
        for d in mcp.client().drift() {
            if d.state != PinState::Removed {
                continue;
            }
            tools.push(json!({
                "name": qualified_name(spec_file.mcp_options.naming, &d.server, &d.tool),
                "server": d.server,
                "origin": "mcp",
                "decision": null,
                "reason": null,
                "annotations": {},
                "fingerprint": null,
                "pin": "removed",
                "drift": [],
                "inputSchema": null,
            }));
        }
    }
    let pins_shown = tools.iter().any(|t| !t["pin"].is_null());
    tools.sort_by_key(|t| {
        (
            t["server"].as_str().map(str::to_owned),
            t["name"].as_str().unwrap_or_default().to_owned(),
        )
    });
    let mut servers = serde_json::Map::new();
    if let Some(mcp) = &mcp {
        for (name, status) in mcp.status() {
            let age = manifest_age(&name);
            let (status, error) = match status {
                ServerStatus::Connected => ("connected", None),
                ServerStatus::Cataloged => ("cataloged", None),
                ServerStatus::Failed(e) => ("failed", Some(e)),
                ServerStatus::NeedsAuth => ("needs-auth", None),
                _ => ("idle", None),
            };
            let tokens = server_tokens.get(&name).copied().unwrap_or(0);
            servers.insert(
                name,
                json!({ "status": status, "error": error, "manifestAgeSecs": age, "tokens": tokens }),
            );
        }
    }
    agent.close().await;
    let search = json!({
        "mode": spec_file.tool_search.mode,
        "active": budget.search.is_some(),
        "totalTokens": budget.total_tokens,
        "firstRequestTokens": budget.sent_tokens,
        "deferred": budget.deferred.len(),
    });
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(
                &json!({ "tools": tools, "servers": servers, "toolSearch": search })
            )?
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut header = vec!["TOOL", "ORIGIN", "DECISION", "REASON", "TOKENS"];
    if pins_shown {
        header.push("PIN");
    }
    let mut table = crate::table::new(&header);
    for t in &tools {
        let pin = if pins_shown {
            let state = t["pin"].as_str().unwrap_or("-");
            let drift: Vec<&str> = t["drift"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if drift.is_empty() {
                state.to_owned()
            } else {
                format!("{state} ({})", drift.join("; "))
            }
        } else {
            String::new()
        };
        let mut row = vec![
            t["name"].as_str().unwrap_or_default().to_owned(),
            t["server"]
                .as_str()
                .or(t["origin"].as_str())
                .unwrap_or_default()
                .to_owned(),
            t["decision"].as_str().unwrap_or("-").to_owned(),
            t["reason"].as_str().unwrap_or("-").to_owned(),
            match (t["tokens"].as_u64(), t["deferred"].as_bool()) {
                (Some(n), Some(true)) => format!("({n})"),
                (Some(n), _) => n.to_string(),
                (None, _) => "-".to_owned(),
            },
        ];
        if pins_shown {
            row.push(pin);
        }
        table.add_row(row);
    }
    writeln!(out, "{}", crate::table::render(&mut table))?;
    let plural = if tools.len() == 1 { "" } else { "s" };
    writeln!(out, "({} tool{plural})", tools.len())?;
    if !servers.is_empty() {
        writeln!(out)?;
        let mut table = crate::table::new(&["MCP SERVER", "STATUS", "TOKENS"]);
        for (name, s) in &servers {
            let status = s["status"].as_str().unwrap_or_default();
            let text = match (s["error"].as_str(), s["manifestAgeSecs"].as_u64()) {
                (Some(e), _) => format!("{status}: {e}"),
                (None, Some(age)) if status == "cataloged" => format!(
                    "{status} (tools from a manifest {} old; --refresh to reconnect)",
                    short_age(age)
                ),
                (None, _) => status.to_owned(),
            };
            let tokens = s["tokens"].as_u64().unwrap_or(0).to_string();
            table.add_row(vec![name.clone(), text, tokens]);
        }
        writeln!(out, "{}", crate::table::render(&mut table))?;
    }
    writeln!(out)?;
    let mode = search["mode"].as_str().unwrap_or_default();
    if budget.search.is_some() {
        writeln!(
            out,
            "Tool definitions: ~{} tokens (estimated, 4 bytes a token); tool search ({mode}) holds back {} tools (in parentheses): the first request loads ~{} tokens.",
            budget.total_tokens,
            budget.deferred.len(),
            budget.sent_tokens
        )?;
    } else {
        writeln!(
            out,
            "Tool definitions: ~{} tokens per request (estimated, 4 bytes a token); tool search ({mode}) is not active.",
            budget.total_tokens
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `42s`, `5m`, `3h`, `2d`.
fn short_age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}

/// `"local"`, `"builtin"` or `"mcp"`.
fn origin_kind(origin: &ToolOrigin) -> &'static str {
    match origin {
        ToolOrigin::Builtin => "builtin",
        ToolOrigin::Mcp { .. } => "mcp",
        _ => "local",
    }
}
