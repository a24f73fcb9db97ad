//! `lousho resume`: go on with a run that paused for approval.

use crate::cli::ResumeArgs;
use crate::exit::Usage;
use crate::load::{self, Approvals, ModelChoice};
use crate::run::{Origin, finish, print_stream};
use crate::signals::Signals;
use lousho::policy::Decisions;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Runs the command.
pub async fn run(
    args: ResumeArgs,
    store_flag: Option<&str>,
    tokens: Option<&Path>,
    catalog: bool,
    signals: &Signals,
) -> anyhow::Result<ExitCode> {
    let store = crate::store::open(store_flag).await?;
    let Some(paused) = store.load_run(&args.id).await? else {
        return Err(Usage(format!(
            "no paused run `{}` in the session store; `lousho run` prints the id when a run pauses \
             (and resuming a run removes it)",
            args.id
        ))
        .into());
    };
    let Some(spec_path) = paused.context["spec"].as_str().map(PathBuf::from) else {
        return Err(Usage(format!(
            "the paused run `{}` does not name a spec file (it was not saved by `lousho run`)",
            args.id
        ))
        .into());
    };
    let decisions = decide(&paused.state, &args)?;
    let model = args
        .model
        .clone()
        .or_else(|| paused.context["model"].as_str().map(str::to_owned));
    let spec = load::spec(&spec_path)?;
    let choice = model
        .as_deref()
        .map_or(ModelChoice::Spec, ModelChoice::Named);
    let chosen = paused.context["agent"].as_str().map(str::to_owned);
    let (agent, mcp, team) = load::build_chosen(
        &spec,
        chosen.as_deref(),
        choice,
        Approvals::TerminalOrPause,
        tokens,
        catalog,
    )?;
    let origin = Origin {
        spec: spec_path,
        model,
        agent: chosen,
        store_flag,
    };
    let work = async {
        if let Some(mcp) = &mcp {
            crate::run::connect(mcp).await?;
        }
        let session = match &paused.session {
            Some(name) => Some(agent.open_session(store.clone(), name.as_str()).await?),
            None => None,
        };
        let request = match &session {
            Some(session) => session.resume(paused.state.clone(), decisions),
            None => agent.resume(paused.state.clone(), decisions),
        };
        let reply = print_stream(request.stream(), agent.model_name(), false).await?;
        // The run went on (and may have paused again under a new id).
        store.delete_run(&args.id).await?;
        finish(reply, session.as_ref(), &origin).await
    };
    let outcome = tokio::select! {
        r = work => Ok(r),
        signal = signals.any() => Err(signal),
    };
    agent.close().await;
    team.close().await;
    match outcome {
        Ok(result) => result,
        Err(signal) => Ok(signal.exit_code()),
    }
}

/// The answers: each pending call of a tool named by --approve is approved,
/// by --deny denied; the rest are denied. A named tool with no pending call
/// is a usage error (a typo would otherwise deny silently).
fn decide(state: &lousho::RunState, args: &ResumeArgs) -> anyhow::Result<Decisions> {
    let pending: BTreeSet<&str> = state.pending().map(|r| r.tool_name.as_str()).collect();
    let list = pending.iter().copied().collect::<Vec<_>>().join(", ");
    if args.approve.is_empty() && args.deny.is_empty() {
        return Err(Usage(format!(
            "say what to do with the pending calls: --approve TOOL or --deny TOOL (pending: {list})"
        ))
        .into());
    }
    for tool in args.approve.iter().chain(&args.deny) {
        if !pending.contains(tool.as_str()) {
            return Err(Usage(format!(
                "`{tool}` has no call waiting for approval in this run (pending: {list})"
            ))
            .into());
        }
    }
    if let Some(both) = args.approve.iter().find(|t| args.deny.contains(t)) {
        return Err(Usage(format!("`{both}` is both approved and denied")).into());
    }
    let mut decisions = Decisions::new();
    for request in state.pending() {
        if args.approve.contains(&request.tool_name) {
            decisions = decisions.approve(&request.call_id);
        } else {
            decisions = decisions.deny(
                &request.call_id,
                "denied on the command line (lousho resume)",
            );
        }
    }
    Ok(decisions)
}
