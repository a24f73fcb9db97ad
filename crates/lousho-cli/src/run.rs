//! `lousho run`: one message, or a multi-turn prompt.

use crate::cassette::RunCassette;
use crate::cli::RunArgs;
use crate::exit;
use crate::load::{self, Approvals, ModelChoice};
use crate::progress::{self, Activity};
use crate::servers::Servers;
use crate::signals::Signals;
use futures::StreamExt;
use lousho::agent::{AgentStream, RunStatus};
use lousho::session::{PausedRun, SessionStore};
use lousho::{AgentEvent, Reply, Session};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs the command.
pub async fn run(
    args: RunArgs,
    store_flag: Option<&str>,
    tokens: Option<&Path>,
    catalog: bool,
    signals: &Signals,
) -> anyhow::Result<ExitCode> {
    let spec = load::spec(&args.spec)?;
    let model = args
        .model
        .as_deref()
        .map_or(ModelChoice::Spec, ModelChoice::Named);
    let tape = RunCassette::from_args(&args)?;
    let (agent, mcp, team) = load::build_chosen(
        &spec,
        args.agent.as_deref(),
        model,
        Approvals::TerminalOrPause,
        tokens,
        // Through a cassette every server connects (and is recorded or
        // replayed) as the run goes, never from a cached manifest.
        catalog && tape.is_none(),
        tape.as_ref().map(RunCassette::cassette),
    )?;
    let prompt = args
        .prompt
        .as_deref()
        .map(crate::compose::parse_prompt)
        .transpose()?;
    let given = args.message.is_some() || prompt.is_some();
    // A replay without a message sends the recorded one.
    let replaying = tape.as_ref().is_some_and(RunCassette::is_replaying);
    let one_message = given || replaying;
    let json = args.json || args.output == crate::cli::Output::Json;
    let thinking = args.thinking;
    if tape.is_some() && !one_message {
        anyhow::bail!(crate::exit::Usage(
            "--record needs a MESSAGE or --prompt (an interactive run is not recorded): lousho run SPEC \"…\" --record FILE".into()
        ));
    }
    if json && !one_message {
        anyhow::bail!(crate::exit::Usage(
            "--output json needs a MESSAGE or --prompt (the interactive prompt is for people): lousho run SPEC \"…\" --json".into()
        ));
    }
    let origin = Origin {
        spec: std::path::absolute(&args.spec)?,
        model: args.model.clone(),
        agent: args.agent.clone(),
        store_flag,
    };
    let session = match &args.session {
        Some(name) => {
            let store = crate::store::open(store_flag).await?;
            let session = agent.open_session(store, name.as_str()).await?;
            Some(
                session
                    .with_lease(crate::store::lease()?)
                    .with_run_context(origin.context()),
            )
        }
        None => None,
    };
    // A signal stops the run (its stream is dropped, which cancels the model
    // and the tools) and closes the servers like the end of the command does.
    // The prompt takes SIGINT for itself (it cancels one answer); SIGTERM ends it.
    let work = async {
        if let Some(mcp) = &mcp {
            connect(mcp).await?;
        }
        if one_message {
            let mut messages = match &prompt {
                Some(call) => crate::compose::prompt_messages(mcp.as_ref(), call).await?,
                None => Vec::new(),
            };
            if let Some(message) = &args.message {
                messages.push(crate::compose::message(mcp.as_ref(), message).await?);
            }
            if let Some(tape) = &tape {
                if given {
                    tape.set_input(&messages);
                } else {
                    messages = tape.recorded_input()?;
                }
            }
            let request = match &session {
                Some(session) => session.send_messages(messages),
                None => agent.send_messages(messages),
            };
            {
                let reply = if json {
                    crate::run_json::print_stream(request.stream(), agent.model_name(), thinking)
                        .await
                } else {
                    print_stream(request.stream(), agent.model_name(), thinking).await
                };
                let reply = match &tape {
                    Some(tape) => tape.finish(reply)?,
                    None => reply?,
                };
                finish(reply, session.as_ref(), &origin).await
            }
        } else {
            let session = session.clone().unwrap_or_else(|| agent.session());
            crate::repl::repl(&agent, mcp.as_ref(), &session, &origin, signals, thinking).await
        }
    };
    let outcome = if one_message {
        tokio::select! {
            r = work => Ok(r),
            signal = signals.any() => Err(signal),
        }
    } else {
        tokio::select! {
            r = work => Ok(r),
            signal = signals.terminate() => Err(signal),
        }
    };
    agent.close().await;
    team.close().await;
    match outcome {
        Ok(result) => result,
        Err(signal) => Ok(signal.exit_code()),
    }
}

/// Where a run came from: what `lousho resume` needs to build its agent again.
pub struct Origin<'a> {
    /// The spec file (absolute).
    pub spec: std::path::PathBuf,
    /// The --model override.
    pub model: Option<String>,
    /// The --agent choice.
    pub agent: Option<String>,
    /// The --store flag.
    pub store_flag: Option<&'a str>,
}

impl Origin<'_> {
    /// What a saved run keeps to build its agent again (a paused run's
    /// context, an interrupted run's journal notes).
    pub fn context(&self) -> serde_json::Value {
        json!({
            "spec": self.spec.to_string_lossy(),
            "model": self.model,
            "agent": self.agent,
        })
    }
}

/// The exit code for a finished reply; a paused one is saved first, with
/// how to go on printed on stderr.
#[allow(clippy::print_stderr)]
pub async fn finish(
    reply: Reply,
    session: Option<&Session>,
    origin: &Origin<'_>,
) -> anyhow::Result<ExitCode> {
    if let RunStatus::BudgetExceeded { limit, scope } = reply.status {
        eprintln!(
            "stopped: the run reached its budget's {} limit ({scope:?} budget; {} turns, {} tokens in, {} out)",
            limit.as_str(),
            reply.turns,
            reply.usage.input_tokens,
            reply.usage.output_tokens,
        );
        return Ok(ExitCode::from(exit::BUDGET));
    }
    if reply.status != RunStatus::Interrupted {
        return Ok(ExitCode::from(exit::OK));
    }
    save_paused(reply, session, origin).await?;
    Ok(ExitCode::from(exit::PAUSED))
}

/// Saves a paused run in the store and prints how to resume it.
#[allow(clippy::print_stderr)]
async fn save_paused(
    reply: Reply,
    session: Option<&Session>,
    origin: &Origin<'_>,
) -> anyhow::Result<()> {
    let Some(state) = reply.state else {
        anyhow::bail!("the run paused without a state to resume it from");
    };
    let store: Arc<dyn SessionStore> = match session.and_then(|s| s.store()) {
        Some(store) => store.clone(),
        None => crate::store::open(origin.store_flag).await?,
    };
    let mut tools: Vec<&str> = reply.pending.iter().map(|r| r.tool_name.as_str()).collect();
    tools.dedup();
    let mut paused = PausedRun::new(state).context(origin.context());
    if let Some(id) = session.and_then(|s| s.id()) {
        paused = paused.session(id);
    }
    let id = lousho::session::new_run_id();
    store.save_run(&id, &paused).await?;
    // A file path is shown; a URL may hold a password, so it is not.
    let store_arg = match origin.store_flag {
        Some(url) if url.contains("://") => " --store <URL>".to_owned(),
        Some(path) => format!(" --store {}", shell_word(path)),
        None => String::new(),
    };
    let names = tools.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>();
    eprintln!(
        "paused: {} needs approval and stdin is not a terminal; the run is saved as {id}. Go on with:",
        names.join(", ")
    );
    for tool in &tools {
        eprintln!("  lousho{store_arg} resume {id} --approve {tool}");
        eprintln!("  lousho{store_arg} resume {id} --deny {tool}");
    }
    Ok(())
}

/// `s` quoted for a POSIX shell when it needs to be.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Connects the servers: those that fail are warnings while at least one is up.
pub async fn connect(mcp: &Servers) -> anyhow::Result<()> {
    if let Err(e) = load::connect(mcp, true, false).await {
        if mcp.failed().is_empty() || mcp.all_failed() {
            return Err(e.into());
        }
        mcp.do_without_failed();
    }
    Ok(())
}

/// Streams the answer to stdout and tool activity to stderr (with a spinner
/// on a terminal while the model or the tools work); with `thinking`, the
/// model's thinking to stderr, line by line, each marked `· `.
pub async fn print_stream(
    mut stream: AgentStream,
    model: &str,
    thinking: bool,
) -> anyhow::Result<Reply> {
    let mut thought = Thought::default();
    let mut printed = false;
    let mut ends_with_newline = true;
    let mut out = std::io::stdout();
    let mut activity = Activity::new(model, true);
    activity.waiting();
    while let Some(event) = stream.next().await {
        let event = event?;
        match &event {
            AgentEvent::ThinkingDelta(text) if thinking => thought.push(text),
            _ => thought.flush(),
        }
        match event {
            AgentEvent::TextDelta(text) => {
                activity.writing(false);
                write!(out, "{text}")?;
                out.flush()?;
                printed |= !text.is_empty();
                ends_with_newline = text.ends_with('\n');
                activity.writing(ends_with_newline);
            }
            AgentEvent::ToolCallStarted(call) => {
                progress::eprint_line(&format!("→ {} {}", call.name, call.arguments));
                activity.call_started(&call.id, &call.name);
            }
            AgentEvent::ToolCallFinished { call, output } => {
                activity.call_finished(&call.id);
                let text = output.to_model_text();
                let first = text.lines().next().unwrap_or_default();
                let short: String = first.chars().take(100).collect();
                let more = if text.len() > short.len() { " …" } else { "" };
                let status = if output.is_error { "error" } else { "ok" };
                progress::eprint_line(&format!("← {} {status}: {short}{more}", call.name));
            }
            AgentEvent::TurnFinished { .. } => activity.waiting(),
            AgentEvent::Throttled { model, wait } => activity.throttled(&model, wait),
            AgentEvent::ModelFailover { from, to, reason } => {
                progress::eprint_line(&format!("! {from} failed ({reason}); asking {to}"));
                activity.failed_over(&to);
            }
            AgentEvent::SessionBusy { session, holder } => {
                progress::session_busy(&session, &holder);
                activity.session_busy(&session);
            }
            AgentEvent::Compacted { summary, .. } => {
                progress::eprint_line(&format!(
                    "compacted {} (by {})",
                    summary.replaced(),
                    summary.model
                ));
            }
            AgentEvent::Done(reply) => {
                activity.stop();
                if !printed && !reply.text.is_empty() {
                    write!(out, "{}", reply.text)?;
                    ends_with_newline = reply.text.ends_with('\n');
                }
                if !ends_with_newline {
                    writeln!(out)?;
                }
                out.flush()?;
                return Ok(*reply);
            }
            _ => {}
        }
    }
    anyhow::bail!("the run ended without a reply")
}

/// Thinking on its way to stderr: whole lines as they complete.
#[derive(Default)]
struct Thought(String);

impl Thought {
    fn push(&mut self, text: &str) {
        self.0.push_str(text);
        while let Some(end) = self.0.find('\n') {
            let line: String = self.0.drain(..=end).collect();
            progress::eprint_line(&format!("· {}", line.trim_end()));
        }
    }

    fn flush(&mut self) {
        if !self.0.trim().is_empty() {
            progress::eprint_line(&format!("· {}", self.0.trim_end()));
        }
        self.0.clear();
    }
}
