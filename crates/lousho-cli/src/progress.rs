//! A spinner on stderr while something slow happens (MCP servers connecting).

use std::io::{IsTerminal, Write};
use std::time::Duration;
use tokio::sync::oneshot;

/// Spins until dropped; then clears its line. When stderr is not a
/// terminal it prints the message once instead.
pub struct Spinner {
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Spinner {
    /// Starts spinning with `message`.
    #[allow(clippy::print_stderr)]
    pub fn start(message: String) -> Self {
        if !std::io::stderr().is_terminal() {
            eprintln!("{message}…");
            return Self {
                stop: None,
                task: None,
            };
        }
        let (stop, mut stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
            let mut i = 0;
            loop {
                let frame = FRAMES[i % FRAMES.len()];
                {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\r\x1b[2K{frame} {message}");
                    let _ = err.flush();
                }
                i += 1;
                tokio::select! {
                    _ = &mut stopped => break,
                    _ = tokio::time::sleep(Duration::from_millis(80)) => {}
                }
            }
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        });
        Self {
            stop: Some(stop),
            task: Some(task),
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            // Let it clear its line; it stops within one frame.
            std::thread::sleep(Duration::from_millis(5));
            drop(task);
        }
    }
}
