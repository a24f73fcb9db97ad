//! `lousho tools`: every tool the agent would see, its decision, and each
//! MCP server's status, prompts and resources.

mod offers;

use crate::cli::ToolsArgs;
use crate::load::{self, Approvals, ModelChoice};
use crate::servers::Servers;
use lousho::Agent;
use lousho::agent::ToolBudget;
use lousho::mcp::ServerStatus;
use lousho::mcp::qualified_name;
use lousho::policy::PinState;
use lousho::spec::AgentSpec;
use lousho::tool::ToolOrigin;
use serde_json::{Value, json};
use std::collections::BTreeMap;
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
    let mcp = mcp.as_ref();
    // Estimated tokens of the definitions, and what tool search holds back.
    let budget = agent.tool_budget()?;
    let (mut tools, server_tokens) = tool_rows(&agent, mcp, &budget)?;
    if let Some(mcp) = mcp {
        tools.extend(removed_rows(mcp, &spec_file));
    }
    tools.sort_by_key(|t| {
        (
            t["server"].as_str().map(str::to_owned),
            t["name"].as_str().unwrap_or_default().to_owned(),
        )
    });
    let servers = mcp.map_or_else(Default::default, |mcp| server_rows(mcp, &server_tokens));
    let offered = match mcp {
        Some(mcp) => offers::rows(mcp).await,
        None => offers::OfferRows {
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
        },
    };
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
            serde_json::to_string_pretty(&json!({
                "tools": tools,
                "servers": servers,
                "prompts": offered.prompts,
                "resources": offered.resources,
                "resourceTemplates": offered.templates,
                "toolSearch": search,
            }))?
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    print_tools(&mut out, &tools)?;
    print_servers(&mut out, &servers)?;
    offers::print(&mut out, &offered)?;
    writeln!(out)?;
    print_budget(
        &mut out,
        &budget,
        search["mode"].as_str().unwrap_or_default(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// How old a server's manifest is, while its tools come from the manifest.
fn manifest_age(mcp: Option<&Servers>, server: &str) -> Option<u64> {
    let listed = mcp?.client().listed_at(server).ok()??;
    Some(
        SystemTime::now()
            .duration_since(listed)
            .unwrap_or_default()
            .as_secs(),
    )
}

/// One row per tool the agent would see (its decision, pin, tokens and
/// where its definition comes from), and the tokens of each server's tools.
fn tool_rows(
    agent: &Agent,
    mcp: Option<&Servers>,
    budget: &ToolBudget,
) -> anyhow::Result<(Vec<Value>, BTreeMap<String, usize>)> {
    let status = mcp.map(Servers::status).unwrap_or_default();
    let mut server_tokens: BTreeMap<String, usize> = BTreeMap::new();
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
                entry["manifestAgeSecs"] = json!(manifest_age(mcp, server));
            }
        }
        tools.push(entry);
    }
    Ok((tools, server_tokens))
}

/// Rows for the pinned tools the servers no longer list.
fn removed_rows(mcp: &Servers, spec_file: &AgentSpec) -> Vec<Value> {
    mcp.client()
        .drift()
        .into_iter()
        .filter(|d| d.state == PinState::Removed)
        .map(|d| {
            json!({
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
            })
        })
        .collect()
}

/// Each MCP server's status, error, manifest age and tool tokens.
fn server_rows(
    mcp: &Servers,
    server_tokens: &BTreeMap<String, usize>,
) -> serde_json::Map<String, Value> {
    let mut servers = serde_json::Map::new();
    for (name, status) in mcp.status() {
        let age = manifest_age(Some(mcp), &name);
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
    servers
}

/// The tools table (a PIN column when any tool has a pin state) and the count.
fn print_tools(out: &mut impl Write, tools: &[Value]) -> anyhow::Result<()> {
    let pins_shown = tools.iter().any(|t| !t["pin"].is_null());
    let mut header = vec!["TOOL", "ORIGIN", "DECISION", "REASON", "TOKENS"];
    if pins_shown {
        header.push("PIN");
    }
    let mut table = crate::table::new(&header);
    for t in tools {
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
            row.push(pin_cell(t));
        }
        table.add_row(row);
    }
    writeln!(out, "{}", crate::table::render(&mut table))?;
    let plural = if tools.len() == 1 { "" } else { "s" };
    writeln!(out, "({} tool{plural})", tools.len())?;
    Ok(())
}

/// A tool's pin state, with what drifted: `changed (description +12 chars)`.
fn pin_cell(tool: &Value) -> String {
    let state = tool["pin"].as_str().unwrap_or("-");
    let drift: Vec<&str> = tool["drift"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if drift.is_empty() {
        state.to_owned()
    } else {
        format!("{state} ({})", drift.join("; "))
    }
}

/// The MCP servers table, after a blank line (nothing without servers).
fn print_servers(
    out: &mut impl Write,
    servers: &serde_json::Map<String, Value>,
) -> anyhow::Result<()> {
    if servers.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let mut table = crate::table::new(&["MCP SERVER", "STATUS", "TOKENS"]);
    for (name, s) in servers {
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
    Ok(())
}

/// The line on tool definition tokens and what tool search holds back.
fn print_budget(out: &mut impl Write, budget: &ToolBudget, mode: &str) -> anyhow::Result<()> {
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
    Ok(())
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
