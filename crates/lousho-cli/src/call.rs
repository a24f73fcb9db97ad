//! `lousho call`: one tool call through the agent's permission and approval
//! checks. A scripted model makes exactly that call, so the call takes the
//! same path as one the model makes.

use crate::cli::CallArgs;
use crate::exit;
use crate::load::{self, Approvals, ModelChoice};
use crate::servers::Servers;
use crate::signals::Signals;
use lousho::mcp::ServerStatus;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::spec::{SpecError, SpecErrorKind};
use serde_json::Value;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs the command.
pub async fn run(
    args: CallArgs,
    tokens: Option<&std::path::Path>,
    catalog: bool,
    signals: &Signals,
) -> anyhow::Result<ExitCode> {
    let spec = load::spec(&args.spec)?;
    let input: Value = match &args.input {
        None => Value::Object(Default::default()),
        Some(text) => serde_json::from_str(text).map_err(|e| {
            anyhow::Error::new(e).context(exit::Usage(
                "the tool input is not valid JSON; pass an object such as '{\"path\": \".\"}'"
                    .into(),
            ))
        })?,
    };
    if !input.is_object() {
        return Err(exit::Usage(
            "the tool input must be a JSON object, such as '{\"path\": \".\"}'".into(),
        )
        .into());
    }
    let script = ScriptedModel::new([
        ScriptedTurn::tool_call(&args.tool, input),
        ScriptedTurn::text(""),
    ]);
    let (agent, mcp) = load::build(
        &spec,
        ModelChoice::Model(Arc::new(script)),
        Approvals::Terminal,
        tokens,
        catalog,
    )?;
    // A signal stops the call (the tool's request is cancelled) and closes
    // the servers like the end of the command does.
    let outcome = tokio::select! {
        r = call(&agent, mcp.as_ref(), &spec.path, &args.tool) => Ok(r),
        signal = signals.any() => Err(signal),
    };
    agent.close().await;
    let reply = match outcome {
        Ok(reply) => reply?,
        Err(signal) => return Ok(signal.exit_code()),
    };
    let Some(record) = reply.tool_calls.into_iter().next() else {
        anyhow::bail!("the tool was not called");
    };
    writeln!(
        std::io::stdout().lock(),
        "{}",
        record.output.to_model_text()
    )?;
    Ok(ExitCode::from(if record.output.is_error {
        exit::FAILED
    } else {
        exit::OK
    }))
}

/// Connects the server that owns the tool (none for a built-in or local
/// tool) and makes the call. Other servers are never needed: their failures
/// are warnings, at most.
async fn call(
    agent: &lousho::Agent,
    mcp: Option<&Servers>,
    spec_path: &std::path::Path,
    tool: &str,
) -> anyhow::Result<lousho::Reply> {
    if let Some(mcp) = mcp {
        let owner = if agent.tool(tool).is_some() {
            None
        } else {
            find_owner(mcp, tool).await?
        };
        mcp.use_only(owner);
    }
    let tools = agent.tools()?;
    if tools.get(tool).is_none() {
        let names: Vec<String> = tools.iter().map(|t| t.spec().name.clone()).collect();
        let err = SpecError::from_parts(
            spec_path,
            SpecErrorKind::Invalid(format!(
                "the agent has no tool `{tool}`; its tools are: {}",
                names.join(", ")
            )),
        );
        return Err(err.into());
    }
    let _spinner = crate::progress::Spinner::quiet(format!("running {tool}"));
    Ok(agent.send("(lousho call)").await?)
}

/// The server whose tools include `tool`, connected: the one whose manifest
/// lists it, else the ones its name's prefix names, else the others whose
/// tools are not known yet (in parallel). A server that cannot connect is a warning unless it is the
/// only one that could own the tool.
#[allow(clippy::print_stderr)]
async fn find_owner(mcp: &Servers, tool: &str) -> anyhow::Result<Option<String>> {
    let client = mcp.client();
    let has = |server: &str| {
        client
            .server_tools(server)
            .is_ok_and(|tools| tools.contains(tool))
    };
    let candidates = client.servers_for_tool(tool);
    let mut first_error = None;
    for server in &candidates {
        match client.connect_server(server).await {
            Ok(()) if has(server) => return Ok(Some(server.clone())),
            Ok(()) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        // The server the tool's name points to is down.
        return Err(e.into());
    }
    // The servers whose tools are not known yet (known ones, live or from a
    // manifest, do not have it).
    let status = client.status();
    let others: Vec<String> = client
        .server_names()
        .filter(|s| !candidates.iter().any(|c| c == s))
        .filter(|s| {
            !matches!(
                status.get(*s),
                Some(ServerStatus::Connected | ServerStatus::Cataloged)
            )
        })
        .map(str::to_owned)
        .collect();
    let results = futures::future::join_all(others.iter().map(|s| client.connect_server(s))).await;
    let mut owner = None;
    for (server, result) in others.iter().zip(results) {
        match result {
            Ok(()) if owner.is_none() && has(server) => owner = Some(server.clone()),
            Ok(()) => {}
            Err(e) => eprintln!("warning: MCP server `{server}` could not connect: {e}"),
        }
    }
    Ok(owner)
}
