//! Linux: the stdio servers' whole process groups die even when lousho is
//! killed with SIGKILL.
//!
//! A server's parent-death signal (set by the library) reaches only the
//! server itself, not what it started (the `node` under `npx`). So the
//! process a user (or an MCP client) starts is a tiny supervisor: it runs the
//! real lousho as its only child, with SIGTERM as that child's parent-death
//! signal, forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to it, and exits with
//! its status. When the supervisor is SIGKILLed, the kernel sends the child
//! SIGTERM, and the child closes every server the way it does on any SIGTERM
//! (group SIGTERM, then SIGKILL after the grace). Stdin, stdout, stderr and
//! the terminal are inherited, not relayed.
//!
//! The limit: SIGKILL to both processes at once (`kill -9` of their process
//! group, the OOM killer choosing the child) still leaves grandchildren
//! behind. `LOUSHO_SUPERVISOR=0` turns the supervisor off.

use nix::sys::signal::{SigSet, Signal, kill};
use nix::unistd::{Pid, getpid, getppid};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitCode;

/// Set for the supervised child: the supervisor's pid.
const SUPERVISED: &str = "LOUSHO_SUPERVISED";
/// `0` turns the supervisor off.
const SWITCH: &str = "LOUSHO_SUPERVISOR";

fn forwarded() -> SigSet {
    let mut set = SigSet::empty();
    for signal in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        set.add(signal);
    }
    set
}

/// Whether this process is the supervised child (its parent is the
/// supervisor that started it; a stale variable inherited from further up
/// names another process).
pub fn is_supervised() -> bool {
    std::env::var(SUPERVISED)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .is_some_and(|pid| pid == getppid().as_raw())
}

/// In the supervised child, before anything else: SIGTERM when the
/// supervisor dies.
pub fn arm_parent_death() {
    if let Err(e) = nix::sys::prctl::set_pdeathsig(Signal::SIGTERM) {
        tracing::debug!(error = %e, "could not set the parent-death signal");
    }
}

/// In the supervised child, once its signal handlers are installed: the
/// signals the supervisor blocked (the mask is inherited) are let in.
pub fn unblock_signals() {
    if let Err(e) = forwarded().thread_unblock() {
        tracing::debug!(error = %e, "could not unblock signals");
    }
}

/// Runs this command again as a supervised child and returns its exit code;
/// `None` when supervision is off or the child could not start (then the
/// caller runs the command itself).
pub fn run() -> Option<ExitCode> {
    if std::env::var(SWITCH).is_ok_and(|v| v == "0") {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let signals = forwarded();
    // Blocked before the fork, so no signal is lost (and the forwarding
    // thread, started after, inherits the mask).
    signals.thread_block().ok()?;
    let spawned = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(SUPERVISED, getpid().as_raw().to_string())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(_) => {
            let _ = signals.thread_unblock();
            return None;
        }
    };
    let pid = Pid::from_raw(i32::try_from(child.id()).ok()?);
    std::thread::spawn(move || {
        while let Ok(signal) = signals.wait() {
            let _ = kill(pid, signal);
        }
    });
    let status = child.wait().ok()?;
    Some(match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        (None, Some(signal)) => ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)),
        (None, None) => ExitCode::from(1),
    })
}
