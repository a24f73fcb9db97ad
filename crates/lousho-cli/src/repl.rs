//! The interactive prompt of `lousho run`: line editing, history, and Tab
//! completion of `@server:uri` resources and `/server:prompt` prompts with
//! their arguments ([`complete`]).

mod complete;

use crate::exit;
use crate::run::{Origin, finish, print_stream};
use crate::servers::Servers;
use crate::signals::Signals;
use lousho::model::Message;
use lousho::{Agent, Session};
use std::process::ExitCode;

/// A multi-turn prompt with line editing and history.
#[allow(clippy::print_stderr)]
pub async fn repl(
    agent: &Agent,
    mcp: Option<&Servers>,
    session: &Session,
    origin: &Origin<'_>,
    signals: &Signals,
    thinking: bool,
) -> anyhow::Result<ExitCode> {
    let history =
        std::env::var_os("HOME").map(|home| std::path::PathBuf::from(home).join(".lousho_history"));
    let config = rustyline::Config::builder()
        .completion_type(rustyline::CompletionType::List)
        .build();
    let mut editor = rustyline::Editor::with_config(config)?;
    editor.set_helper(Some(complete::Helper::new(
        mcp.map(|m| m.client().clone()),
        tokio::runtime::Handle::current(),
    )));
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    eprintln!(
        "Chatting with {} ({}). Ctrl-D to quit.",
        agent.name().unwrap_or("the agent"),
        agent.model_name()
    );
    if mcp.is_some() {
        eprintln!(
            "`@server:uri` attaches a resource, `/server:prompt key=value …` runs a prompt; Tab completes them."
        );
    }
    if let Some(id) = session.id() {
        eprintln!(
            "Session `{id}`: {} earlier messages; each answer is saved.",
            session.history().len()
        );
    }
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
        let messages = match compose(mcp, message).await {
            Ok(messages) => messages,
            Err(e) => {
                eprintln!("error: {e:#}");
                continue;
            }
        };
        let before = signals.now();
        tokio::select! {
            reply = print_stream(session.send_messages(messages).stream(), agent.model_name(), thinking) => {
                let saved = match reply {
                    Ok(reply) => finish(reply, Some(session), origin).await.map(|_| ()),
                    Err(e) => Err(e),
                };
                if let Err(e) = saved {
                    if exit::is_broken_pipe(&e) {
                        return Err(e);
                    }
                    eprintln!("error: {e:#}");
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

/// What a typed line sends: a prompt's messages for `/server:name …`, else
/// the line with the resources it mentions attached.
async fn compose(mcp: Option<&Servers>, line: &str) -> anyhow::Result<Vec<Message>> {
    if let Some(call) = mcp.and_then(|m| crate::compose::prompt_line(m, line)) {
        return crate::compose::prompt_messages(mcp, &call?).await;
    }
    Ok(vec![crate::compose::message(mcp, line).await?])
}
