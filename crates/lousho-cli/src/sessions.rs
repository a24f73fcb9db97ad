//! `lousho sessions list|show|rm`.

use crate::cli::SessionsCommand;
use crate::exit::{self, Usage};
use lousho::model::{Message, Part, Role};
use lousho::session::JournalStatus;
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

/// Runs the command.
pub async fn run(command: SessionsCommand, store_flag: Option<&str>) -> anyhow::Result<ExitCode> {
    let store = crate::store::open(store_flag).await?;
    let mut out = std::io::stdout().lock();
    match command {
        SessionsCommand::List { json } => {
            let sessions = store.list().await?;
            if json {
                let list: Vec<_> = sessions
                    .iter()
                    .map(|s| {
                        json!({
                            "id": s.id,
                            "messages": s.version,
                            "created": unix_millis(s.created_at),
                            "updated": unix_millis(s.updated_at),
                        })
                    })
                    .collect();
                writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
            } else if sessions.is_empty() {
                writeln!(
                    out,
                    "no sessions (start one: lousho run SPEC --session NAME \"…\")"
                )?;
            } else {
                let mut table = crate::table::new(&["NAME", "MESSAGES", "UPDATED"]);
                for s in &sessions {
                    table.add_row(vec![s.id.clone(), s.version.to_string(), ago(s.updated_at)]);
                }
                if let Some(column) = table.column_mut(1) {
                    column.set_cell_alignment(comfy_table::CellAlignment::Right);
                }
                writeln!(out, "{}", crate::table::render(&mut table))?;
            }
        }
        SessionsCommand::Show { name, json } => {
            let Some(session) = store.load(&name).await? else {
                return Err(no_session(&name));
            };
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&session.messages)?)?;
            } else {
                for message in &session.messages {
                    print_message(&mut out, message)?;
                }
                for run in store.journal_list(Some(&name)).await? {
                    let status = run.status.as_str();
                    let steps = run.steps;
                    let how = match run.status {
                        JournalStatus::Interrupted => {
                            format!(": go on with lousho resume {}", run.id)
                        }
                        _ => String::new(),
                    };
                    writeln!(
                        out,
                        "{status} run {} ({steps} steps, {}){how}",
                        run.id,
                        ago(run.updated_at)
                    )?;
                }
            }
        }
        SessionsCommand::Rm { name } => {
            if !store.delete(&name).await? {
                return Err(no_session(&name));
            }
            writeln!(out, "removed session `{name}`")?;
        }
    }
    Ok(ExitCode::from(exit::OK))
}

fn no_session(name: &str) -> anyhow::Error {
    Usage(format!(
        "no session `{name}` in the store; `lousho sessions list` shows them"
    ))
    .into()
}

fn print_message(out: &mut impl Write, message: &Message) -> std::io::Result<()> {
    let who = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    for part in &message.parts {
        match part {
            Part::Text { text } => writeln!(out, "{who}: {text}")?,
            Part::Image { mime_type, .. } => writeln!(out, "{who}: [image {mime_type}]")?,
            Part::ToolCall(call) => writeln!(out, "{who}: → {} {}", call.name, call.arguments)?,
            Part::ToolResult(result) => {
                let status = if result.output.is_error {
                    "error"
                } else {
                    "ok"
                };
                let text = result.output.to_model_text();
                writeln!(out, "{who}: ← {} {status}: {text}", result.name)?;
            }
            // Context compaction's summary: the replaced messages, counted
            // from 1 as shown above it, are still in the session.
            Part::Summary(summary) => writeln!(
                out,
                "summary of {} (by {}): {}",
                summary.replaced(),
                summary.model,
                summary.text
            )?,
            _ => writeln!(out, "{who}: [another kind of part]")?,
        }
    }
    Ok(())
}

fn unix_millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// "3 minutes ago" and the like.
fn ago(t: SystemTime) -> String {
    let secs = SystemTime::now()
        .duration_since(t)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    match secs {
        0..60 => "just now".into(),
        60..3600 => format!("{} min ago", secs / 60),
        3600..86_400 => format!("{} h ago", secs / 3600),
        _ => format!("{} days ago", secs / 86_400),
    }
}
