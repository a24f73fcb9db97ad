//! `lousho run`: one message, or a multi-turn prompt.

use crate::cli::RunArgs;
use crate::exit;
use crate::load::{self, Approvals, ModelChoice};
use crate::servers::Servers;
use crate::signals::Signals;
use futures::StreamExt;
use lousho::agent::AgentStream;
use lousho::{Agent, AgentEvent, Reply};
use std::io::Write;
use std::process::ExitCode;

/// Runs the command.
pub async fn run(
    args: RunArgs,
    tokens: Option<&std::path::Path>,
    signals: &Signals,
) -> anyhow::Result<ExitCode> {
    let spec = load::spec(&args.spec)?;
    let model = args
        .model
        .as_deref()
        .map_or(ModelChoice::Spec, ModelChoice::Named);
    let (agent, mcp) = load::build(&spec, model, Approvals::Terminal, tokens)?;
    let one_message = args.message.is_some();
    // A signal stops the run (its stream is dropped, which cancels the model
    // and the tools) and closes the servers like the end of the command does.
    // The prompt takes SIGINT for itself (it cancels one answer); SIGTERM ends it.
    let work = async {
        if let Some(mcp) = &mcp {
            connect(mcp).await?;
        }
        match args.message {
            Some(message) => {
                let stream = agent.send(message.as_str()).stream();
                print_stream(stream).await.map(|_| ExitCode::from(exit::OK))
            }
            None => repl(&agent, signals).await,
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
    match outcome {
        Ok(result) => result,
        Err(signal) => Ok(signal.exit_code()),
    }
}

/// Connects the servers: those that fail are warnings while at least one is up.
async fn connect(mcp: &Servers) -> anyhow::Result<()> {
    if let Err(e) = load::connect(mcp, true).await {
        if mcp.failed().is_empty() || mcp.all_failed() {
            return Err(e.into());
        }
        mcp.do_without_failed();
    }
    Ok(())
}

/// Streams the answer to stdout and tool activity to stderr.
#[allow(clippy::print_stderr)]
pub async fn print_stream(mut stream: AgentStream) -> anyhow::Result<Reply> {
    let mut printed = false;
    let mut ends_with_newline = true;
    let mut out = std::io::stdout();
    while let Some(event) = stream.next().await {
        match event? {
            AgentEvent::TextDelta(text) => {
                write!(out, "{text}")?;
                out.flush()?;
                printed |= !text.is_empty();
                ends_with_newline = text.ends_with('\n');
            }
            AgentEvent::ToolCallStarted(call) => {
                eprintln!("→ {} {}", call.name, call.arguments);
            }
            AgentEvent::ToolCallFinished { call, output } => {
                let text = output.to_model_text();
                let first = text.lines().next().unwrap_or_default();
                let short: String = first.chars().take(100).collect();
                let more = if text.len() > short.len() { " …" } else { "" };
                let status = if output.is_error { "error" } else { "ok" };
                eprintln!("← {} {status}: {short}{more}", call.name);
            }
            AgentEvent::Done(reply) => {
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

/// A multi-turn prompt with line editing and history.
#[allow(clippy::print_stderr)]
async fn repl(agent: &Agent, signals: &Signals) -> anyhow::Result<ExitCode> {
    let session = agent.session();
    let history =
        std::env::var_os("HOME").map(|home| std::path::PathBuf::from(home).join(".lousho_history"));
    let mut editor = rustyline::DefaultEditor::new()?;
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    eprintln!(
        "Chatting with {} ({}). Ctrl-D to quit.",
        agent.name().unwrap_or("the agent"),
        agent.model_name()
    );
    loop {
        let (back, line) = tokio::task::spawn_blocking(move || {
            let line = editor.readline("> ");
            (editor, line)
        })
        .await?;
        editor = back;
        let line = match line {
            Ok(line) => line,
            Err(rustyline::error::ReadlineError::Interrupted) => continue,
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let message = line.trim();
        if message.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(message);
        let before = signals.now();
        tokio::select! {
            reply = print_stream(session.send(message).stream()) => {
                if let Err(e) = reply {
                    if exit::is_broken_pipe(&e) {
                        return Err(e);
                    }
                    eprintln!("error: {e}");
                }
            }
            _ = signals.after(before) => eprintln!("(cancelled)"),
        }
    }
    if let Some(path) = &history {
        let _ = editor.save_history(path);
    }
    Ok(ExitCode::from(exit::OK))
}
