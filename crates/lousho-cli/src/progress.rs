//! Progress on stderr while something slow happens: MCP servers connecting,
//! tools running, the model thinking. An [`indicatif`] spinner when stderr is
//! a terminal; without one, a plain line once (`connecting MCP servers:
//! files…`) or nothing. Spinners never touch stdout and carry no colours
//! (so `NO_COLOR` has nothing to turn off); `lousho mcp` shows none.
//!
//! MCP servers' progress notifications about a call show on the spinner's
//! line ([`server_progress`]).
//!
//! One spinner at a time. A question on the terminal (an approval, a
//! server's form) takes it down first with [`hold_for_prompt`], and no
//! spinner starts while one is open.

mod activity;

pub use activity::Activity;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The spinner on screen (with its number and message), and how many
/// prompts are open.
struct Screen {
    shown: Option<(u64, ProgressBar, String)>,
    next: u64,
    prompts: usize,
}

static SCREEN: Mutex<Screen> = Mutex::new(Screen {
    shown: None,
    next: 0,
    prompts: 0,
});

fn screen() -> MutexGuard<'static, Screen> {
    SCREEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether spinners are drawn: stderr is a terminal that is not `TERM=dumb`.
pub fn enabled() -> bool {
    std::io::stderr().is_terminal() && std::env::var("TERM").ok().is_none_or(|t| t != "dumb")
}

/// A spinner line; cleared when dropped.
pub struct Spinner {
    bar: Option<(u64, ProgressBar)>,
}

impl Spinner {
    /// Spins with `message` on a terminal; otherwise prints `message…` once.
    #[allow(clippy::print_stderr)]
    pub fn start(message: String) -> Self {
        if !enabled() {
            eprintln!("{message}…");
            return Self { bar: None };
        }
        Self::quiet(message)
    }

    /// Spins with `message` on a terminal; otherwise shows nothing.
    pub fn quiet(message: String) -> Self {
        if !enabled() {
            return Self { bar: None };
        }
        let mut screen = screen();
        if screen.prompts > 0 {
            return Self { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_message(message.clone());
        bar.enable_steady_tick(Duration::from_millis(100));
        screen.next += 1;
        let id = screen.next;
        if let Some((_, old, _)) = screen.shown.replace((id, bar.clone(), message)) {
            old.finish_and_clear();
        }
        Self {
            bar: Some((id, bar)),
        }
    }

    /// Whether it is gone from the screen (a prompt took it down, or
    /// another spinner replaced it).
    pub fn is_gone(&self) -> bool {
        self.bar.as_ref().is_none_or(|(_, bar)| bar.is_finished())
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some((id, bar)) = self.bar.take() {
            bar.finish_and_clear();
            let mut screen = screen();
            if screen
                .shown
                .as_ref()
                .is_some_and(|(shown, _, _)| *shown == id)
            {
                screen.shown = None;
            }
        }
    }
}

/// Prints `line` on stderr, above the spinner when one is shown.
#[allow(clippy::print_stderr)]
pub fn eprint_line(line: &str) {
    let shown = screen().shown.as_ref().map(|(_, bar, _)| bar.clone());
    match shown {
        Some(bar) => bar.suspend(|| eprintln!("{line}")),
        None => eprintln!("{line}"),
    }
}

/// Says on stderr that the run waits for another run of its session.
pub fn session_busy(session: &str, holder: &str) {
    eprint_line(&format!(
        "session `{session}` is in use by another run ({holder}); waiting for it to finish, then continuing from its result"
    ));
}

/// While held, no spinner is shown (the one on screen is cleared).
pub struct PromptHold(());

/// Takes the spinner down for a question on the terminal.
pub fn hold_for_prompt() -> PromptHold {
    let mut screen = screen();
    screen.prompts += 1;
    if let Some((_, bar, _)) = screen.shown.take() {
        bar.finish_and_clear();
    }
    PromptHold(())
}

impl Drop for PromptHold {
    fn drop(&mut self) {
        let mut screen = screen();
        screen.prompts = screen.prompts.saturating_sub(1);
    }
}

/// A server's progress notification, shown after the spinner's message
/// (`running docs__index · docs 2/3 indexing part 2`); nothing off a terminal.
pub fn server_progress(update: lousho::mcp::ServerProgress) {
    let screen = screen();
    let Some((_, bar, message)) = &screen.shown else {
        return;
    };
    let count = match update.total {
        Some(total) => format!("{}/{}", number(update.progress), number(total)),
        None => number(update.progress),
    };
    let note = update
        .message
        .map(|m| format!(" {}", m.lines().next().unwrap_or_default()))
        .unwrap_or_default();
    bar.set_message(format!("{message} · {} {count}{note}", update.server));
}

/// `2`, `2.5`.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}
