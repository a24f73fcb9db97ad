//! `lousho call`: one tool call through the agent's permission and approval
//! checks. A scripted model makes exactly that call, so the call takes the
//! same path as one the model makes.

use crate::cli::CallArgs;
use crate::exit;
use crate::load::{self, Approvals, ModelChoice};
use crate::servers::Servers;
use crate::signals::Signals;
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

/// Connects the servers and makes the call.
async fn call(
    agent: &lousho::Agent,
    mcp: Option<&Servers>,
    spec_path: &std::path::Path,
    tool: &str,
) -> anyhow::Result<lousho::Reply> {
    if let Some(mcp) = mcp
        && let Err(e) = load::connect(mcp, true).await
    {
        // Other servers' failures do not matter when the tool is there (a
        // built-in, or a tool of a server that is up).
        let has_tool = agent.tools().is_ok_and(|t| t.get(tool).is_some());
        if !has_tool || mcp.failed().is_empty() {
            return Err(e.into());
        }
        mcp.do_without_failed();
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
    Ok(agent.send("(lousho call)").await?)
}
