//! `lousho resume`: go on with a run that paused for approval, or one that
//! was interrupted (its process killed, or it failed) from its step journal.

use crate::cli::ResumeArgs;
use crate::exit::Usage;
use crate::load::{self, Approvals, ModelChoice};
use crate::run::{Origin, finish, print_stream};
use crate::signals::Signals;
use lousho::policy::Decisions;
use lousho::session::{JournalStatus, JournaledRun, PausedRun, SessionStore};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Runs the command: a paused run (by id), or an interrupted one (by id or
/// `--session`).
pub async fn run(
    args: ResumeArgs,
    store_flag: Option<&str>,
    tokens: Option<&Path>,
    catalog: bool,
    signals: &Signals,
) -> anyhow::Result<ExitCode> {
    let store = crate::store::open(store_flag).await?;
    let paused = match &args.id {
        Some(id) => store.load_run(id).await?,
        None => None,
    };
    let (saved, context) = match paused {
        Some(paused) => {
            let context = paused.context.clone();
            (Saved::Paused(Box::new(paused)), context)
        }
        None => {
            let run = interrupted_run(&store, &args).await?;
            let context = run.context.clone();
            (Saved::Interrupted(Box::new(run)), context)
        }
    };
    let id = saved.id(&args);
    if let Some(session) = paused_session(&saved)
        && let Some(run) = resumed_before(&store, &session, &id).await?
    {
        return Err(Usage(format!(
            "the paused run `{id}` was resumed already, as run `{run}`, which stopped without \
             finishing; `lousho resume {run}` goes on with it"
        ))
        .into());
    }
    let Some(spec_path) = context["spec"].as_str().map(PathBuf::from) else {
        return Err(Usage(format!(
            "the run `{id}` does not name a spec file (it was not saved by `lousho run`)"
        ))
        .into());
    };
    let decisions = match &saved {
        Saved::Paused(paused) => Some(decide(&paused.state, &args)?),
        Saved::Interrupted(_) if !args.approve.is_empty() || !args.deny.is_empty() => {
            return Err(Usage(format!(
                "the interrupted run `{id}` has no call waiting for approval; resume it without \
                 --approve/--deny (a write that was running when it stopped is asked about then)"
            ))
            .into());
        }
        Saved::Interrupted(_) => None,
    };
    let model = args
        .model
        .clone()
        .or_else(|| context["model"].as_str().map(str::to_owned));
    let spec = load::spec(&spec_path)?;
    let choice = model
        .as_deref()
        .map_or(ModelChoice::Spec, ModelChoice::Named);
    let chosen = context["agent"].as_str().map(str::to_owned);
    let (agent, mcp, team) = load::build_chosen(
        &spec,
        chosen.as_deref(),
        choice,
        Approvals::TerminalOrPause,
        tokens,
        catalog,
        None,
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
        let name = match &saved {
            Saved::Paused(paused) => paused.session.clone(),
            Saved::Interrupted(run) => Some(run.session.clone()),
        };
        // A resumed paused run's journal names the paused run, so a crash
        // during it leaves no second way to go on.
        let mut context = origin.context();
        if let Saved::Paused(_) = &saved {
            context[RESUMES] = serde_json::Value::from(id.clone());
        }
        let session = match name {
            Some(name) => Some(
                agent
                    .open_session(store.clone(), name)
                    .await?
                    .with_lease(crate::store::lease()?)
                    .with_run_context(context),
            ),
            None => None,
        };
        let request = match (&saved, &session, decisions) {
            (Saved::Paused(paused), Some(session), Some(decisions)) => {
                session.resume(paused.state.clone(), decisions)
            }
            (Saved::Paused(paused), None, Some(decisions)) => {
                agent.resume(paused.state.clone(), decisions)
            }
            (Saved::Interrupted(run), Some(session), _) => session.resume_interrupted(&run.id),
            _ => anyhow::bail!("the saved run `{id}` cannot be resumed"),
        };
        let reply = print_stream(request.stream(), agent.model_name(), false).await?;
        match &saved {
            // The run went on (and may have paused again under a new id).
            Saved::Paused(_) => {
                store.delete_run(&id).await?;
            }
            // It was a paused run's resumption, which is over now.
            Saved::Interrupted(run) => {
                if let Some(paused) = run.context[RESUMES].as_str() {
                    store.delete_run(paused).await?;
                }
            }
        }
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

/// The key of a journaled run's context naming the paused run it resumed.
const RESUMES: &str = "resumes";

/// The session of a paused run.
fn paused_session(saved: &Saved) -> Option<String> {
    match saved {
        Saved::Paused(paused) => paused.session.clone(),
        Saved::Interrupted(_) => None,
    }
}

/// A journaled run of `session` that resumed the paused run `paused` and
/// did not finish.
async fn resumed_before(
    store: &Arc<dyn SessionStore>,
    session: &str,
    paused: &str,
) -> anyhow::Result<Option<String>> {
    for run in store.journal_list(Some(session)).await? {
        if let Some(journaled) = store.journal_load(&run.id).await?
            && journaled.context[RESUMES].as_str() == Some(paused)
        {
            return Ok(Some(run.id));
        }
    }
    Ok(None)
}

/// A run saved in the store.
enum Saved {
    /// Paused for approval.
    Paused(Box<PausedRun>),
    /// Stopped without finishing (its step journal).
    Interrupted(Box<JournaledRun>),
}

impl Saved {
    fn id(&self, args: &ResumeArgs) -> String {
        match self {
            Saved::Paused(_) => args.id.clone().unwrap_or_default(),
            Saved::Interrupted(run) => run.id.clone(),
        }
    }
}

/// The interrupted run the arguments name: by id, or the newest of
/// `--session`.
async fn interrupted_run(
    store: &Arc<dyn SessionStore>,
    args: &ResumeArgs,
) -> anyhow::Result<JournaledRun> {
    let id = match (&args.id, &args.session) {
        (Some(id), _) => id.clone(),
        (None, Some(session)) => {
            let runs = store.journal_list(Some(session)).await?;
            // An interrupted run; else one that still runs (its process may
            // have died within its lease time: resuming waits for the lease).
            let Some(run) = runs
                .iter()
                .find(|r| r.status == JournalStatus::Interrupted)
                .or_else(|| runs.first())
            else {
                return Err(Usage(format!(
                    "session `{session}` has no interrupted run; `lousho sessions show {session}` lists its runs"
                ))
                .into());
            };
            run.id.clone()
        }
        (None, None) => return Err(Usage("name a run id or --session NAME".into()).into()),
    };
    match store.journal_load(&id).await? {
        Some(run) => Ok(run),
        None => Err(Usage(format!(
            "no paused run or interrupted run `{id}` in the session store; `lousho run` prints a \
             paused run's id, `lousho sessions show NAME` lists a session's interrupted runs \
             (resuming a run removes it)"
        ))
        .into()),
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
