//! SIGINT and SIGTERM. Once installed (first thing in `main`), neither kills
//! lousho outright: each command stops its work, closes its agent (so every
//! stdio server's process group gets SIGTERM, then SIGKILL after the grace
//! period, and is reaped) and exits 130 (SIGINT) or 143 (SIGTERM).

use std::process::ExitCode;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// A signal that stops a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Signal {
    /// 128 + the signal's number, as shells report it.
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(match self {
            Signal::Interrupt => 130,
            Signal::Terminate => 143,
        })
    }
}

/// How many of each signal arrived so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    interrupts: u64,
    terminates: u64,
}

/// Signals as they arrive; cheap to clone.
#[derive(Clone)]
pub struct Signals {
    seen: watch::Receiver<Seen>,
}

impl Signals {
    /// Takes SIGINT and SIGTERM over from their default action (must run
    /// inside the runtime).
    pub fn install() -> std::io::Result<Self> {
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let (tx, rx) = watch::channel(Seen::default());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(()) = int.recv() => tx.send_modify(|s| s.interrupts += 1),
                    Some(()) = term.recv() => tx.send_modify(|s| s.terminates += 1),
                    else => break,
                }
            }
        });
        Ok(Self { seen: rx })
    }

    /// The counts now, to wait for signals after this point.
    pub fn now(&self) -> Seen {
        *self.seen.borrow()
    }

    /// The first signal since `since` (SIGTERM first when both came).
    pub async fn after(&self, since: Seen) -> Signal {
        let mut rx = self.seen.clone();
        let seen = rx
            .wait_for(|s| s.interrupts > since.interrupts || s.terminates > since.terminates)
            .await
            .map(|s| *s);
        match seen {
            Ok(s) if s.terminates > since.terminates => Signal::Terminate,
            Ok(_) => Signal::Interrupt,
            // The listener is gone (the runtime is shutting down): never.
            Err(_) => std::future::pending().await,
        }
    }

    /// The first signal since installation.
    pub async fn any(&self) -> Signal {
        self.after(Seen::default()).await
    }

    /// The first SIGTERM since installation (the prompt handles SIGINT itself).
    pub async fn terminate(&self) -> Signal {
        let mut rx = self.seen.clone();
        match rx.wait_for(|s| s.terminates > 0).await {
            Ok(_) => Signal::Terminate,
            Err(_) => std::future::pending().await,
        }
    }
}
